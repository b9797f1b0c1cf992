//! The user's own rmcp `ServerHandler`, for everything that is not a tool: prompts, resources,
//! completion, `logging/setLevel`, tasks, skills, custom requests and the notifications a client
//! sends (subscriptions are the server's: `changes`). Which requests reach it is the table's
//! (`methods`). A server built with
//! [`ServerBuilder::handler`](super::ServerBuilder::handler) hands each such request to it, and
//! serves it through the same transports, limits and shutdown as its tools.
//!
//! rmcp's trait returns `impl Future`, so it is not object safe: [`UserHandler`] is the same set
//! of methods with boxed futures, implemented for every `ServerHandler`.

// Logging, sampling and roots are deprecated by SEP-2577 in rmcp; they are still served.
#![allow(deprecated)]

use std::borrow::Cow;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::tool::BoxFuture;

use super::methods::{client_requests, not_found};

macro_rules! user_handler_trait {
    (
        server { $($_sv:ident: $_sm:ident,)* }
        tools { $($_tv:ident: $_tm:ident,)* }
        user { $($_uv:ident: $_um:ident => $method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)* }
    ) => {
        /// A user's `ServerHandler`, its futures boxed.
        pub(crate) trait UserHandler: Send + Sync + 'static {
            /// Its `get_info`: what it serves, which the server merges with its tools.
            fn info(&self) -> ServerConfig;
            /// The protocol versions it supports.
            fn versions(&self) -> Cow<'static, [ProtocolVersion]>;
            /// Its answer to `initialize`, before the server's tools are merged in.
            fn initialize(
                &self,
                request: InitializeRequestParams,
                context: RequestContext<RoleServer>,
            ) -> BoxFuture<'_, Result<InitializeResult, ErrorData>>;
            /// `logging/setLevel`, after the server took the session's level.
            fn set_level(
                &self,
                request: SetLevelRequestParams,
                context: RequestContext<RoleServer>,
            ) -> BoxFuture<'_, Result<(), ErrorData>>;
            /// A request of a method MCP does not define.
            fn custom(
                &self,
                request: CustomRequest,
                context: RequestContext<RoleServer>,
            ) -> BoxFuture<'_, Result<CustomResult, ErrorData>>;
            /// Tells it of a notification.
            fn notified(
                &self,
                notification: Notification,
                context: NotificationContext<RoleServer>,
            ) -> BoxFuture<'_, ()>;
            $(
                fn $method(
                    &self,
                    $($arg: $ty,)*
                    context: RequestContext<RoleServer>,
                ) -> BoxFuture<'_, Result<$out, ErrorData>>;
            )*
        }

        impl<H: ServerHandler> UserHandler for H {
            fn info(&self) -> ServerConfig {
                ServerHandler::get_info(self)
            }

            fn versions(&self) -> Cow<'static, [ProtocolVersion]> {
                ServerHandler::supported_protocol_versions(self)
            }

            fn initialize(
                &self,
                request: InitializeRequestParams,
                context: RequestContext<RoleServer>,
            ) -> BoxFuture<'_, Result<InitializeResult, ErrorData>> {
                Box::pin(ServerHandler::initialize(self, request, context))
            }

            fn set_level(
                &self,
                request: SetLevelRequestParams,
                context: RequestContext<RoleServer>,
            ) -> BoxFuture<'_, Result<(), ErrorData>> {
                Box::pin(ServerHandler::set_level(self, request, context))
            }

            fn custom(
                &self,
                request: CustomRequest,
                context: RequestContext<RoleServer>,
            ) -> BoxFuture<'_, Result<CustomResult, ErrorData>> {
                Box::pin(ServerHandler::on_custom_request(self, request, context))
            }

            fn notified(
                &self,
                notification: Notification,
                context: NotificationContext<RoleServer>,
            ) -> BoxFuture<'_, ()> {
                match notification {
                    Notification::Cancelled(n) => Box::pin(ServerHandler::on_cancelled(self, n, context)),
                    Notification::Progress(n) => Box::pin(ServerHandler::on_progress(self, n, context)),
                    Notification::Initialized => Box::pin(ServerHandler::on_initialized(self, context)),
                    Notification::RootsListChanged => {
                        Box::pin(ServerHandler::on_roots_list_changed(self, context))
                    }
                    Notification::Custom(n) => {
                        Box::pin(ServerHandler::on_custom_notification(self, n, context))
                    }
                }
            }

            $(
                fn $method(
                    &self,
                    $($arg: $ty,)*
                    context: RequestContext<RoleServer>,
                ) -> BoxFuture<'_, Result<$out, ErrorData>> {
                    Box::pin(ServerHandler::$method(self, $($arg,)* context))
                }
            )*
        }
    };
}
client_requests!(user_handler_trait);

/// A notification a client sent, for the user's handler.
pub(crate) enum Notification {
    Cancelled(CancelledNotificationParam),
    Progress(ProgressNotificationParam),
    Initialized,
    RootsListChanged,
    Custom(CustomNotification),
}

/// The handler of a server built without one: rmcp's defaults (no prompts, no resources, every
/// such request answered "method not found").
pub(crate) struct NoHandler;

impl ServerHandler for NoHandler {
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(not_found(request.method.as_str()))
    }
}

/// Why a user's handler cannot be served beside the server's tools; `None` when it can.
pub(crate) fn problem(info: &ServerConfig) -> Option<String> {
    info.capabilities.tools.as_ref().map(|_| {
        "handler: its get_info declares the tools capability, but a server's tools are \
         mcp-fusion's (routing, validation, envelopes, limits): remove enable_tools() from the \
         handler's capabilities and serve each tool with ServerBuilder::tool"
            .to_owned()
    })
}
