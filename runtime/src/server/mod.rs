//! Serving tools on the official Rust MCP SDK (rmcp): `tools/list` shows each tool with its
//! schema and annotations; `tools/call` runs the pipeline of ERRORS.md §4 with the server's
//! limits and middleware around each handler.

#[cfg(feature = "oauth")]
pub mod auth;
mod builder;
#[cfg(any(feature = "stdio", feature = "http"))]
mod fast;
#[cfg(feature = "gateway")]
pub mod gateway;
#[cfg(any(feature = "stdio", feature = "http"))]
mod guard;
mod handler;
#[cfg(feature = "http")]
mod http;
pub mod limits;
#[cfg(feature = "otel")]
mod otel;
mod pipeline;
#[cfg(feature = "stdio")]
mod stdio;

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, Implementation};

pub use builder::{BuildError, ServerBuilder, ToolSettings};
#[cfg(feature = "http")]
pub use http::HttpOptions;
#[cfg(feature = "http")]
pub use http::HttpService;
pub(crate) use pipeline::Pipeline;
pub use pipeline::RateLimitKey;
pub(crate) use pipeline::Request;
#[cfg(feature = "gateway")]
pub(crate) use pipeline::forward_progress;
#[cfg(feature = "stdio")]
pub use stdio::StdioOptions;

use crate::contract::ToolSet;
use crate::tool::{BoxFuture, Route, Tool, ToolDef, prepare};

/// An MCP server of tools built with this crate: described with [`Server::builder`], then
/// immutable and cheap to clone (every clone is the same server).
///
/// ```
/// use mcp_fusion::{Server, ToolError, tool};
///
/// /// The time.
/// #[tool]
/// async fn now() -> Result<u64, ToolError> {
///     Ok(1_764_000_000)
/// }
///
/// let server = Server::builder("clock", "1.0.0").tool(NowTool).build()?;
/// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["now"]);
/// // `server.serve_stdio(StdioOptions::default()).await` serves it on stdin/stdout.
/// # Ok::<(), mcp_fusion::server::BuildError>(())
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

/// Each MCP tool name's tool, and for a flat tool the action it names; looked up on every call.
type ByName = HashMap<String, (usize, Option<usize>), crate::hash::FoldState>;

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<Registered>,
    /// Each MCP tool name: the tool, and for a flat tool the action it names.
    by_name: ByName,
    /// `tools/list`'s answer as JSON for each `fast::Shape` (with id 0), made the first time a
    /// transport answers it itself.
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    listing: [std::sync::OnceLock<Box<str>>; 2],
    /// Calls whose arguments are large are validated one at a time (see [`LARGE_ARGUMENTS`]).
    validating: tokio::sync::Semaphore,
    #[cfg(feature = "otel")]
    instruments: otel::Instruments,
    /// The upstreams mounted under namespaces (a gateway), in mounting order.
    #[cfg(feature = "gateway")]
    mounts: Arc<[Arc<super::gateway::Link>]>,
    /// The connections to tell when a mounted upstream's tools change.
    #[cfg(feature = "gateway")]
    subscribers: Arc<super::gateway::Subscribers>,
    /// What the server puts around a forwarded call, as around its own tools' calls.
    #[cfg(feature = "gateway")]
    forwarding: Forwarding,
}

/// The server's middleware, rate-limit key and exposure of causes, for forwarded calls.
#[cfg(feature = "gateway")]
pub(crate) struct Forwarding {
    pub(crate) middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
    pub(crate) key: Option<pipeline::RateLimitKey>,
    pub(crate) expose_causes: bool,
}

/// Arguments of more values than this are validated one call at a time: finding every problem
/// of wrong arguments costs the validator about 400 bytes per failing keyword, up to ~200 times
/// the arguments' size (`Schema::validate`), so that cost is paid by one call at a time.
const LARGE_ARGUMENTS: usize = 4096;

/// Whether `arguments` hold more than [`LARGE_ARGUMENTS`] values (counted up to that).
fn large(arguments: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
    let Some(arguments) = arguments else {
        return false;
    };
    let mut seen = arguments.len();
    let mut stack: Vec<&serde_json::Value> = arguments.values().take(LARGE_ARGUMENTS + 1).collect();
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Array(items) => {
                seen += items.len();
                stack.extend(items.iter().take(LARGE_ARGUMENTS + 1));
            }
            serde_json::Value::Object(map) => {
                seen += map.len();
                stack.extend(map.values().take(LARGE_ARGUMENTS + 1));
            }
            _ => {}
        }
        if seen > LARGE_ARGUMENTS {
            return true;
        }
    }
    seen > LARGE_ARGUMENTS
}

struct Registered {
    tool: Arc<dyn Tool>,
    pipeline: Arc<Pipeline>,
    /// What `tools/list` shows of it, made once.
    listed: Vec<rmcp::model::Tool>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.inner.by_name)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// The tools' names, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.inner.tools.iter().map(|t| t.tool.definition().name())
    }

    /// The tools' definitions, in order (also as [`ToolSet`], for the contract).
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.inner.tools.iter().map(|t| t.tool.definition())
    }

    /// The scopes a `tools/call` of `name` with `arguments` needs when `caller` lacks one of
    /// them and the call would otherwise reach its action's limits (ERRORS.md §4: routing and
    /// validation come first, so a malformed call is still told what is wrong with it). `None`
    /// when the caller may make the call, or when the pipeline will refuse it anyway.
    #[cfg(feature = "oauth")]
    pub(crate) fn refused_scopes(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        caller: &crate::tools::Caller,
    ) -> Option<&[String]> {
        let &(i, flat) = self.inner.by_name.get(name)?;
        let def = self.inner.tools.get(i)?.tool.definition();
        let index = match (flat, def.discriminator()) {
            (Some(index), _) => index,
            (None, None) => 0,
            (None, Some(field)) => def
                .router()
                .route_value(arguments.and_then(|args| args.get(field)))
                .ok()?,
        };
        let action = def.actions().get(index)?;
        caller.lacks(action.scopes()).next()?;
        let route = flat.map_or(Route::Discriminator, Route::Flat);
        prepare(def, arguments.cloned(), route).ok()?;
        Some(action.scopes())
    }

    /// Every scope an action of this server needs, sorted, each once.
    #[cfg(feature = "oauth")]
    pub(crate) fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .definitions()
            .flat_map(|def| def.actions())
            .flat_map(|action| action.scopes().iter().cloned())
            .collect();
        scopes.sort_unstable();
        scopes.dedup();
        scopes
    }

    /// Runs one `tools/call` in process, as the transports do. `None` when no tool has this
    /// name (a JSON-RPC error on the wire, as MCP requires).
    pub async fn call(&self, params: CallToolRequestParams) -> Option<rmcp::model::CallToolResult> {
        let extensions = rmcp::model::Extensions::new();
        let request = Request::default();
        match self
            .call_with(
                &params.name,
                params.arguments,
                extensions,
                request,
                std::future::pending(),
            )
            .await
        {
            Called::Answered(answer) => Some(answer.into_result()),
            Called::UnknownTool | Called::Cancelled { .. } => None,
        }
    }

    /// Runs one `tools/call`; once `cancelled` completes, the call stops where it is (in the
    /// rate limit, in a concurrency queue, in the handler): its future is dropped, which gives
    /// back its slot or its place in the queue.
    ///
    /// Each call runs in a `tools/call` span (target `mcp_fusion`) with its tool and action, the
    /// verified caller's subject (`enduser.id`) when there is one, and,
    /// when the client sent a trace context, its `trace_id`, the caller's `parent_span_id` and
    /// the server's own `span_id`.
    async fn call_with(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        extensions: rmcp::model::Extensions,
        request: Request,
        cancelled: impl Future<Output = ()>,
    ) -> Called {
        use tracing::Instrument;

        let Some((registered, action)) = self
            .inner
            .by_name
            .get(name)
            .and_then(|&(i, action)| Some((self.inner.tools.get(i)?, action)))
        else {
            #[cfg(feature = "gateway")]
            if let Some((link, upstream_name)) = self.mounted(name) {
                if extensions.get::<handler::ShuttingDown>().is_some() {
                    let refused = crate::ToolError::limits_unavailable(name, 1);
                    return Called::Answered(refused.into());
                }
                return self
                    .call_mounted(
                        link,
                        name,
                        upstream_name,
                        arguments,
                        extensions,
                        request,
                        cancelled,
                    )
                    .await;
            }
            return Called::UnknownTool;
        };
        let tool = &*registered.tool;
        let pipeline = &registered.pipeline;
        if extensions.get::<handler::ShuttingDown>().is_some() {
            let refused = crate::ToolError::limits_unavailable(tool.definition().name(), 1);
            return Called::Answered(refused.into());
        }
        let route = action.map_or(Route::Discriminator, Route::Flat);
        let tool_name = tool.definition().name();
        #[cfg(feature = "otel")]
        let started = std::time::Instant::now();
        let mut request = request;
        let span = open_call_span(tool_name, &extensions, &mut request);
        let call = async {
            let large = large(arguments.as_ref());
            // Never closed.
            let gate = match large {
                true => self.inner.validating.acquire().await.ok(),
                false => None,
            };
            let prepared = prepare(tool.definition(), arguments, route);
            drop(gate);
            match prepared {
                Ok(prepared) => {
                    let action = prepared.action.qualified_shared();
                    tracing::Span::current().record("action", tracing::field::display(&action));
                    let called = tokio::select! {
                        biased;
                        () = cancelled => Called::Cancelled { action: action.clone() },
                        result = pipeline.run(tool, prepared, extensions, request) => Called::Answered(result),
                    };
                    (called, Some(action))
                }
                Err(rejection) => (
                    Called::Answered(pipeline.reject(tool.definition(), rejection)),
                    None,
                ),
            }
        };
        let (called, _action) = call.instrument(span.clone()).await;
        #[cfg(feature = "otel")]
        if let Called::Answered(result) = &called {
            let elapsed = started.elapsed();
            let instruments = &self.inner.instruments;
            otel::finish(
                instruments,
                &span,
                tool_name,
                _action.as_deref(),
                result,
                elapsed,
            );
        }
        called
    }
}

#[cfg(feature = "gateway")]
impl Server {
    /// The mount a listed name is under, and the upstream's own name for it.
    fn mounted<'a>(&self, name: &'a str) -> Option<(&Arc<super::gateway::Link>, &'a str)> {
        self.inner
            .mounts
            .iter()
            .find_map(|link| Some((link, link.strip(name)?)))
    }

    /// Connects every mounted upstream that is not connected yet and waits for each first
    /// attempt to end (each within its [`connect_timeout`](super::gateway::Upstream::connect_timeout)):
    /// the namespaces of the upstreams it could not reach, empty when all answer. A gateway
    /// connects lazily otherwise, on its first listing or call; this is for a `main` that
    /// writes the lockfile ([`Contract::of`](crate::contract::Contract::of) then records
    /// every upstream's tools) or wants to know its upstreams answer before it serves.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::contract::Contract;
    /// use mcp_fusion::gateway::Upstream;
    ///
    /// let server = mcp_fusion::Server::builder("front-desk", "1.0.0")
    ///     .mount("books", Upstream::command("billing-server", ["--stdio"]))
    ///     .build()?;
    /// let unreachable = server.reach_upstreams().await;
    /// assert!(unreachable.is_empty(), "cannot reach {unreachable:?}");
    /// std::fs::write("mcp-fusion.lock", Contract::of(&server).to_lockfile())?;
    /// # Ok(()) }
    /// ```
    pub async fn reach_upstreams(&self) -> Vec<String> {
        // All attempts run at once (each link's own task); they are awaited in turn.
        self.start_mounts();
        let mut unreachable = Vec::new();
        for link in self.inner.mounts.iter() {
            if !link.reached().await {
                unreachable.push(link.namespace.clone());
            }
        }
        unreachable
    }

    /// Starts keeping every mounted upstream connected (once); inside a Tokio runtime.
    pub(crate) fn start_mounts(&self) {
        for link in self.inner.mounts.iter() {
            link.start();
        }
    }

    /// The mounted upstreams' tools as listed, after the server's own.
    fn mounted_tools(&self) -> impl Iterator<Item = rmcp::model::Tool> + '_ {
        self.start_mounts();
        self.inner.mounts.iter().flat_map(|link| link.listed())
    }

    /// Forwards a call to the upstream `link` (its tool `upstream_name`), in a `tools/call`
    /// span of its own, inside the server's middleware (which sees the call under its listed
    /// name, as tool and action); the upstream's rate limit spends the budget of the call's key.
    #[allow(clippy::too_many_arguments)] // each is one fact about the call, named at the call site
    async fn call_mounted(
        &self,
        link: &Arc<super::gateway::Link>,
        name: &str,
        upstream_name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        extensions: rmcp::model::Extensions,
        request: Request,
        cancelled: impl Future<Output = ()>,
    ) -> Called {
        use crate::middleware::{CallInfo, Next};
        use crate::tool::{Failure, catching};
        use tracing::Instrument;

        #[cfg(feature = "otel")]
        let started = std::time::Instant::now();
        let mut request = request;
        let span = open_call_span(name, &extensions, &mut request);
        span.record("upstream", tracing::field::display(&link.namespace));
        span.record("action", name);
        let forwarding = &self.inner.forwarding;
        let sent = arguments.is_some();
        let mut info = CallInfo {
            tool: name.to_owned(),
            action: name.to_owned(),
            arguments: serde_json::Value::Object(arguments.unwrap_or_default()),
            extensions,
        };
        let call = async {
            let mut cancelled = std::pin::pin!(cancelled);
            // Routing and the limits first, the middleware next, as for the server's own tools
            // (ERRORS.md §4).
            let key = pipeline::rate_key(forwarding.key.as_ref(), &info);
            let admitted = tokio::select! {
                biased;
                () = &mut cancelled => return None,
                admitted = link.admit(upstream_name, key.as_deref()) => admitted,
            };
            let admitted = match admitted {
                Ok(admitted) => admitted,
                Err(refused) => return Some(refused.into()),
            };
            // The middleware sees the arguments; they are forwarded without a copy when there
            // is none.
            let arguments = match forwarding.middleware.is_empty() {
                true => std::mem::take(&mut info.arguments),
                false => info.arguments.clone(),
            };
            let arguments = match arguments {
                serde_json::Value::Object(map) if sent => Some(map),
                _ => None,
            };
            let forwarded = Box::new(move || -> crate::tool::BoxFuture<'_, _> {
                Box::pin(async move {
                    link.forward(admitted, upstream_name, arguments, request)
                        .await
                        .map_err(Failure::Tool)
                })
            });
            let next = Next::new(&forwarding.middleware, &info, forwarded);
            tokio::select! {
                biased;
                // Dropping the forwarded call tells the upstream.
                () = &mut cancelled => None,
                outcome = catching(|| next.run()) => {
                    Some(crate::tool::settle(name, outcome, forwarding.expose_causes))
                }
            }
        };
        match call.instrument(span.clone()).await {
            Some(answer) => {
                #[cfg(feature = "otel")]
                otel::finish(
                    &self.inner.instruments,
                    &span,
                    name,
                    Some(name),
                    &answer,
                    started.elapsed(),
                );
                Called::Answered(answer)
            }
            None => Called::Cancelled {
                action: Arc::from(name),
            },
        }
    }
}

/// The span of one `tools/call` of `tool_name`, with the verified caller's subject
/// (OpenTelemetry's `enduser.id`, never its token) and the client's trace context; with
/// OpenTelemetry recording, its span id is the call's own (which `request` then carries).
fn open_call_span(
    tool_name: &str,
    extensions: &rmcp::model::Extensions,
    request: &mut Request,
) -> tracing::Span {
    #[cfg(not(feature = "otel"))]
    let span = call_span!(tool_name);
    // The OpenTelemetry name and attributes of the semantic conventions for MCP.
    #[cfg(feature = "otel")]
    let span = call_span!(
        tool_name,
        otel.name = %format_args!("tools/call {tool_name}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = %tool_name,
    );
    #[cfg(feature = "otel")]
    if let (Some(own), Some((_, span_id))) = (
        otel::start(&span, request.trace.as_ref().map(|(trace, _)| trace)),
        request.trace.as_mut(),
    ) {
        *span_id = own;
    }
    if let Some(caller) = crate::tools::Caller::of(extensions) {
        span.record("enduser.id", caller.subject());
    }
    if let Some((trace, span_id)) = &request.trace {
        span.record("trace_id", tracing::field::display(trace.trace_id()));
        span.record("parent_span_id", tracing::field::display(trace.parent_id()));
        span.record("span_id", tracing::field::display(span_id));
    }
    span
}

/// The span of one `tools/call`: its tool, and the fields recorded once known; `tracing`'s
/// macros take no `cfg` per field, so a feature adds its own fields through `$extra`.
macro_rules! call_span {
    ($tool:expr $(, $($extra:tt)*)?) => {
        tracing::info_span!(
            target: "mcp_fusion",
            "tools/call",
            $($($extra)*)?
            tool = %$tool,
            action = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
            enduser.id = tracing::field::Empty,
            upstream = tracing::field::Empty,
        )
    };
}
use call_span;

/// How a `tools/call` ended.
enum Called {
    Answered(crate::tools::Answer),
    UnknownTool,
    /// The client cancelled it while the named action was on its way.
    Cancelled {
        action: Arc<str>,
    },
}

/// Why serving stopped early: what failed, with the underlying error as its
/// [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct ServeError {
    stage: &'static str,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl ServeError {
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    fn new(stage: &'static str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        ServeError {
            stage,
            source: Box::new(source),
        }
    }
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the MCP server stopped: {}", self.stage)
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// The drain period when an action has no deadline of its own.
const DRAIN_WITHOUT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

impl Server {
    /// The longest time a call may run: the longest action deadline, or
    /// [`DRAIN_WITHOUT_DEADLINE`] when an action has none.
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    pub(crate) fn longest_deadline(&self) -> std::time::Duration {
        self.definitions()
            .flat_map(|def| def.actions())
            .map(|action| action.timeout().unwrap_or(DRAIN_WITHOUT_DEADLINE))
            .max()
            .unwrap_or(std::time::Duration::ZERO)
    }
}

/// Serving in progress, on stdio or streamable HTTP: `.await` it. With
/// [`with_graceful_shutdown`](Serve::with_graceful_shutdown), it stops on a signal: new calls
/// are refused (HTTP: 503 with `Retry-After`; stdio: SERVER_BUSY, `Tool "{tool}" cannot take
/// calls right now.`), the calls in flight finish within the drain period, sessions are
/// closed, and the future completes.
///
/// ```no_run
/// # async fn run(server: mcp_fusion::Server) -> Result<(), mcp_fusion::server::ServeError> {
/// use mcp_fusion::server::StdioOptions;
///
/// let stop = async { tokio::signal::ctrl_c().await.unwrap_or(()) };
/// server.serve_stdio(StdioOptions::default()).with_graceful_shutdown(stop).await
/// # }
/// ```
#[must_use = "serving starts when it is awaited"]
pub struct Serve {
    run: Box<Run>,
    shutdown: Option<Shutdown>,
}

/// A shutdown signal.
pub(crate) type Shutdown = BoxFuture<'static, ()>;

/// What serves until it stops, given its shutdown signal.
type Run = dyn FnOnce(Option<Shutdown>) -> BoxFuture<'static, Result<(), ServeError>> + Send;

impl Serve {
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    fn new(
        run: impl FnOnce(Option<Shutdown>) -> BoxFuture<'static, Result<(), ServeError>>
        + Send
        + 'static,
    ) -> Self {
        Serve {
            run: Box::new(run),
            shutdown: None,
        }
    }

    /// Stops serving gracefully once `signal` completes (a SIGTERM, Ctrl-C, an application's
    /// own shutdown).
    pub fn with_graceful_shutdown(
        mut self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("graceful", &self.shutdown.is_some())
            .finish_non_exhaustive()
    }
}

impl IntoFuture for Serve {
    type Output = Result<(), ServeError>;
    type IntoFuture = BoxFuture<'static, Result<(), ServeError>>;

    fn into_future(self) -> Self::IntoFuture {
        (self.run)(self.shutdown)
    }
}

impl ToolSet for Server {
    fn tool_definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.definitions()
    }

    #[cfg(feature = "gateway")]
    fn upstreams(&self) -> Vec<crate::contract::UpstreamContract> {
        self.inner
            .mounts
            .iter()
            .filter_map(|link| link.contract())
            .collect()
    }
}
