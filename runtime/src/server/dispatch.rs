//! The one dispatch: every MCP request a transport hands the core goes to the tool pipeline
//! (`tools/call`, `tools/list`), a source of tools (the gateway's listing changes), or the
//! user's own handler (everything else), whether rmcp's service loop read it (this is the
//! server's `ServerHandler`) or a transport read it itself (the fast lane, `server::lane`:
//! [`Server::answer_plain`]).
//!
//! What the user's handler answers runs under the request's cancellation (its future is
//! dropped when the client cancels) with its panic caught (answered, never lost), and is
//! refused while the server shuts down.
//!
//! Every method hands rmcp a small future: its work of more than a few hundred bytes is boxed
//! (`Box::pin`). rmcp's `handle_request` holds the future of whichever method a request names,
//! so its size is the largest of them, and rmcp spawns it as a task for every request (copied
//! into the task and again as it completes), whatever the request: one large method made
//! every request, down to a `ping`, copy kilobytes.

// Logging, sampling and roots are deprecated by SEP-2577 in rmcp; they are still served.
#![allow(deprecated)]

use std::borrow::Cow;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::envelope::new_incident_id;
use crate::tool::{BoxFuture, CatchUnwind, PanicMessage};

use super::call::Called;
use super::changes::{Holder, Hub};
use super::core::Server;
use super::methods::{MCP_REQUESTS, REMOVED_IN_2026_07_28, client_requests, not_found, stateless};
use super::reach::Asker;
use super::request::{
    CallRequest, ProgressSink, Stopping, boxed, cancellation, trace_of, unless_cancelled,
};
use super::task_calls::{TaskCall, Tasked};
use super::user::{Notification, UserHandler};

macro_rules! delegate_to_user {
    (
        server { $($_sv:ident: $_sm:ident,)* }
        tools { $($_tv:ident: $_tm:ident,)* }
        user { $($_uv:ident: $_um:ident => $method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)* }
    ) => {
        $(
            async fn $method(
                &self,
                $($arg: $ty,)*
                context: RequestContext<RoleServer>,
            ) -> Result<$out, ErrorData> {
                self.user(context, move |handler, context| handler.$method($($arg,)* context)).await
            }
        )*
    };
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        self.merged(self.inner.handler.info())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.handler.versions()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed_tool(name)
    }

    /// The user's handler answers (it may keep the client's info, or refuse), and its answer
    /// is the server's: its name, version and instructions, and its tools beside what the
    /// handler serves.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // A client that begins with `initialize` negotiates in it; one whose request already
        // says it is of 2026-07-28 has no `initialize` to send.
        if stateless(context.meta.protocol_version().as_ref()) {
            return Err(not_found(&request_method::<InitializeResultMethod>()));
        }
        let answered = self
            .user(context, move |handler, context| {
                handler.initialize(request, context)
            })
            .await?;
        Ok(self.merged(answered))
    }

    client_requests!(delegate_to_user);

    /// rmcp reads a standard request whose params do not decode (`tools/call` whose
    /// `arguments` are not an object, or without a `name`) as a custom one: it is answered as
    /// what it is, Invalid params, rather than Method not found. Other methods are the user's.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        if REMOVED_IN_2026_07_28.contains(&method) && stateless(version_of(&context).as_ref()) {
            return Err(not_found(method));
        }
        if method == "tools/call" {
            return Err(ErrorData::invalid_params(
                "tools/call takes params {\"name\": string, \"arguments\": object (optional)}",
                None,
            ));
        }
        if MCP_REQUESTS.contains(&method) {
            return Err(ErrorData::invalid_params(
                format!("Invalid params for {method}"),
                None,
            ));
        }
        self.user(context, move |handler, context| {
            handler.custom(request, context)
        })
        .await
    }

    /// The session's level is the server's to keep (`Context::log` honours it); the user's
    /// handler is told too, and its "method not found" is no refusal.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if stateless(version_of(&context).as_ref()) {
            return Err(not_found(&request_method::<SetLevelRequestMethod>()));
        }
        self.inner.levels.set(&context.peer, request.level);
        let told = self
            .user(context, move |handler, context| {
                handler.set_level(request, context)
            })
            .await;
        match told {
            Err(error) if error.code == ErrorCode::METHOD_NOT_FOUND => Ok(()),
            told => told,
        }
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        // A session that began with `initialize` (before 2026-07-28) is told of listing
        // changes unsolicited.
        for source in self.inner.sources.iter() {
            source.session_started(context.peer.clone());
        }
        self.hub().session_started(context.peer.clone());
        // The fast lane (`server::lane`): it may answer this session's plain requests now.
        #[cfg(feature = "http")]
        self.inner.lane.sessions.started(&context);
        self.notify_user(Notification::Initialized, context)
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.notify_user(Notification::Cancelled(notification), context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.notify_user(Notification::Progress(notification), context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.notify_user(Notification::RootsListChanged, context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.notify_user(Notification::Custom(notification), context)
    }

    /// `resources/subscribe` of a session (before 2026-07-28): told of the resource's
    /// updates until it unsubscribes or closes.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.hub().subscribe(&context.peer, &request.uri)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.hub().unsubscribe(&context.peer, &request.uri);
        Ok(())
    }

    /// From 2026-07-28 a client asks to be told (`subscriptions/listen`): every listing change
    /// and up to `changes::SUBSCRIPTIONS` resources are accepted (rmcp narrows that to what
    /// the server advertises, and acknowledges it).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(Hub::accepted(requested))
    }

    /// One stream, told by the server's changes and its sources' (a gateway's upstreams) until
    /// the client cancels it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let request = context.request_context();
        handed_over(&request.extensions);
        let ended = cancellation(&request.ct, &request.extensions);
        let holder = holder(&request.extensions);
        let tools = context.accepted().tools_list_changed == Some(true);
        let _told: Vec<Box<dyn Send>> = match tools {
            true => (self.inner.sources.iter())
                .map(|source| source.subscribe(context.sink().clone()))
                .collect(),
            false => Vec::new(),
        };
        boxed(|| self.hub().listen(context, holder, ended)).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        handed_over(&context.extensions);
        Box::pin(async move { self.task_get(request, &context).await }).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        handed_over(&context.extensions);
        Box::pin(self.task_update(request, &context.extensions)).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        handed_over(&context.extensions);
        Box::pin(self.task_cancel(request, &context.extensions)).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        handed_over(&_context.extensions);
        let listed = boxed(|| self.listed_tools()).await;
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A panic anywhere on the way to the action (its own is caught nearer, as
        // INTERNAL_ERROR) still answers the request, and gives back what it held.
        match CatchUnwind(boxed(|| self.answer_call(params, context))).await {
            Ok(answer) => answer,
            Err(panic) => Err(self.panicked(panic)),
        }
    }
}

impl Server {
    /// What the server says it serves: the user's handler's (its prompts, resources, ...) with
    /// the server's tools, name, version and instructions. Listing changes and resource
    /// subscriptions are the server's to tell (`Changes`), for whatever it serves.
    pub(crate) fn merged(&self, mut info: ServerConfig) -> ServerConfig {
        let tools = ServerCapabilities::builder().enable_tools();
        info.capabilities.tools = tools.enable_tool_list_changed().build().tools;
        if let Some(prompts) = &mut info.capabilities.prompts {
            prompts.list_changed = Some(true);
        }
        if let Some(resources) = &mut info.capabilities.resources {
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
        }
        // Handlers log to their client (`Context::log`): `logging/setLevel` is the server's.
        info.capabilities
            .logging
            .get_or_insert_with(Default::default);
        // Actions that run as tasks: the tasks extension (SEP-2663), which rmcp then serves
        // `tasks/*` for.
        if self.has_tasks() {
            let extensions = info
                .capabilities
                .extensions
                .get_or_insert_with(Default::default);
            extensions.insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }
        info.server_info = self.inner.info.clone();
        if let Some(instructions) = &self.inner.instructions {
            info.instructions = Some(instructions.clone());
        }
        info
    }

    /// Who to tell what changed.
    fn hub(&self) -> &std::sync::Arc<Hub> {
        self.inner.changes.hub()
    }

    /// Runs a request of the user's handler under its cancellation, its panic caught; refused
    /// once the server is shutting down. Handed over: its parse place goes back. Boxed, as
    /// every request of the user's goes through it (the module's doc).
    fn user<'a, T: Send + 'a>(
        &'a self,
        context: RequestContext<RoleServer>,
        request: impl FnOnce(
            &'a dyn UserHandler,
            RequestContext<RoleServer>,
        ) -> BoxFuture<'a, Result<T, ErrorData>>
        + Send
        + 'a,
    ) -> BoxFuture<'a, Result<T, ErrorData>> {
        boxed(|| async move {
            handed_over(&context.extensions);
            if context.extensions.get::<Stopping>().is_some() {
                return Err(ErrorData::new(
                    ErrorCode(-32000),
                    "Server shutting down: retry in a moment.",
                    None,
                ));
            }
            let cancelled = cancellation(&context.ct, &context.extensions);
            let handled = CatchUnwind(request(&*self.inner.handler, context));
            match unless_cancelled(&cancelled, handled).await {
                Some(Ok(answered)) => answered,
                Some(Err(panic)) => Err(self.panicked(panic)),
                // Never sent: the transport drops the answer of a cancelled request.
                None => Err(ErrorData::new(REQUEST_CANCELLED, "request cancelled", None)),
            }
        })
    }

    /// Tells the user's handler of a notification, its panic caught and logged. Boxed, as
    /// every notification goes through it (the module's doc).
    fn notify_user(
        &self,
        notification: Notification,
        context: NotificationContext<RoleServer>,
    ) -> BoxFuture<'_, ()> {
        let notified = self.inner.handler.notified(notification, context);
        Box::pin(async move {
            if let Err(panic) = CatchUnwind(notified).await {
                tracing::error!(cause = %PanicMessage(panic), "the handler panicked on a notification");
            }
        })
    }

    /// `tools/call` read by rmcp: the pipeline's answer, or the JSON-RPC error of a call that
    /// has none.
    async fn answer_call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        handed_over(&context.extensions);
        let version = context.protocol_version();
        let capabilities = context.client_capabilities();
        let declared = capabilities.as_ref().is_some_and(|c| c.supports_tasks());
        // A copy for a task, which only a client that declares tasks is given.
        let asked_capabilities = declared.then(|| capabilities.clone()).flatten();
        let RequestContext {
            ct,
            id,
            meta,
            extensions,
            peer,
            ..
        } = context;
        let CallToolRequestParams {
            name,
            arguments,
            input_responses,
            request_state,
            ..
        } = params;
        let caller = crate::tool::Caller::of(&extensions).cloned();
        let reach = self
            .reach(Asker {
                tool: &name,
                arguments: arguments.as_ref(),
                version,
                capabilities,
                peer: Some(peer.clone()),
                back_channel: back_channel(&extensions),
                log_level: meta.log_level(),
                answers: input_responses,
                state: request_state.as_deref(),
                caller: caller.as_ref(),
            })
            .await;
        // A state that cannot carry the call on is the client's doing: a JSON-RPC error.
        let reach = reach?;
        match self.tasked(&name, arguments.as_ref(), declared, &reach.answers) {
            Tasked::Inline => {}
            Tasked::Refused(refused) => return Err(refused),
            Tasked::Task => {
                let call = TaskCall {
                    name: name.to_string(),
                    arguments,
                    trace: trace_of(meta.get_traceparent(), meta.get_tracestate()),
                    extensions,
                    answers: reach.answers.clone(),
                    capabilities: asked_capabilities.unwrap_or_default(),
                };
                // Boxed: a task's start is rare, and its future would make every call's larger.
                return Box::pin(self.start_task(call)).await;
            }
        }
        // What the request's `_meta` carries (MCP 2026-07-28): a progress token, and a W3C
        // trace context (SEP-414), parsed strictly and otherwise ignored.
        let call = CallRequest {
            name: name.clone(),
            arguments,
            progress: meta
                .get_progress_token()
                .map(|token| (token, ProgressSink::Peer(peer))),
            trace: trace_of(meta.get_traceparent(), meta.get_tracestate()),
            cancelled: cancellation(&ct, &extensions),
            extensions,
            client: reach.client.clone(),
            round: reach.round.clone(),
            spent: false,
        };
        let called = self.run_call(call).await;
        if let Some(missing) = reach.missing() {
            return Err(ErrorData::missing_required_client_capability(missing));
        }
        match called {
            Called::InputRequired(asks) => Ok(CallToolResponse::InputRequired(
                self.input_required(&reach, asks),
            )),
            called => self.answer_of(&id, &name, called).map(Into::into),
        }
    }

    /// The answer to a `tools/call` as it ended.
    pub(crate) fn answer_of(
        &self,
        id: &RequestId,
        name: &str,
        called: Called,
    ) -> Result<CallToolResult, ErrorData> {
        match called {
            Called::Answered(answer) => match answer.protocol_error() {
                Some(error) => Err(error.clone()),
                None => Ok(answer.into_result()),
            },
            Called::UnknownTool => Err(ErrorData::invalid_params(self.unknown_tool(name), None)),
            // Answered by the dispatch before this (`input_required`).
            Called::InputRequired(_) => Err(ErrorData::internal_error(
                "a round of this call ended where none can",
                None,
            )),
            Called::Cancelled { action } => {
                // The server's own record: a call cancelled in a queue never reached middleware.
                tracing::info!(?id, tool = %name, action = %action, "call cancelled by the client; stopped");
                // Never sent: the transport drops the answer of a cancelled request.
                Err(ErrorData::new(REQUEST_CANCELLED, "request cancelled", None))
            }
        }
    }

    /// The JSON-RPC error of a panic on the way to an answer, logged with its incident.
    pub(crate) fn panicked(&self, panic: Box<dyn std::any::Any + Send>) -> ErrorData {
        let incident = new_incident_id();
        tracing::error!(incident = %incident, cause = %PanicMessage(panic), "a request failed before it was answered");
        ErrorData::internal_error(
            format!(
                "Internal error: the server could not handle this request (incident {incident})."
            ),
            None,
        )
    }

    /// The JSON-RPC error message for a tool name nothing is registered under (MCP: Invalid
    /// params), with the closest listed name when one is close (ERRORS.md §4, "Close"): under
    /// flat exposition a misspelt action is a misspelt tool.
    fn unknown_tool(&self, name: &str) -> String {
        let mut listed: Vec<String> = self
            .inner
            .registry
            .listed()
            .map(|l| l.name.to_string())
            .collect();
        for source in self.inner.sources.iter() {
            listed.extend(source.listed().into_iter().map(|t| t.name.into_owned()));
        }
        crate::tool::unknown_tool(name, &listed, self.definitions())
    }
}

/// Whether requests can reach the client of a request carrying `extensions`: every transport
/// but stateless streamable HTTP (a request without a session).
fn back_channel(extensions: &Extensions) -> bool {
    #[cfg(feature = "http")]
    if let Some(parts) = extensions.get::<http::request::Parts>() {
        return parts.headers.contains_key(&super::http::SESSION_ID);
    }
    let _ = extensions;
    true
}

/// Gives back the parse place of an HTTP request as the server is handed it (`http::body`):
/// every request that may last calls it as it begins; a short one gives it back with its end.
fn handed_over(extensions: &Extensions) {
    #[cfg(feature = "http")]
    if let Some(parts) = extensions.get::<http::request::Parts>()
        && let Some(place) = parts.extensions.get::<super::http::ParsePlace>()
    {
        place.release();
    }
    let _ = extensions;
}

/// The protocol version a request is of: its own (`_meta`, from 2026-07-28), else its
/// session's.
fn version_of(context: &RequestContext<RoleServer>) -> Option<ProtocolVersion> {
    context
        .meta
        .protocol_version()
        .or_else(|| context.protocol_version())
}

/// The name of the method `M`.
fn request_method<M: ConstString>() -> String {
    M::VALUE.to_owned()
}

/// Who holds a `subscriptions/listen` stream: the verified caller, else the HTTP connection.
fn holder(extensions: &Extensions) -> Holder {
    if let Some(caller) = crate::tool::Caller::of(extensions) {
        return Holder::Subject(caller.subject().to_owned());
    }
    #[cfg(feature = "http")]
    if let Some(parts) = extensions.get::<http::request::Parts>()
        && let Some(connection) = parts.extensions.get::<super::changes::Connection>()
    {
        return Holder::Connection(connection.0);
    }
    Holder::Anyone
}

/// The code LSP gives a cancelled request; only ever seen in logs here.
const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    use super::*;

    /// A handler of rmcp's defaults only: what rmcp itself keeps of a request in flight.
    struct Bare;

    impl ServerHandler for Bare {}

    /// The size of the output of `f`, found from its type alone (`f` is not called).
    fn output<A, B, C, F>(_: fn(A, B, C) -> F) -> usize {
        size_of::<F>()
    }

    /// The sizes of the futures rmcp's `handle_request` and `handle_notification` return for a
    /// handler of type `H`.
    fn handling<H: ServerHandler + 'static>() -> (usize, usize) {
        let request = output(|handler: &'static H, request, context| {
            rmcp::Service::<RoleServer>::handle_request(handler, request, context)
        });
        let notification = output(|handler: &'static H, notification, context| {
            rmcp::Service::<RoleServer>::handle_notification(handler, notification, context)
        });
        (request, notification)
    }

    /// rmcp spawns the future of every request as a task, copying it whole into the task and
    /// again as it completes: the server's methods add at most a few hundred bytes to what
    /// rmcp's own defaults hold (before their work was boxed, 1.4 KiB more, and a `ping`
    /// over HTTP copied ~80 KB more than bare rmcp's). Notifications likewise.
    #[test]
    fn every_request_hands_rmcp_a_small_future() {
        let (ours, bare) = (handling::<Server>(), handling::<Bare>());
        assert!(
            ours.0 <= bare.0 + 256,
            "handle_request's future: {} bytes for the server, {} for rmcp's defaults",
            ours.0,
            bare.0
        );
        assert!(
            ours.1 <= bare.1 + 256,
            "handle_notification's future: {} bytes for the server, {} for rmcp's defaults",
            ours.1,
            bare.1
        );
    }
}
