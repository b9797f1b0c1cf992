//! Describing a server: its settings and tools are collected in any order, and [`build`]
//! makes each tool's pipeline once, with the final settings, or says every problem at once.
//!
//! [`build`]: ServerBuilder::build

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Implementation;

use super::limits::LimitStore;
use super::pipeline::{ContractNotes, Pipeline, RateConfig, RateLimitKey, limit_problems};
use super::{ByName, Inner, Registered, Server};
use crate::contract::{Contract, DEFAULT_MAX_CHANGES, Diff, OUTPUT};
use crate::middleware::{CallInfo, Middleware};
use crate::tool::{Exposition, Tool};

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
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<(Arc<dyn Tool>, ToolSettings)>,
    exposition: Exposition,
    middleware: Vec<Arc<dyn Middleware>>,
    rates: RateConfig,
    expose_causes: bool,
    locked: Option<Contract>,
    max_contract_changes: Option<usize>,
    /// Settings given, for those that may not apply to any tool.
    store_given: bool,
    /// Upstreams mounted under namespaces.
    #[cfg(feature = "gateway")]
    mounts: Vec<(String, super::gateway::Upstream)>,
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
    middleware: Vec<Arc<dyn Middleware>>,
    exposition: Option<Exposition>,
    store: Option<Arc<dyn LimitStore>>,
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
            #[cfg(feature = "gateway")]
            mounts: Vec::new(),
        }
    }
}

impl ServerBuilder {
    /// Mounts an upstream MCP server under `namespace` (lowercase ASCII letters, digits and
    /// `-`, starting with a letter): its tools are listed as `{namespace}_{tool}` and their
    /// calls forwarded to it ([`gateway`](crate::server::gateway)). The server keeps it connected from
    /// when serving starts (or from the first listing or call in process). A namespace that
    /// is not valid, mounted twice, or that a tool's listed name starts with is a build error.
    ///
    /// ```
    /// use mcp_fusion::Server;
    /// use mcp_fusion::gateway::Upstream;
    ///
    /// let server = Server::builder("front-desk", "1.0.0")
    ///     .mount("billing", Upstream::command("billing-server", ["--stdio"]))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    #[cfg(feature = "gateway")]
    pub fn mount(
        mut self,
        namespace: impl Into<String>,
        upstream: super::gateway::Upstream,
    ) -> Self {
        self.mounts.push((namespace.into(), upstream));
        self
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
    /// by its subject (`sub:{subject}`); this key, when it gives one, then divides that
    /// subject's budget further (`sub:{subject}/{key}`), so no argument reaches another
    /// subject's budget.
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
    /// default, at most 64 bytes each; a Redis store keeps one key per caller, expiring once
    /// the caller's budget is full again). Keys whose budget is back to full are forgotten;
    /// past the cap, calls under a key not yet tracked share one overflow budget. Keys are those
    /// of [`rate_limit_key`](Self::rate_limit_key) and the subjects of callers verified over
    /// streamable HTTP (`HttpOptions::oauth`).
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

    /// The server: each tool's pipeline made once with the final settings; or every problem
    /// of every tool and setting, each naming the tool, the action, the field and the fix.
    pub fn build(self) -> Result<Server, BuildError> {
        let mut problems = Vec::new();
        let mut by_name = ByName::default();
        let mut planned = Vec::with_capacity(self.tools.len());
        for (index, (tool, settings)) in self.tools.iter().enumerate() {
            let def = tool.definition();
            if settings.exposition.is_some() && def.discriminator().is_none() {
                problems.push(format!(
                    "tool \"{}\": it has one action, so it is one MCP tool whatever its exposition; remove ToolSettings::exposition",
                    def.name()
                ));
            }
            let exposition = settings
                .exposition
                .or(def.exposition())
                .unwrap_or(self.exposition);
            for (action, tag) in def.tagged_arguments() {
                tracing::warn!(
                    action,
                    tag,
                    "the arguments are alternatives told apart by \"{tag}\" (an internally tagged enum): a call that matches none is told only \"Expected a value matching one of the allowed shapes\" (ERRORS.md §5); for the model to be told what each shape needs, make each variant an action of the tool"
                );
            }
            problems.extend(def.problems(exposition));
            let store = settings.store.as_ref().unwrap_or(&self.rates.store);
            problems.extend(limit_problems(def, &**store));
            if settings.store.is_some() && !has_limits(def) {
                problems.push(format!(
                    "tool \"{}\": ToolSettings::limit_store, but the tool has no rate or concurrency limit to keep in it; declare one or remove the store",
                    def.name()
                ));
            }
            if let Some(own) = &settings.store
                && self.rates.key.is_some()
                && (self.rates.default.is_some() || has_rate_limits(def))
                && let Some(refused) = own.refuses_caller_keys()
            {
                problems.push(format!(
                    "tool \"{}\": rate_limit_key, kept in its own store (ToolSettings::limit_store): {refused}",
                    def.name()
                ));
            }
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
            for (name, action) in names {
                match by_name.entry(name) {
                    std::collections::hash_map::Entry::Vacant(free) => {
                        free.insert((index, action));
                    }
                    std::collections::hash_map::Entry::Occupied(taken) => {
                        let name = taken.key();
                        let what = match action {
                            Some(i) => format!(
                                "the flat tool \"{name}\" (action \"{}\")",
                                def.actions()[i].qualified()
                            ),
                            None => format!("the tool \"{name}\""),
                        };
                        problems.push(format!(
                            "{what}: another tool has this name; rename one (#[tool(name = \"...\")], #[action(name = \"...\")])"
                        ));
                    }
                }
            }
            planned.push((flat, listed));
        }
        problems.extend(self.settings_that_cannot_apply());
        #[cfg(feature = "gateway")]
        problems.extend(self.mount_problems(&by_name));
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }

        let diff = self.locked.as_ref().map(|locked| {
            // The server's own tools: the validation errors it writes are about them.
            let mut running = Contract::of_tools(self.tools.iter().map(|(t, _)| t.definition()));
            running.upstreams.clone_from(&locked.upstreams);
            Diff::between(locked, &running)
        });
        let max = self.max_contract_changes.unwrap_or(DEFAULT_MAX_CHANGES);
        #[cfg(feature = "gateway")]
        let subscribers = Arc::new(super::gateway::Subscribers::default());
        #[cfg(feature = "gateway")]
        let mounts: Arc<[Arc<super::gateway::Link>]> = self
            .mounts
            .into_iter()
            .map(|(namespace, upstream)| {
                let locked = self.locked.as_ref().and_then(|l| l.upstream(&namespace));
                super::gateway::Link::new(
                    namespace,
                    upstream,
                    Arc::clone(&subscribers),
                    &*self.rates.store,
                    self.rates.max_keys,
                    locked,
                )
            })
            .collect();
        let tools = self
            .tools
            .into_iter()
            .zip(planned)
            .map(|((tool, settings), (flat, listed))| {
                let def = tool.definition();
                let middleware = self.middleware.iter().chain(&settings.middleware).cloned();
                let mut rates = self.rates.clone();
                if let Some(store) = &settings.store {
                    rates.store = store.clone();
                }
                let mut pipeline =
                    Pipeline::new(def, middleware.collect(), &rates, self.expose_causes);
                pipeline.flat = flat;
                #[cfg(feature = "gateway")]
                if !mounts.is_empty() {
                    pipeline.mounts = Some(Arc::new(super::gateway::Mounts(Arc::clone(&mounts))));
                }
                pipeline.contract = diff.as_ref().and_then(|diff| {
                    let changes: Vec<_> = diff
                        .tool(def.name())
                        .iter()
                        .filter(|c| c.severity.reaches_the_model())
                        // An output change concerns the host that reads results, not the
                        // model's arguments (ERRORS.md §10 rule 8).
                        .filter(|c| !c.field.starts_with(OUTPUT))
                        .cloned()
                        .collect();
                    (!changes.is_empty()).then_some(ContractNotes { changes, max })
                });
                Registered {
                    tool,
                    pipeline: Arc::new(pipeline),
                    listed,
                }
            })
            .collect();
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                tools,
                by_name,
                listing: Default::default(),
                validating: tokio::sync::Semaphore::new(1),
                #[cfg(feature = "otel")]
                instruments: super::otel::Instruments::new(),
                #[cfg(feature = "gateway")]
                mounts,
                #[cfg(feature = "gateway")]
                subscribers,
                #[cfg(feature = "gateway")]
                forwarding: super::Forwarding {
                    middleware: self.middleware,
                    key: self.rates.key,
                    expose_causes: self.expose_causes,
                },
            }),
        })
    }

    /// Mounts whose namespace cannot be used.
    #[cfg(feature = "gateway")]
    fn mount_problems(&self, by_name: &ByName) -> Vec<String> {
        let mut problems = Vec::new();
        for (i, (namespace, _)) in self.mounts.iter().enumerate() {
            if !super::gateway::valid_namespace(namespace) {
                problems.push(format!(
                    "mount \"{namespace}\": a namespace is lowercase ASCII letters, digits and '-', starting with a letter, at most 32 characters"
                ));
            }
            if self.mounts[..i].iter().any(|(other, _)| other == namespace) {
                problems.push(format!(
                    "mount \"{namespace}\": this namespace is mounted twice; mount each upstream under a namespace of its own"
                ));
            }
            let prefix = format!("{namespace}{}", super::gateway::SEPARATOR);
            let mut taken: Vec<&String> =
                by_name.keys().filter(|n| n.starts_with(&prefix)).collect();
            taken.sort();
            if let Some(name) = taken.first() {
                problems.push(format!(
                    "mount \"{namespace}\": the tool \"{name}\" is listed under this namespace's prefix, so calls could not be told apart; rename the tool or choose another namespace"
                ));
            }
        }
        problems
    }

    /// Settings given that no tool would use: each a build error rather than a silent no-op.
    fn settings_that_cannot_apply(&self) -> Vec<String> {
        #[cfg(feature = "gateway")]
        let mounts_rate_limited = self.mounts.iter().any(|(_, u)| u.rate_limit.is_some());
        #[cfg(not(feature = "gateway"))]
        let mounts_rate_limited = false;
        let rate_limited = self.rates.default.is_some()
            || mounts_rate_limited
            || self
                .tools
                .iter()
                .any(|(t, _)| has_rate_limits(t.definition()));
        // The tools whose limits the server's store keeps.
        let kept = self
            .tools
            .iter()
            .filter(|(_, settings)| settings.store.is_none())
            .map(|(t, _)| t.definition());
        let limited = self.rates.default.is_some() || kept.clone().any(has_limits);
        #[cfg(feature = "gateway")]
        let limited = limited
            || self
                .mounts
                .iter()
                .any(|(_, u)| u.rate_limit.is_some() || u.concurrency.is_some());
        // Keyed budgets the server's store keeps (those of tools with a store of their own are
        // checked with that store).
        let keyed_kept = mounts_rate_limited
            || kept.clone().next().is_some()
                && (self.rates.default.is_some() || kept.clone().any(has_rate_limits));
        let mut problems = Vec::new();
        if self.rates.key.is_some() && !rate_limited {
            problems.push("rate_limit_key: no tool has a rate limit, so no call would be keyed; declare one (#[tool(rate_limit(..))], ServerBuilder::rate_limit) or remove the key".to_owned());
        }
        if self.rates.key.is_some()
            && keyed_kept
            && let Some(refused) = self.rates.store.refuses_caller_keys()
        {
            problems.push(format!("rate_limit_key: {refused}"));
        }
        if self.store_given && !limited {
            problems.push("limit_store: no tool has a rate or concurrency limit to keep in it; declare one or remove the store".to_owned());
        }
        if self.max_contract_changes.is_some() && self.locked.is_none() {
            problems.push("max_contract_changes: there is no contract lockfile whose changes it would count; set contract_lock or remove it".to_owned());
        }
        problems
    }
}

impl crate::contract::ToolSet for ServerBuilder {
    fn tool_definitions(&self) -> impl Iterator<Item = &crate::tool::ToolDef> {
        self.tools.iter().map(|(tool, _)| tool.definition())
    }
}

/// Whether a tool declares a rate or concurrency limit, its own or an action's.
fn has_limits(def: &crate::tool::ToolDef) -> bool {
    has_rate_limits(def)
        || def.concurrency().is_some()
        || def.actions().iter().any(|a| a.concurrency().is_some())
}

/// Whether a tool declares a rate limit, its own or an action's.
fn has_rate_limits(def: &crate::tool::ToolDef) -> bool {
    def.rate_limit().is_some() || def.actions().iter().any(|a| a.rate_limit().is_some())
}

/// Why a server could not be built: every problem of every tool and setting, each one
/// sentence naming the tool, the action, the field and the fix.
///
/// ```
/// use mcp_fusion::Server;
///
/// let refused = Server::builder("s", "1").max_contract_changes(3).build().unwrap_err();
/// assert!(refused.problems()[0].starts_with("max_contract_changes:"));
/// ```
#[derive(Debug, Clone)]
pub struct BuildError {
    problems: Vec<String>,
}

impl BuildError {
    /// Each problem, one sentence.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot build the MCP server:")?;
        for problem in &self.problems {
            write!(f, "\n- {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}
