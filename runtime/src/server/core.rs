//! The transport-independent core of a server: its own tools, the sources of tools beside them
//! (a gateway's upstreams), the user's own handler for everything that is not a tool, and the
//! settings every call runs with. Transports hand it requests (`request`); `dispatch` routes
//! each MCP method, `call` runs each `tools/call`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Implementation;

use crate::contract::{ToolSet, UpstreamContract};
use crate::tool::{Handoffs, ToolDef};

use super::admission::RateConfig;
use super::registry::Registry;
use super::source::Sources;
use super::user::UserHandler;

/// An MCP server of tools built with this crate (and, beside them, your own handler's prompts,
/// resources and the rest): described with [`Server::builder`], then immutable and cheap to
/// clone (every clone is the same server).
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
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) registry: Registry,
    pub(crate) sources: Sources,
    /// Where a handler's handoff leads: the sources', when there are any.
    pub(crate) handoffs: Option<Arc<dyn Handoffs>>,
    /// The user's handler, for every request that is not about tools.
    pub(crate) handler: Arc<dyn UserHandler>,
    /// The rate-limit key and the progress interval every call runs with.
    pub(crate) rates: RateConfig,
    /// How long a handler's ask of its client waits for the answer.
    pub(crate) ask_timeout: Duration,
    /// The level each session set with `logging/setLevel`.
    pub(crate) levels: super::client::Levels,
    /// Who to tell what changed (`Changes`).
    pub(crate) changes: super::changes::Changes,
    /// Where tasks live, and what each is told.
    pub(crate) tasks: super::tasks::TaskConfig,
    /// The rounds of 2026-07-28 calls that ask their client.
    pub(crate) rounds: super::rounds::Rounds,
    /// Why budgets of verified callers (each its subject's) could not be kept as set up: the
    /// stores that would keep caller keys readable. Serving with OAuth is refused for them.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) unkeyed: Vec<String>,
    /// Calls whose arguments are large are validated one at a time (`call::LARGE_ARGUMENTS`).
    pub(crate) validating: tokio::sync::Semaphore,
    #[cfg(feature = "otel")]
    pub(crate) instruments: super::otel::Instruments,
    /// What the fast lane keeps in the server (`server::lane`).
    #[cfg(any(feature = "stdio", feature = "http"))]
    pub(crate) lane: super::lane::LaneState,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.inner.registry.by_name)
            .field("sources", &self.inner.sources)
            .finish_non_exhaustive()
    }
}

/// The drain period when an action has no deadline of its own.
pub(crate) const DRAIN_WITHOUT_DEADLINE: Duration = Duration::from_secs(30);

impl Server {
    /// The handle that tells this server's clients what changed: the one the builder gave
    /// ([`ServerBuilder::changes`](super::ServerBuilder::changes)).
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
    /// let server = Server::builder("s", "1").tool(PingTool).build()?;
    /// server.changes().resource_updated("file:///notes.txt");
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    pub fn changes(&self) -> super::Changes {
        self.inner.changes.clone()
    }

    /// The tools' names, in order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.definitions().map(ToolDef::name)
    }

    /// The tools' definitions, in order (also as [`ToolSet`], for the contract).
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.inner.registry.definitions()
    }

    /// The longest time a call may run: the longest action deadline, or
    /// [`DRAIN_WITHOUT_DEADLINE`] when an action has none.
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    pub(crate) fn longest_deadline(&self) -> Duration {
        self.definitions()
            .flat_map(|def| def.actions())
            .map(|action| action.timeout().unwrap_or(DRAIN_WITHOUT_DEADLINE))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// Starts every source of tools (once); inside a Tokio runtime.
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    pub(crate) fn start_sources(&self) {
        self.inner.sources.start();
    }

    /// Every tool as `tools/list` shows it: the server's own, then the sources'.
    pub(crate) async fn listed_tools(&self) -> Vec<rmcp::model::Tool> {
        let mut tools: Vec<rmcp::model::Tool> = self.inner.registry.listed().cloned().collect();
        if !self.inner.sources.is_empty() {
            tools.extend(self.inner.sources.list().await);
        }
        tools
    }

    /// The tool `tools/list` shows as `name`, as last known (a source's without waiting):
    /// rmcp's `ServerHandler::get_tool`, through which its streamable HTTP service checks a
    /// call's `Mcp-Param-*` headers against the fields the tool mirrors in them (SEP-2243).
    pub(crate) fn listed_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        if let Some(tool) = self.inner.registry.listed_tool(name) {
            return Some(tool.clone());
        }
        self.inner.sources.find(name)?.listed_tool(name)
    }

    /// The scopes a `tools/call` of `name` needs that `caller` lacks, as the OAuth resource
    /// server refuses them (`403 insufficient_scope`): for the server's own tools once routing
    /// and validation pass (ERRORS.md §4); for a source's, the source's. `None` when the
    /// caller may make the call, or when the pipeline will refuse it anyway.
    #[cfg(feature = "oauth")]
    pub(crate) fn refused_scopes(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        caller: &crate::tool::Caller,
    ) -> Option<Vec<String>> {
        if let Some(needed) = self.inner.registry.refused_scopes(name, arguments, caller) {
            return Some(needed.to_vec());
        }
        if self.inner.registry.find(name).is_some() {
            return None;
        }
        let needed = self.inner.sources.find(name)?.scopes(name, arguments)?;
        caller.lacks(&needed).next()?;
        Some(needed)
    }

    /// Every scope a call of this server may need, sorted, each once.
    #[cfg(feature = "oauth")]
    pub(crate) fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self.inner.registry.scopes().cloned().collect();
        for source in self.inner.sources.iter() {
            scopes.extend(source.all_scopes());
        }
        scopes.sort_unstable();
        scopes.dedup();
        scopes
    }

    /// Whether no call needs rmcp's check of `Mcp-Param-*` headers (2026-07-28, SEP-2243).
    #[cfg(feature = "http")]
    pub(crate) fn without_param_headers(&self) -> bool {
        !self.inner.registry.asks_param_headers()
            && self.inner.sources.iter().all(|s| !s.asks_param_headers())
    }
}

impl ToolSet for Server {
    fn tool_definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.definitions()
    }

    fn upstreams(&self) -> Vec<UpstreamContract> {
        self.inner
            .sources
            .iter()
            .flat_map(|source| source.contracts())
            .collect()
    }
}
