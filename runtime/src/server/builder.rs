//! Describing a server: its settings, tools, sources of tools and the user's own handler are
//! collected in any order; [`build`] makes each tool's pipeline once, with the final settings,
//! or says every problem at once (`build.rs`).
//!
//! [`build`]: ServerBuilder::build

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Implementation;

use crate::contract::Contract;
use crate::middleware::{CallInfo, Middleware};
use crate::tool::{Exposition, Tool};

use super::admission::{RateConfig, RateLimitKey};
use super::core::Server;
use super::limits::LimitStore;
use super::source::PendingSource;
use super::user::UserHandler;

/// How long a handler's ask of its client waits by default.
pub(crate) const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// A server being described: settings and tools in any order, then [`build`](Self::build).
///
/// ```
/// use mcp_fusion::middleware::Audit;
/// use mcp_fusion::{Server, ToolError, tool};
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
/// let server = Server::builder("clock", "1.0.0").tool(Clock).middleware(Audit).build()?;
/// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["clock"]);
/// # Ok::<(), mcp_fusion::server::BuildError>(())
/// ```
#[must_use = "a builder does nothing until it is built"]
pub struct ServerBuilder {
    pub(super) info: Implementation,
    pub(super) instructions: Option<String>,
    pub(super) tools: Vec<(Arc<dyn Tool>, ToolSettings)>,
    pub(super) exposition: Exposition,
    pub(super) middleware: Vec<Arc<dyn Middleware>>,
    pub(super) rates: RateConfig,
    pub(super) expose_causes: bool,
    pub(super) locked: Option<Contract>,
    pub(super) max_contract_changes: Option<usize>,
    /// Settings given, for those that may not apply to any tool.
    pub(super) store_given: bool,
    /// Sources of tools beside the server's own (a gateway's upstreams), being described.
    pub(super) sources: Vec<Box<dyn PendingSource>>,
    /// The user's handler, for every request that is not about tools.
    pub(super) handler: Option<Arc<dyn UserHandler>>,
    /// How long a handler's ask of its client waits.
    pub(super) ask_timeout: Duration,
    /// The secret 2026-07-28 rounds are sealed with, when replicas share one.
    pub(super) request_state_secret: Option<Vec<u8>>,
    pub(super) request_state_ttl: Duration,
    /// Who to tell what changed, handed out before the server is built.
    pub(super) changes: super::changes::Changes,
    /// Where tasks live, and what each is told.
    pub(super) tasks: super::tasks::TaskConfig,
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// What one tool of a server sets for itself, beside the server's settings: for the settings
/// that must differ per tool (as axum's `route_layer` is a route's own layer).
///
/// ```
/// use mcp_fusion::middleware::Audit;
/// use mcp_fusion::server::ToolSettings;
/// use mcp_fusion::tools::Exposition;
///
/// let settings = ToolSettings::new().middleware(Audit).exposition(Exposition::Flat);
/// # let _ = settings;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct ToolSettings {
    pub(super) middleware: Vec<Arc<dyn Middleware>>,
    pub(super) exposition: Option<Exposition>,
    pub(super) store: Option<Arc<dyn LimitStore>>,
}

impl fmt::Debug for ToolSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSettings")
            .field("middleware", &self.middleware.len())
            .field("exposition", &self.exposition)
            .field("own store", &self.store.is_some())
            .finish()
    }
}

impl ToolSettings {
    /// No settings of its own: the server's.
    pub fn new() -> Self {
        Self::default()
    }

    /// Middleware around this tool's handlers only, inside the server's middleware.
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// How this tool is listed, over the server's [`ServerBuilder::exposition`] and the tool's
    /// own `#[tool(exposition = "..")]`. A tool of one action has no discriminator to list flat:
    /// setting it there is a build error.
    pub fn exposition(mut self, exposition: Exposition) -> Self {
        self.exposition = Some(exposition);
        self
    }

    /// Keeps this tool's limits in a store of its own rather than the server's
    /// ([`ServerBuilder::limit_store`]): some tools limited fleet-wide on Redis, others in
    /// this process. A build error when the tool has no limit.
    pub fn limit_store(mut self, store: impl LimitStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }
}

impl Server {
    /// Starts describing a server named `name`, version `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            exposition: Exposition::Grouped,
            middleware: Vec::new(),
            rates: RateConfig::default(),
            expose_causes: false,
            locked: None,
            max_contract_changes: None,
            store_given: false,
            sources: Vec::new(),
            handler: None,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            request_state_secret: None,
            request_state_ttl: super::rounds::DEFAULT_TTL,
            changes: Default::default(),
            tasks: Default::default(),
        }
    }
}

impl ServerBuilder {
    /// Serves everything that is not a tool with your own rmcp `ServerHandler`: prompts,
    /// resources, completion, `logging/setLevel`, tasks, custom requests, and the notifications
    /// a client sends. Subscriptions are the server's (`resources/subscribe` and
    /// `resources/unsubscribe` before MCP 2026-07-28, `subscriptions/listen` from it): your code
    /// tells it what changed through [`changes`](Self::changes), and every client that asked is
    /// told. The server's tools stay this crate's
    /// (the handler's capabilities are merged with them in `initialize` and `server/discover`;
    /// a handler that declares the tools capability is a build error), and every request the
    /// handler answers goes through the same transports, limits, OAuth and graceful shutdown:
    /// it is stopped when the client cancels it, its panic is answered, and a shutdown drains
    /// it like a call.
    ///
    /// ```
    /// use mcp_fusion::rmcp::model::*;
    /// use mcp_fusion::rmcp::service::RequestContext;
    /// use mcp_fusion::rmcp::{ErrorData, RoleServer, ServerHandler};
    /// use mcp_fusion::{Server, ToolError, tool};
    ///
    /// struct Prompts;
    ///
    /// impl ServerHandler for Prompts {
    ///     fn get_info(&self) -> ServerConfig {
    ///         ServerConfig::new(ServerCapabilities::builder().enable_prompts().build())
    ///     }
    ///
    ///     async fn list_prompts(
    ///         &self,
    ///         _request: Option<PaginatedRequestParams>,
    ///         _context: RequestContext<RoleServer>,
    ///     ) -> Result<ListPromptsResult, ErrorData> {
    ///         Ok(ListPromptsResult::with_all_items(vec![Prompt::new("greet", Some("Greets."), None)]))
    ///     }
    /// }
    ///
    /// /// Pings.
    /// #[tool]
    /// async fn ping() -> Result<&'static str, ToolError> {
    ///     Ok("pong")
    /// }
    ///
    /// let server = Server::builder("desk", "1.0.0").tool(PingTool).handler(Prompts).build()?;
    /// let info = ServerHandler::get_info(&server);
    /// assert!(info.capabilities.tools.is_some() && info.capabilities.prompts.is_some());
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    pub fn handler(mut self, handler: impl rmcp::ServerHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The handle that tells this server's clients what changed (a resource's content, the
    /// listing of tools, prompts or resources), to give whatever changes things before the
    /// server is built: a tool, your own handler, a background task. The built server keeps
    /// the same handle ([`Server::changes`](crate::Server::changes)).
    ///
    /// ```
    /// use mcp_fusion::{Server, ToolError, tool};
    ///
    /// /// Pings.
    /// #[tool]
    /// async fn ping() -> Result<&'static str, ToolError> {
    ///     Ok("pong")
    /// }
    ///
    /// let builder = Server::builder("s", "1").tool(PingTool);
    /// let changes = builder.changes();
    /// let server = builder.build()?;
    /// changes.tool_list_changed();
    /// # let _ = server;
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    pub fn changes(&self) -> super::Changes {
        self.changes.clone()
    }

    /// How long a handler's ask of its client ([`Context::elicit`](crate::Context::elicit),
    /// [`Context::sample`](crate::Context::sample), [`Context::roots`](crate::Context::roots))
    /// waits for the answer (10 minutes by default): past it, the ask fails with
    /// `AskError::TimedOut`, which the model reads as a TIMEOUT saying the user (or the
    /// client's model) did not answer in time. The action's deadline stands still meanwhile.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = mcp_fusion::Server::builder("desk", "1.0.0").ask_timeout(Duration::from_secs(120));
    /// # let _ = builder;
    /// ```
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// The secret (32 bytes or more) the `requestState` of a 2026-07-28 call that asks its
    /// client is sealed with (HMAC-SHA-256, rmcp's `RequestStateCodec`), bound to the server's
    /// name, the tool, the arguments and the verified caller (OAuth's subject), good for 15
    /// minutes (`request_state_ttl`). Without OAuth there is no caller to bind: a state works for
    /// whoever holds it. Replicas behind a load balancer need the same secret, so that the next
    /// round of a call may land on any of them; without one, each process seals with a random
    /// secret of its own, and a round answered elsewhere is refused (a JSON-RPC error, -32602:
    /// the client calls again from the start). A state carries one retry: it is spent as it is
    /// opened, on the replica that opened it (the others do not know). A shorter secret is a
    /// build error.
    ///
    /// ```
    /// # fn replica() -> Result<(), Box<dyn std::error::Error>> {
    /// let secret = std::env::var("REQUEST_STATE_SECRET")?;
    /// let builder = mcp_fusion::Server::builder("desk", "1.0.0").request_state_secret(secret);
    /// # let _ = builder; Ok(()) }
    /// ```
    pub fn request_state_secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.request_state_secret = Some(secret.into());
        self
    }

    /// How long the `requestState` of a 2026-07-28 round is good for (15 minutes by default):
    /// a call retried later is refused (a JSON-RPC error, -32602), and the client calls again
    /// from the start. Each state carries one retry, whenever it comes within that time.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = mcp_fusion::Server::builder("desk", "1.0.0")
    ///     .request_state_ttl(Duration::from_secs(5 * 60));
    /// # let _ = builder;
    /// ```
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// The source of type `P` being described, added the first time it is asked for.
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn source_mut<P: PendingSource + Default>(&mut self) -> &mut P {
        let at = self
            .sources
            .iter()
            .position(|source| source.as_any().is::<P>());
        let at = match at {
            Some(at) => at,
            None => {
                self.sources.push(Box::new(P::default()));
                self.sources.len() - 1
            }
        };
        self.sources[at]
            .as_any_mut()
            .downcast_mut()
            .expect("the source found is of this type")
    }

    /// Serves a tool, with the server's settings.
    pub fn tool(self, tool: impl Tool) -> Self {
        self.tool_with(tool, ToolSettings::new())
    }

    /// Serves a tool, with settings of its own beside the server's.
    ///
    /// ```
    /// use mcp_fusion::middleware::Audit;
    /// use mcp_fusion::server::ToolSettings;
    /// use mcp_fusion::{Server, ToolError, tool};
    ///
    /// /// Pings.
    /// #[tool]
    /// async fn ping() -> Result<&'static str, ToolError> {
    ///     Ok("pong")
    /// }
    ///
    /// let server = Server::builder("s", "1")
    ///     .tool_with(PingTool, ToolSettings::new().middleware(Audit))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    pub fn tool_with(mut self, tool: impl Tool, settings: ToolSettings) -> Self {
        self.tools.push((Arc::new(tool), settings));
        self
    }

    /// Instructions for the client, sent at initialization.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// How tools of several actions that choose none are listed and called: one MCP tool each
    /// with an `action` field (grouped, the default), or one MCP tool per action named
    /// `{tool}_{action}` (flat). A tool's own `#[tool(exposition = "..")]`, and
    /// [`ToolSettings::exposition`], come first.
    pub fn exposition(mut self, exposition: Exposition) -> Self {
        self.exposition = exposition;
        self
    }

    /// Adds middleware around every tool's handlers, outermost first (a tool's own, from
    /// [`ToolSettings::middleware`], runs inside).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Keys rate limits by caller: calls with the same key share a budget; calls without one
    /// share the tool's. The key sees the call's arguments whatever middleware runs, is never
    /// echoed and never kept (only its hash is). A build error when no tool has a rate limit.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let builder = mcp_fusion::Server::builder("billing-server", "1.0.0")
    ///     .rate_limit(120, Duration::from_secs(60))
    ///     .rate_limit_key(|call| {
    ///         let customer = call.arguments().get("customer_email")?.as_str()?;
    ///         Some(customer.to_owned())
    ///     });
    /// # let _ = builder;
    /// ```
    ///
    /// A caller verified by an OAuth resource server (streamable HTTP,
    /// [`HttpOptions::oauth`](crate::server::HttpOptions)) always spends its own budget, keyed
    /// by its subject; this key, when it gives one, then divides that subject's budget further,
    /// so no argument reaches another subject's budget. The two are joined unambiguously (the
    /// subject length-prefixed: `sub:{bytes}:{subject}:{key}`), so no subject or key, whatever
    /// it holds (`/`, `:`), names another's budget.
    pub fn rate_limit_key(
        mut self,
        key: impl Fn(&CallInfo) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.rates.key = Some(Arc::new(key) as RateLimitKey);
        self
    }

    /// A rate limit of `max` calls per `window` for every tool that declares none with
    /// `#[tool(rate_limit(..))]`; per caller with [`rate_limit_key`](Self::rate_limit_key).
    pub fn rate_limit(mut self, max: u64, window: Duration) -> Self {
        self.rates.default = Some(crate::tool::RateLimit { max, window });
        self
    }

    /// How many distinct rate-limit keys each keyed limit tracks at once in memory (100,000 by
    /// default, at most 64 bytes each), and each replica creates per limit in a Redis store
    /// (one Redis key per caller, expiring once the caller's budget is full again; the replica
    /// counts it until then, at most 80 bytes of its memory each). Keys whose budget is back to
    /// full are forgotten; past the cap, calls under a key not yet tracked share one overflow
    /// budget. Keys are those of [`rate_limit_key`](Self::rate_limit_key) and the subjects of
    /// callers verified over streamable HTTP (`HttpOptions::oauth`).
    pub fn max_rate_limit_keys(mut self, max: usize) -> Self {
        self.rates.max_keys = max;
        self
    }

    /// Keeps the limits in `store`: [`MemoryStore`](super::limits::MemoryStore) (the default:
    /// this process only) or `RedisStore` (feature `redis`: every replica that shares the
    /// Redis shares the limits). A build error when no tool has a limit.
    pub fn limit_store(mut self, store: impl LimitStore) -> Self {
        self.rates.store = Arc::new(store);
        self.store_given = true;
        self
    }

    /// The least time between two progress notifications of one call (100 ms by default);
    /// reports closer together are dropped, except a call's last (`done == total`).
    pub fn progress_interval(mut self, interval: Duration) -> Self {
        self.rates.progress_interval = interval;
        self
    }

    /// Sends the cause of INTERNAL_ERROR to the model as detail `cause`. For local
    /// development only: causes can hold secrets.
    pub fn expose_causes(mut self, expose: bool) -> Self {
        self.expose_causes = expose;
        self
    }

    /// Serves with the contract's lockfile: validation errors of actions whose contract
    /// changed since then tell the model what changed (ERRORS.md §7). See [`crate::contract`].
    /// A gateway lists the tools the lockfile records for a mounted upstream until it first
    /// reaches that upstream.
    ///
    /// ```
    /// use mcp_fusion::contract::Contract;
    ///
    /// # let lockfile = Contract::default().to_lockfile();
    /// let locked = Contract::from_lockfile(&lockfile).expect("a lockfile");
    /// let server = mcp_fusion::Server::builder("billing-server", "1.0.0").contract_lock(locked).build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    pub fn contract_lock(mut self, locked: Contract) -> Self {
        self.locked = Some(locked);
        self
    }

    /// How many changes a `<contract_awareness>` block shows (5 by default); all are counted.
    /// A build error without [`contract_lock`](Self::contract_lock).
    pub fn max_contract_changes(mut self, max: usize) -> Self {
        self.max_contract_changes = Some(max);
        self
    }

    /// Keeps the server's tasks (actions marked `#[action(task)]`) in `store`:
    /// [`MemoryTaskStore`](super::tasks::MemoryTaskStore) (the default: this process only) or a
    /// store every replica shares, so that any of them answers `tasks/get`, `tasks/update`
    /// and `tasks/cancel` for a task another runs.
    ///
    /// ```
    /// use mcp_fusion::server::tasks::MemoryTaskStore;
    /// let builder = mcp_fusion::Server::builder("billing-server", "1.0.0")
    ///     .task_store(MemoryTaskStore::new().max_tasks(1_000));
    /// # let _ = builder;
    /// ```
    pub fn task_store(mut self, store: impl super::tasks::TaskStore) -> Self {
        self.tasks.store = Arc::new(store);
        self
    }

    /// How long a task is kept from its creation (`ttlMs`, an hour by default): a task still
    /// running then is stopped and reads `failed`; any task is gone (an unknown id) after it.
    ///
    /// ```
    /// use std::time::Duration;
    /// let builder = mcp_fusion::Server::builder("s", "1").task_ttl(Duration::from_secs(600));
    /// # let _ = builder;
    /// ```
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// The interval clients are told to poll a task at (`pollIntervalMs`, 500 ms by default).
    ///
    /// ```
    /// use std::time::Duration;
    /// let builder = mcp_fusion::Server::builder("s", "1").task_poll_interval(Duration::from_secs(2));
    /// # let _ = builder;
    /// ```
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.tasks.poll_interval = interval;
        self
    }

    /// How long the replica running a task may go without renewing its lease on it (15 s by
    /// default; it renews every third of it) before the task reads `failed`: a replica that
    /// died leaves no task `working` for longer than that.
    ///
    /// ```
    /// use std::time::Duration;
    /// let builder = mcp_fusion::Server::builder("s", "1").task_lease(Duration::from_secs(30));
    /// # let _ = builder;
    /// ```
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.tasks.lease = lease;
        self
    }

    /// How many tasks one caller holds at once (1,000 by default), running or kept for their
    /// ttl; past it a call that would start one is answered with a RATE_LIMITED envelope
    /// saying so. A caller is its OAuth subject (streamable HTTP with `HttpOptions::oauth`);
    /// callers nobody verified are one caller together. The in-memory store also caps the
    /// tasks of all callers together ([`MemoryTaskStore::max_tasks`](super::tasks::MemoryTaskStore::max_tasks)).
    ///
    /// ```
    /// let builder = mcp_fusion::Server::builder("s", "1").max_tasks_per_caller(10);
    /// # let _ = builder;
    /// ```
    pub fn max_tasks_per_caller(mut self, max: usize) -> Self {
        self.tasks.max_per_caller = max;
        self
    }
}
