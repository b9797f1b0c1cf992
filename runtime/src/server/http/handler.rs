//! The server as rmcp's streamable HTTP service serves it: every request rmcp hands over first
//! gives back the place it held among the bodies being parsed ([`ParsePlace`]), then goes to
//! the core unchanged. The place covers the body's two parses (the body layer's, then rmcp's)
//! and what rmcp builds of the message until it hands the request over, so that a flood of
//! large bodies is never held parsed more than `max_parsing` at a time; it never covers the
//! request's own time (a long call, a stream held open), whatever the method.

// Logging, sampling and roots are deprecated by SEP-2577 in rmcp; they are still served.
#![allow(deprecated)]

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::OwnedSemaphorePermit;

use crate::server::core::Server;
use crate::server::user::user_requests;

/// A request's place among the bodies being parsed, in its extensions until rmcp hands the
/// request over.
#[derive(Clone, Default)]
pub(crate) struct ParsePlace(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl ParsePlace {
    pub(crate) fn new(place: OwnedSemaphorePermit) -> Self {
        ParsePlace(Arc::new(Mutex::new(Some(place))))
    }

    /// Gives the place back (dropping it, or the request, does too).
    pub(crate) fn release(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// Gives back the parse place of the request whose extensions these are.
fn handed_over(extensions: &Extensions) {
    let parts = extensions.get::<http::request::Parts>();
    if let Some(place) = parts.and_then(|parts| parts.extensions.get::<ParsePlace>()) {
        place.release();
    }
}

/// The server, as the streamable HTTP service calls it.
#[derive(Clone)]
pub(crate) struct Endpoint(pub(crate) Server);

macro_rules! hand_over {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        $(
            async fn $method(
                &self,
                $($arg: $ty,)*
                context: RequestContext<RoleServer>,
            ) -> Result<$out, ErrorData> {
                handed_over(&context.extensions);
                self.0.$method($($arg,)* context).await
            }
        )*
    };
}

impl ServerHandler for Endpoint {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    user_requests!(hand_over);

    hand_over! {
        initialize(request: InitializeRequestParams) -> InitializeResult;
        set_level(request: SetLevelRequestParams) -> ();
        on_custom_request(request: CustomRequest) -> CustomResult;
        call_tool(request: CallToolRequestParams) -> CallToolResponse;
        list_tools(request: Option<PaginatedRequestParams>) -> ListToolsResult;
        ping() -> ();
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        handed_over(&context.request_context().extensions);
        self.0.listen(context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        handed_over(&context.extensions);
        self.0.on_initialized(context).await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        handed_over(&context.extensions);
        self.0.on_cancelled(notification, context).await
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        handed_over(&context.extensions);
        self.0.on_progress(notification, context).await
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        handed_over(&context.extensions);
        self.0.on_roots_list_changed(context).await
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        handed_over(&context.extensions);
        self.0.on_custom_notification(notification, context).await
    }
}
