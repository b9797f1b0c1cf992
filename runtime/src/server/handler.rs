//! The server as rmcp's `ServerHandler`: `initialize`, `tools/list`, `tools/call`, and the
//! answers to requests rmcp cannot decode.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::{Called, Server};
use crate::envelope::new_incident_id;
use crate::tool::{CatchUnwind, PanicMessage};

/// A call read after a graceful shutdown began, in the request's extensions: refused with
/// SERVER_BUSY (the stdio transport; over HTTP the front answers 503 itself).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) struct ShuttingDown;

/// A call's cancellation as a transport signals it, in the request's extensions: the stdio
/// transport reads `notifications/cancelled` itself, so that it knows when the cancelled call is
/// done with its id (rmcp's own token, `RequestContext::ct`, is honoured too).
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) struct ClientCancel(pub(crate) tokio_util::sync::CancellationToken);

impl ServerHandler for Server {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder().enable_tools();
        // A gateway's listing changes when an upstream's does: its clients are told.
        #[cfg(feature = "gateway")]
        let capabilities = match self.inner.mounts.is_empty() {
            true => capabilities.build(),
            false => capabilities.enable_tool_list_changed().build(),
        };
        #[cfg(not(feature = "gateway"))]
        let capabilities = capabilities.build();
        let mut info =
            InitializeResult::new(capabilities).with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    /// A session that began with `initialize` (before 2026-07-28) is told of listing changes
    /// unsolicited.
    #[cfg(feature = "gateway")]
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        if !self.inner.mounts.is_empty() {
            self.inner.subscribers.add(context.peer);
        }
    }

    /// From 2026-07-28 a client asks to be told (`subscriptions/listen`); a gateway tells of
    /// `tools` listing changes, nothing else.
    #[cfg(feature = "gateway")]
    fn accepted_subscription_filter(
        &self,
        _requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        (!self.inner.mounts.is_empty()).then(|| {
            rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build()
        })
    }

    /// Tells this stream of listing changes until the client cancels it.
    #[cfg(feature = "gateway")]
    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        match context.accepted().tools_list_changed {
            Some(true) => {
                let sink = context.sink().clone();
                self.inner
                    .subscribers
                    .listen(sink, context.cancelled())
                    .await;
            }
            _ => context.cancelled().await,
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed_tools()))
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A panic anywhere on the way to the action (its own is caught nearer, as
        // INTERNAL_ERROR) still answers the request, and gives back what it held.
        match CatchUnwind(Box::pin(self.answer_call(params, context))).await {
            Ok(answer) => answer,
            Err(panic) => Err(self.panicked(panic)),
        }
    }

    /// rmcp reads a standard request whose params do not decode (`tools/call` whose
    /// `arguments` are not an object, or without a `name`) as a custom one: answer it as what it
    /// is, Invalid params, rather than Method not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
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
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", cut(method)),
            None,
        ))
    }
}

impl Server {
    /// `tools/call`: the pipeline's answer, or the JSON-RPC error of a call that has none.
    async fn answer_call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = params.name.clone();

        let RequestContext {
            ct,
            id,
            meta,
            extensions,
            peer,
            ..
        } = context;
        // What the request's `_meta` carries (MCP 2026-07-28): a progress token, and a W3C
        // trace context (SEP-414), parsed strictly and otherwise ignored.
        let trace = meta
            .get_traceparent()
            .and_then(|parent| crate::tools::TraceContext::parse(parent, meta.get_tracestate()))
            .map(|trace| (trace, crate::tool::new_span_id()));
        let request = super::Request {
            progress: meta
                .get_progress_token()
                .map(|token| (token, super::pipeline::Notifier::Peer(peer))),
            trace,
        };
        // Over HTTP, rmcp is done parsing the body: give its place back for a long call.
        #[cfg(feature = "http")]
        if let Some(parts) = extensions.get::<http::request::Parts>() {
            super::http::ParsePlace::release(parts);
        }
        // A cancelled call is stopped at once and gets no answer (MCP: cancellation; ERRORS.md
        // §1). Over stdio the transport signals it; over HTTP, rmcp's token, which stateless
        // serving also cancels when the client drops the response stream.
        let transport = extensions.get::<ClientCancel>().map(|c| c.0.clone());
        let cancelled = async move {
            match transport {
                Some(transport) => tokio::select! {
                    () = ct.cancelled() => {}
                    () = transport.cancelled() => {}
                },
                None => ct.cancelled().await,
            }
        };
        let called = self
            .call_with(&name, params.arguments, extensions, request, cancelled)
            .await;
        self.answer_of(&id, &name, called).map(Into::into)
    }

    /// The answer to a `tools/call` as it ended.
    fn answer_of(
        &self,
        id: &rmcp::model::RequestId,
        name: &str,
        called: Called,
    ) -> Result<rmcp::model::CallToolResult, ErrorData> {
        match called {
            Called::Answered(result) => Ok(result.into_result()),
            Called::UnknownTool => Err(ErrorData::invalid_params(self.unknown_tool(name), None)),
            Called::Cancelled { action } => {
                // The server's own record: a call cancelled in a queue never reached middleware.
                tracing::info!(?id, tool = %name, action = %action, "call cancelled by the client; stopped");
                // Never sent: the transport drops the answer of a cancelled request.
                Err(ErrorData::new(REQUEST_CANCELLED, "request cancelled", None))
            }
        }
    }

    /// The answer to a request a transport read itself (`server::fast`): the same as rmcp's
    /// path gives, serialised once. `None` for a call cancelled before its answer (once
    /// `cancelled` completes). A call's progress notifications go to `lines` (stdio); a
    /// transport without them takes no call with a progress token. `extensions` are what the
    /// transport attached (the verified caller, over HTTP).
    #[cfg(any(feature = "stdio", feature = "http"))]
    pub(crate) async fn answer_hot(
        &self,
        hot: super::fast::Hot<'_>,
        cancelled: impl Future<Output = ()> + Send,
        shape: super::fast::Shape,
        lines: Option<tokio::sync::mpsc::Sender<super::fast::Framed>>,
        extensions: rmcp::model::Extensions,
    ) -> Option<Vec<u8>> {
        use super::fast::{Hot, answer};
        use rmcp::model::ServerResult;

        let (id, call) = match hot {
            Hot::Ping(id) => return Some(answer(id, Ok(ServerResult::empty(())), shape)),
            Hot::List(id) => return Some(self.listing(&id, shape)),
            Hot::Call(id, call) => (id, call),
        };
        let trace = call
            .traceparent
            .as_deref()
            .and_then(|parent| {
                crate::tools::TraceContext::parse(parent, call.tracestate.as_deref())
            })
            .map(|trace| (trace, crate::tool::new_span_id()));
        #[cfg(feature = "stdio")]
        let progress = call.progress.zip(lines).map(|(token, lines)| {
            let notifier = super::pipeline::Notifier::Lines(lines);
            (token, notifier)
        });
        #[cfg(not(feature = "stdio"))]
        let progress = {
            let _ = lines;
            None
        };
        let request = super::Request { progress, trace };
        let called = self.call_with(&call.name, call.arguments, extensions, request, cancelled);
        // As in `call_tool`: a panic on the way to the action still answers.
        let outcome = match CatchUnwind(Box::pin(called)).await {
            // An envelope is written from its parts, its mirror never made a value.
            Ok(Called::Answered(ref answer)) if let Some(envelope) = answer.as_envelope() => {
                return Some(super::fast::envelope_answer(&id, envelope, shape));
            }
            Ok(called) => {
                let cancelled = matches!(called, Called::Cancelled { .. });
                let outcome = self.answer_of(&id, &call.name, called);
                if cancelled {
                    return None;
                }
                outcome
            }
            Err(panic) => Err(self.panicked(panic)),
        };
        let response = |result| ServerResult::from(CallToolResponse::from(result));
        Some(answer(id, outcome.map(response), shape))
    }

    /// Whether no call needs rmcp's check of `Mcp-Param-*` headers (2026-07-28, SEP-2243): no
    /// tool of the server's own asks for one (`x-mcp-header`), and no upstream, whose tools may,
    /// is mounted.
    #[cfg(feature = "http")]
    pub(crate) fn without_param_headers(&self) -> bool {
        #[cfg(feature = "gateway")]
        if !self.inner.mounts.is_empty() {
            return false;
        }
        fn asks(value: &serde_json::Value) -> bool {
            match value {
                serde_json::Value::Object(map) => {
                    map.contains_key("x-mcp-header") || map.values().any(asks)
                }
                serde_json::Value::Array(items) => items.iter().any(asks),
                _ => false,
            }
        }
        let tools = self.inner.tools.iter().flat_map(|t| t.listed.iter());
        !tools.flat_map(|tool| tool.input_schema.values()).any(asks)
    }

    /// Every tool as `tools/list` shows it: the server's own, then the mounted upstreams'.
    pub(crate) fn listed_tools(&self) -> Vec<rmcp::model::Tool> {
        let own = self
            .inner
            .tools
            .iter()
            .flat_map(|t| t.listed.iter().cloned());
        #[cfg(feature = "gateway")]
        let own = own.chain(self.mounted_tools());
        own.collect()
    }

    /// `tools/list`'s answer to request `id`: made once for each shape, its id put in (made
    /// each time when upstreams are mounted: their tools change as they connect).
    #[cfg(any(feature = "stdio", feature = "http"))]
    fn listing(&self, id: &rmcp::model::RequestId, shape: super::fast::Shape) -> Vec<u8> {
        const PREFIX: &str = r#"{"jsonrpc":"2.0","id":0,"#;
        let make = || -> Box<str> {
            let result = rmcp::model::ServerResult::ListToolsResult(
                ListToolsResult::with_all_items(self.listed_tools()),
            );
            let marker = rmcp::model::RequestId::Number(0);
            let answer = super::fast::answer(marker, Ok(result), shape);
            String::from_utf8(answer).unwrap_or_default().into()
        };
        #[cfg(feature = "gateway")]
        let made;
        #[cfg(feature = "gateway")]
        let cached = match self.inner.mounts.is_empty() {
            true => self.inner.listing[shape as usize].get_or_init(make),
            false => {
                made = make();
                &made
            }
        };
        #[cfg(not(feature = "gateway"))]
        let cached = self.inner.listing[shape as usize].get_or_init(make);
        let rest = cached.strip_prefix(PREFIX).unwrap_or_default();
        let id = serde_json::to_string(id).unwrap_or_default();
        format!(r#"{{"jsonrpc":"2.0","id":{id},{rest}"#).into_bytes()
    }

    /// The JSON-RPC error of a panic on the way to an action, logged with its incident.
    fn panicked(&self, panic: Box<dyn std::any::Any + Send>) -> ErrorData {
        let incident = new_incident_id();
        tracing::error!(incident = %incident, cause = %PanicMessage(panic), "tools/call failed before its action ran");
        ErrorData::internal_error(
            format!("Internal error: the server could not handle this call (incident {incident})."),
            None,
        )
    }

    /// The JSON-RPC error message for a tool name nothing is registered under (MCP: Invalid
    /// params), with the closest listed name when one is close (ERRORS.md §4, "Close"): under
    /// flat exposition a misspelt action is a misspelt tool.
    fn unknown_tool(&self, name: &str) -> String {
        let listed: Vec<String> = self
            .listed_tools()
            .into_iter()
            .map(|l| l.name.to_string())
            .collect();
        crate::tool::unknown_tool(name, &listed, self.definitions())
    }
}

/// The code LSP gives a cancelled request; only ever seen in logs here.
const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);

/// The requests of MCP (2026-07-28) a client may send a server.
pub(crate) const MCP_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "completion/complete",
    "logging/setLevel",
];

/// A name the client sent, short enough to echo in an error.
pub(crate) fn cut(name: &str) -> String {
    let mut out = String::new();
    crate::envelope::text::push_cut(&mut out, name);
    out
}
