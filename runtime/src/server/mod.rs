//! Serving tools on the official Rust MCP SDK (rmcp): `tools/list` shows each tool with its
//! schema and annotations; `tools/call` runs the pipeline of ERRORS.md §4 with the server's
//! limits and middleware around each handler.

mod pipeline;
mod stdio_guard;

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

pub(crate) use pipeline::ContractNotes;
pub(crate) use pipeline::Pipeline;
pub use pipeline::RateLimitKey;

use crate::contract::{Contract, Diff, ToolSet};
use crate::middleware::{CallInfo, Middleware};
use crate::tool::{Tool, ToolDef, prepare};
use crate::{ContractChange, DEFAULT_MAX_CHANGES};

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

    /// Starts the server with its lockfile: validation errors of actions whose contract changed
    /// since then tell the model what changed (ERRORS.md §7). See [`crate::contract`].
    ///
    /// ```
    /// use mcp_fusion::contract::Contract;
    /// use mcp_fusion::server::Server;
    ///
    /// # let lockfile = Contract { tools: vec![] }.to_lockfile();
    /// let locked = Contract::from_lockfile(&lockfile).expect("a lockfile");
    /// let server = Server::new("billing-server", "1.0.0").contract_lock(locked);
    /// ```
    pub fn contract_lock(mut self, locked: Contract) -> Self {
        self.inner().locked = Some(locked);
        self.note_contract_changes();
        self
    }

    /// How many changes a `<contract_awareness>` block shows (default 5); all are counted.
    pub fn max_contract_changes(mut self, max: usize) -> Self {
        self.inner().max_contract_changes = max;
        self.note_contract_changes();
        self
    }

    /// Hands each tool's pipeline the changes that concern it.
    fn note_contract_changes(&mut self) {
        let inner = self.inner();
        let Some(locked) = &inner.locked else {
            return;
        };
        let running = Contract::of_tools(inner.tools.iter().map(|t| t.tool.definition()));
        let diff = Diff::between(locked, &running);
        let max = inner.max_contract_changes;
        for registered in &mut inner.tools {
            let changes: Vec<ContractChange> = diff
                .tool(registered.tool.definition().name())
                .iter()
                .filter(|c| c.severity.reaches_the_model())
                .cloned()
                .collect();
            let pipeline = Arc::get_mut(&mut registered.pipeline)
                .expect("a server is configured before it serves");
            pipeline.contract = (!changes.is_empty()).then_some(ContractNotes { changes, max });
        }
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

    /// Serves on stdin/stdout until the client disconnects. Every request with an id is
    /// answered, including valid JSON that rmcp's reader cannot hold (nesting deeper than 128,
    /// numbers beyond `f64`, lone surrogate escapes).
    ///
    /// When stdin/stdout are pipes (as when a client starts the server), they are read and
    /// written without tokio's blocking thread pool: several times the throughput with calls in
    /// flight. This needs a runtime with IO enabled (`#[tokio::main]` enables it).
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self
            .serve(stdio_guard::StdioGuard::new(rmcp::transport::stdio_pipes()))
            .await
            .map_err(|e| ServeError::new("initialization failed", e))?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::new("the serving task failed", e))?;
        Ok(())
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

impl ServerHandler for Server {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.inner
                .tools
                .iter()
                .map(|t| t.tool.definition().to_rmcp())
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        match self.call_with(request, context.extensions).await {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool: {}", cut(&name)),
                None,
            )),
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
        if STANDARD_REQUESTS.contains(&method) {
            return Err(ErrorData::invalid_params(
                format!("invalid params for {method}"),
                None,
            ));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {}", cut(method)),
            None,
        ))
    }
}

/// The requests of MCP a client may send a server.
const STANDARD_REQUESTS: &[&str] = &[
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
fn cut(name: &str) -> String {
    let mut out = String::new();
    crate::envelope::text::push_cut(&mut out, name);
    out
}

/// How [`Server::serve_http`] serves streamable HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so replicas can sit behind a load balancer.
    pub stateless: bool,
    /// The path the MCP endpoint is mounted at.
    pub path: String,
    /// Host names accepted in `Host` (DNS-rebinding protection); loopback names by default.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
        }
    }
}

impl Server {
    /// Serves streamable HTTP on `listener` (bind it to loopback unless you mean otherwise)
    /// until the process ends.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_fusion::server::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server.serve_http(listener, Default::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
    ) -> Result<(), ServeError> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };

        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts)
            .with_legacy_session_mode(!options.stateless);
        if options.stateless {
            config = config.with_json_response(true);
        }
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service(&options.path, service);
        axum::serve(listener, router)
            .await
            .map_err(|e| ServeError::new("the HTTP listener failed", e))
    }
}
