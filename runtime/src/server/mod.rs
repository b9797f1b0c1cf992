//! Serving tools on the official Rust MCP SDK (rmcp): `tools/list` shows each tool with its
//! schema and annotations; `tools/call` runs the pipeline of ERRORS.md §4 with the server's
//! limits and middleware around each handler.

mod contract;
mod handler;
#[cfg(feature = "http")]
mod http;
mod pipeline;
#[cfg(feature = "stdio")]
mod stdio;
#[cfg(feature = "stdio")]
mod stdio_guard;

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, Implementation};

#[cfg(feature = "http")]
pub use http::HttpOptions;
pub(crate) use pipeline::ContractNotes;
pub(crate) use pipeline::Pipeline;
pub use pipeline::RateLimitKey;

use crate::DEFAULT_MAX_CHANGES;
use crate::contract::{Contract, ToolSet};
use crate::middleware::{CallInfo, Middleware};
use crate::tool::{Tool, ToolDef, prepare};

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
    by_name: HashMap<String, usize>,
    middleware: Vec<Arc<dyn Middleware>>,
    rate_limit_key: Option<RateLimitKey>,
    expose_causes: bool,
    /// The lockfile's contract, when the server was started with one.
    locked: Option<Contract>,
    max_contract_changes: usize,
}

struct Registered {
    tool: Arc<dyn Tool>,
    pipeline: Arc<Pipeline>,
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
                middleware: Vec::new(),
                rate_limit_key: None,
                expose_causes: false,
                locked: None,
                max_contract_changes: DEFAULT_MAX_CHANGES,
            }),
        }
    }

    fn inner(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("a server is configured before it is cloned to serve")
    }

    /// Registers a tool. Its limits and the middleware registered so far apply to it.
    ///
    /// A second tool with the same name replaces the first.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        let inner = self.inner();
        let pipeline = Pipeline::new(
            tool.definition(),
            inner.middleware.clone(),
            inner.rate_limit_key.clone(),
            inner.expose_causes,
        );
        let registered = Registered {
            tool: Arc::new(tool),
            pipeline: Arc::new(pipeline),
        };
        let name = registered.tool.definition().name().to_owned();
        match inner.by_name.get(&name) {
            Some(&i) => inner.tools[i] = registered,
            None => {
                inner.by_name.insert(name, inner.tools.len());
                inner.tools.push(registered);
            }
        }
        self.note_contract_changes();
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
    /// share a budget; calls without one share the tool's. The key is never echoed.
    pub fn rate_limit_key(
        mut self,
        key: impl Fn(&CallInfo) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.inner().rate_limit_key = Some(Arc::new(key));
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
        self.call_with(params, rmcp::model::Extensions::new()).await
    }

    async fn call_with(
        &self,
        params: CallToolRequestParams,
        extensions: rmcp::model::Extensions,
    ) -> Option<rmcp::model::CallToolResult> {
        let registered = self
            .inner
            .by_name
            .get(params.name.as_ref())
            .and_then(|&i| self.inner.tools.get(i))?;
        let tool = &*registered.tool;
        let pipeline = &registered.pipeline;
        Some(match prepare(tool.definition(), params.arguments) {
            Ok(prepared) => pipeline.run(tool, prepared, extensions).await,
            Err(rejection) => pipeline.reject(tool.definition(), rejection),
        })
    }
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

impl ToolSet for Server {
    fn tool_definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.definitions()
    }
}
