//! Serving tools on the official Rust MCP SDK (rmcp): `tools/list` shows each tool with its
//! schema and annotations; `tools/call` runs the pipeline of ERRORS.md §4 with the server's
//! limits and middleware around each handler.

mod contract;
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

#[cfg(feature = "http")]
pub use http::HttpOptions;
pub(crate) use pipeline::ContractNotes;
pub(crate) use pipeline::Pipeline;
use pipeline::RateConfig;
pub use pipeline::RateLimitKey;
pub(crate) use pipeline::Request;
#[cfg(feature = "stdio")]
pub use stdio::StdioOptions;

use crate::DEFAULT_MAX_CHANGES;
use crate::contract::{Contract, ToolSet};
use crate::middleware::{CallInfo, Middleware};
use crate::tool::{Exposition, Route, Tool, ToolDef, prepare};

/// An MCP server of tools built with this crate.
///
/// ```
/// use mcp_fusion::middleware::Audit;
/// use mcp_fusion::server::Server;
/// use mcp_fusion::{tool, ToolError};
///
/// struct Clock;
///
/// /// The time.
/// #[tool]
/// impl Clock {
///     /// Seconds since the epoch.
///     #[action(read_only)]
///     async fn now(&self) -> Result<u64, ToolError> {
///         Ok(1_764_000_000)
///     }
/// }
///
/// let server = Server::new("clock", "1.0.0").middleware(Audit).tool(Clock);
/// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["clock"]);
/// // `server.serve_stdio().await` serves it on stdin/stdout.
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<Registered>,
    /// Each MCP tool name: the registered tool, and for a flat tool the action it names.
    by_name: HashMap<String, (usize, Option<usize>)>,
    /// The exposition of tools that choose none.
    exposition: Exposition,
    middleware: Vec<Arc<dyn Middleware>>,
    rates: RateConfig,
    expose_causes: bool,
    /// The lockfile's contract, when the server was started with one.
    locked: Option<Contract>,
    max_contract_changes: usize,
    /// Calls whose arguments are large are validated one at a time (see [`LARGE_ARGUMENTS`]).
    validating: tokio::sync::Semaphore,
    #[cfg(feature = "otel")]
    instruments: otel::Instruments,
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
    /// A server named `name`, version `version`, with no tools yet.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Server {
            inner: Arc::new(Inner {
                info: Implementation::new(name, version),
                instructions: None,
                tools: Vec::new(),
                by_name: HashMap::new(),
                exposition: Exposition::Grouped,
                middleware: Vec::new(),
                rates: RateConfig::default(),
                expose_causes: false,
                locked: None,
                max_contract_changes: DEFAULT_MAX_CHANGES,
                validating: tokio::sync::Semaphore::new(1),
                #[cfg(feature = "otel")]
                instruments: otel::Instruments::new(),
            }),
        }
    }

    fn inner(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("a server is configured before it is cloned to serve")
    }

    /// Registers a tool. Its limits and the middleware registered so far apply to it.
    ///
    /// # Panics
    ///
    /// When the tool cannot be served as it advertises itself, or its name (or, served flat, an
    /// action's tool name) is taken: the message names the tool, the action, the field and the
    /// fix, as [`Server::try_tool`] returns it.
    pub fn tool(self, tool: impl Tool) -> Self {
        match self.try_tool(tool) {
            Ok(server) => server,
            Err(error) => panic!("{error}"),
        }
    }

    /// Registers a tool, or says why it cannot be served: a field named like the
    /// discriminator, arguments that are no object, a schema that does not compile, a name
    /// already taken.
    ///
    /// ```
    /// use mcp_fusion::server::Server;
    /// use mcp_fusion::{ActionDef, BoxFuture, Context, Failure, Tool, ToolDef};
    /// use mcp_fusion::rmcp::model::CallToolResult;
    ///
    /// struct Tickets(ToolDef);
    ///
    /// impl Tool for Tickets {
    ///     fn definition(&self) -> &ToolDef {
    ///         &self.0
    ///     }
    ///     fn invoke(&self, _: usize, _: serde_json::Value, _: Context) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
    ///         Box::pin(async { Ok(CallToolResult::success(vec![])) })
    ///     }
    /// }
    ///
    /// let schema = serde_json::json!({"type": "object", "properties": {"action": {"type": "string"}}});
    /// let tickets = ToolDef::new("tickets").action(ActionDef::with_schema("move", schema)).build();
    /// let refused = Server::new("t", "1").try_tool(Tickets(tickets)).unwrap_err();
    /// assert!(refused.to_string().contains("the argument field \"action\" has the name of the discriminator"));
    /// ```
    pub fn try_tool(mut self, tool: impl Tool) -> Result<Self, RegistrationError> {
        let inner = self.inner();
        let def = tool.definition();
        let exposition = def.exposition().unwrap_or(inner.exposition);
        let mut problems = def.problems(exposition);
        problems.extend(pipeline::limit_problems(def, &*inner.rates.store));
        let listed = def.listed(exposition);
        let flat = def.discriminator().is_some() && exposition == Exposition::Flat;
        let names: Vec<(String, Option<usize>)> = match flat {
            true => listed
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.to_string(), Some(i)))
                .collect(),
            false => vec![(def.name().to_owned(), None)],
        };
        for (name, action) in &names {
            if inner.by_name.contains_key(name) {
                let what = match action {
                    Some(i) => format!(
                        "the flat tool \"{name}\" (action \"{}\")",
                        def.actions()[*i].qualified()
                    ),
                    None => format!("the tool \"{name}\""),
                };
                problems.push(format!(
                    "{what}: a tool of this name is already registered; rename one (#[tool(name = \"...\")], #[action(name = \"...\")])"
                ));
            }
        }
        if !problems.is_empty() {
            return Err(RegistrationError {
                tool: def.name().to_owned(),
                problems,
            });
        }
        let mut pipeline = Pipeline::new(
            def,
            inner.middleware.clone(),
            &inner.rates,
            inner.expose_causes,
        );
        pipeline.flat = flat;
        let index = inner.tools.len();
        for (name, action) in names {
            inner.by_name.insert(name, (index, action));
        }
        inner.tools.push(Registered {
            tool: Arc::new(tool),
            pipeline: Arc::new(pipeline),
            listed,
        });
        self.note_contract_changes();
        Ok(self)
    }

    /// How tools of several actions that choose none (`#[tool(exposition = "..")]`) are shown
    /// and called, for the tools registered after it: one MCP tool each with an `action` field
    /// (grouped, the default), or one MCP tool per action named `{tool}_{action}` (flat).
    ///
    /// ```
    /// use mcp_fusion::Exposition;
    /// use mcp_fusion::server::Server;
    ///
    /// let server = Server::new("billing-server", "1.0.0").exposition(Exposition::Flat);
    /// # let _ = server;
    /// ```
    pub fn exposition(mut self, exposition: Exposition) -> Self {
        self.inner().exposition = exposition;
        self
    }

    /// The registered tools' definitions, in order (also as [`ToolSet`], for the contract).
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.inner.tools.iter().map(|t| t.tool.definition())
    }

    /// Adds middleware around the handlers of the tools registered after it, outermost first.
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.inner().middleware.push(Arc::new(middleware));
        self
    }

    /// Keys rate limits by caller (for the tools registered after it): calls with the same key
    /// share a budget; calls without one share the tool's. The key sees the call's arguments
    /// whatever middleware is registered, is never echoed and never kept (only its hash is).
    ///
    /// ```
    /// use mcp_fusion::server::Server;
    ///
    /// let server = Server::new("billing-server", "1.0.0").rate_limit_key(|call| {
    ///     let customer = call.arguments().get("customer_email")?.as_str()?;
    ///     Some(customer.to_owned())
    /// });
    /// # let _ = server;
    /// ```
    pub fn rate_limit_key(
        mut self,
        key: impl Fn(&CallInfo) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.inner().rates.key = Some(Arc::new(key));
        self
    }

    /// A rate limit of `max` calls per `window` for each tool registered after it that declares
    /// none with `#[tool(rate_limit(..))]`; per caller with [`Server::rate_limit_key`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_fusion::server::Server;
    ///
    /// let server = Server::new("billing-server", "1.0.0").rate_limit(120, Duration::from_secs(60));
    /// # let _ = server;
    /// ```
    pub fn rate_limit(mut self, max: u64, window: std::time::Duration) -> Self {
        self.inner().rates.default = Some(crate::tool::RateLimit { max, window });
        self
    }

    /// How many distinct rate-limit keys each keyed limit (of the tools registered after it)
    /// tracks at once in memory; 100,000 by default, at most 64 bytes each (a Redis store
    /// keeps one key per caller, expiring once the caller's budget is full again). Keys whose budget is back to full are
    /// forgotten; past the cap, calls under a key not yet tracked share one overflow budget
    /// (a caller already tracked keeps its own).
    ///
    /// ```
    /// use mcp_fusion::server::Server;
    ///
    /// let server = Server::new("billing-server", "1.0.0").max_rate_limit_keys(10_000);
    /// # let _ = server;
    /// ```
    pub fn max_rate_limit_keys(mut self, max: usize) -> Self {
        self.inner().rates.max_keys = max;
        self
    }

    /// Keeps the limits of the tools registered after it in `store`: [`limits::MemoryStore`]
    /// (the default: this process only) or `limits::RedisStore` (feature `redis`: every
    /// replica that shares the Redis shares the limits).
    ///
    /// ```
    /// use mcp_fusion::server::Server;
    /// use mcp_fusion::server::limits::MemoryStore;
    ///
    /// let server = Server::new("billing-server", "1.0.0").limit_store(MemoryStore::new());
    /// # let _ = server;
    /// ```
    pub fn limit_store(mut self, store: impl limits::LimitStore) -> Self {
        self.inner().rates.store = Arc::new(store);
        self
    }

    /// The least time between two progress notifications of one call (100 ms by default);
    /// reports closer together are dropped, except a call's last (`done == total`).
    ///
    /// ```
    /// let server = mcp_fusion::server::Server::new("billing-server", "1.0.0")
    ///     .progress_interval(std::time::Duration::from_millis(250));
    /// # let _ = server;
    /// ```
    pub fn progress_interval(mut self, interval: std::time::Duration) -> Self {
        self.inner().rates.progress_interval = interval;
        self
    }

    /// Sends the cause of INTERNAL_ERROR to the model as detail `cause` (for the tools
    /// registered after it). For local development only: causes can hold secrets.
    pub fn expose_causes(mut self, expose: bool) -> Self {
        self.inner().expose_causes = expose;
        self
    }

    /// Instructions for the client, sent at initialization.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.inner().instructions = Some(instructions.into());
        self
    }

    /// The registered tools' names, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.inner.tools.iter().map(|t| t.tool.definition().name())
    }

    /// Runs one `tools/call` in process, as the transports do. `None` when no tool has this
    /// name (a JSON-RPC error on the wire, as MCP requires).
    pub async fn call(&self, params: CallToolRequestParams) -> Option<rmcp::model::CallToolResult> {
        let extensions = rmcp::model::Extensions::new();
        let request = Request::default();
        match self
            .call_with(params, extensions, request, std::future::pending())
            .await
        {
            Called::Answered(result) => Some(result),
            Called::UnknownTool | Called::Cancelled { .. } => None,
        }
    }

    /// Runs one `tools/call`; once `cancelled` completes, the call stops where it is (in the
    /// rate limit, in a concurrency queue, in the handler): its future is dropped, which gives
    /// back its slot or its place in the queue.
    ///
    /// Each call runs in a `tools/call` span (target `mcp_fusion`) with its tool and action and,
    /// when the client sent a trace context, its `trace_id`, the caller's `parent_span_id` and
    /// the server's own `span_id`.
    async fn call_with(
        &self,
        params: CallToolRequestParams,
        extensions: rmcp::model::Extensions,
        request: Request,
        cancelled: impl Future<Output = ()>,
    ) -> Called {
        use tracing::Instrument;

        let Some((registered, action)) = self
            .inner
            .by_name
            .get(params.name.as_ref())
            .and_then(|&(i, action)| Some((self.inner.tools.get(i)?, action)))
        else {
            return Called::UnknownTool;
        };
        let tool = &*registered.tool;
        let pipeline = &registered.pipeline;
        let route = action.map_or(Route::Discriminator, Route::Flat);
        let tool_name = tool.definition().name();
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
        let started = std::time::Instant::now();
        #[cfg(feature = "otel")]
        let mut request = request;
        // With OpenTelemetry recording, the call's span id is its span's.
        #[cfg(feature = "otel")]
        if let (Some(own), Some((_, span_id))) = (
            otel::start(&span, request.trace.as_ref().map(|(trace, _)| trace)),
            request.trace.as_mut(),
        ) {
            *span_id = own;
        }
        if let Some((trace, span_id)) = &request.trace {
            span.record("trace_id", tracing::field::display(trace.trace_id()));
            span.record("parent_span_id", tracing::field::display(trace.parent_id()));
            span.record("span_id", tracing::field::display(span_id));
        }
        let call = async {
            let large = large(params.arguments.as_ref());
            // Never closed.
            let gate = match large {
                true => self.inner.validating.acquire().await.ok(),
                false => None,
            };
            let prepared = prepare(tool.definition(), params.arguments, route);
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
        )
    };
}
use call_span;

/// How a `tools/call` ended.
enum Called {
    Answered(rmcp::model::CallToolResult),
    UnknownTool,
    /// The client cancelled it while the named action was on its way.
    Cancelled {
        action: Arc<str>,
    },
}

/// Why a tool could not be registered: every problem found, each naming the tool, the action,
/// the field and the fix.
#[derive(Debug, Clone)]
pub struct RegistrationError {
    tool: String,
    problems: Vec<String>,
}

impl RegistrationError {
    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Each problem, one sentence.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl std::fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot register tool \"{}\":", self.tool)?;
        for problem in &self.problems {
            write!(f, "\n- {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistrationError {}

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

impl ToolSet for Server {
    fn tool_definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.definitions()
    }
}
