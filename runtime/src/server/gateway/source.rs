//! The gateway as a source of tools beside the server's own: its upstreams' tools listed under
//! their namespaces, each call forwarded through the server's steps (`call::steps`): the
//! upstream's own limits, the server's middleware (which sees the call under its listed name,
//! as tool and action), `Upstream::call_timeout` as the deadline, the panic caught.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::link::{self, Link, Open};
use super::subscribers::Subscribers;
use super::{SEPARATOR, Upstream, valid_namespace};
use crate::ToolError;
use crate::contract::UpstreamContract;
use crate::middleware::{CallInfo, Middleware};
use crate::server::admission::{RateLimitKey, rate_key, slot_problem};
use crate::server::builder::ServerBuilder;
use crate::server::call::{Plan, Ran, Run, steps};
use crate::server::core::Server;
use crate::server::request::CallRequest;
use crate::server::source::{PendingSource, SourceSettings, Sourced, ToolSource};
use crate::tool::{Answer, BoxFuture, Context, Failure, Handoffs, settle};

/// How long a gateway's first `tools/list` waits for upstreams whose tools it does not know
/// yet (not reached, not in the lockfile) to list them or fail: a host that lists once sees
/// them all.
pub(crate) const FIRST_LISTING_WAIT: Duration = Duration::from_secs(5);

impl ServerBuilder {
    /// Mounts an upstream MCP server under `namespace` (lowercase ASCII letters, digits and
    /// `-`, starting with a letter): its tools are listed as `{namespace}_{tool}` and their
    /// calls forwarded to it ([`gateway`](crate::server::gateway)). The server keeps it connected from
    /// when serving starts (or from the first listing or call in process). A namespace that
    /// is not valid, mounted twice, or that a tool's listed name starts with is a build error.
    ///
    /// ```
    /// use mcp_fusion::Server;
    /// use mcp_fusion::server::gateway::Upstream;
    ///
    /// let server = Server::builder("front-desk", "1.0.0")
    ///     .mount("billing", Upstream::command("billing-server", ["--stdio"]))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_fusion::server::BuildError>(())
    /// ```
    pub fn mount(mut self, namespace: impl Into<String>, upstream: Upstream) -> Self {
        let pending = self.source_mut::<PendingMounts>();
        pending.0.push((namespace.into(), upstream));
        self
    }
}

impl Server {
    /// Connects every mounted upstream that is not connected yet and waits for each first
    /// attempt to end (each within its [`connect_timeout`](Upstream::connect_timeout)): the
    /// namespaces of the upstreams it could not reach, empty when all answer. A gateway
    /// connects when serving starts otherwise (or on its first listing or call in process);
    /// this is for a `main` that writes the lockfile ([`Contract::of`](crate::contract::Contract::of)
    /// then records every upstream's tools) or wants to know its upstreams answer before it
    /// serves.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::contract::Contract;
    /// use mcp_fusion::server::gateway::Upstream;
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
        let mut unreachable = Vec::new();
        for source in self.inner.sources.iter() {
            unreachable.extend(source.reach().await);
        }
        unreachable
    }
}

/// The upstreams mounted on a builder so far.
#[derive(Default)]
pub(crate) struct PendingMounts(pub(crate) Vec<(String, Upstream)>);

impl PendingSource for PendingMounts {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn limits(&self) -> (bool, bool) {
        let rate = self.0.iter().any(|(_, u)| u.rate_limit.is_some());
        let any = rate || self.0.iter().any(|(_, u)| u.concurrency.is_some());
        (rate, any)
    }

    fn build(
        self: Box<Self>,
        settings: &SourceSettings<'_>,
    ) -> Result<Arc<dyn ToolSource>, Vec<String>> {
        let mut problems = Vec::new();
        for (i, (namespace, upstream)) in self.0.iter().enumerate() {
            if !valid_namespace(namespace) {
                problems.push(format!(
                    "mount \"{namespace}\": a namespace is lowercase ASCII letters, digits and '-', starting with a letter, at most 32 characters"
                ));
            }
            if self.0[..i].iter().any(|(other, _)| other == namespace) {
                problems.push(format!(
                    "mount \"{namespace}\": this namespace is mounted twice; mount each upstream under a namespace of its own"
                ));
            }
            if let Some(name) = (settings.taken)(&format!("{namespace}{SEPARATOR}")) {
                problems.push(format!(
                    "mount \"{namespace}\": the tool \"{name}\" is listed under this namespace's prefix, so calls could not be told apart; rename the tool or choose another namespace"
                ));
            }
            if let Some(spec) = link::slot_spec(namespace, upstream)
                && let Some(problem) =
                    slot_problem(&spec, &*settings.rates.store, "Upstream::concurrency")
            {
                problems.push(format!("mount \"{namespace}\": {problem}"));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let subscribers = Arc::new(Subscribers::default());
        let rates = settings.rates;
        let links = self
            .0
            .into_iter()
            .map(|(namespace, upstream)| {
                let locked = settings.locked.and_then(|l| l.upstream(&namespace));
                Link::new(
                    namespace,
                    upstream,
                    Arc::clone(&subscribers),
                    &*rates.store,
                    rates.max_keys,
                    locked,
                )
            })
            .collect();
        Ok(Arc::new(Gateway {
            links,
            subscribers,
            middleware: settings.middleware.to_vec(),
            key: rates.key.clone(),
            expose_causes: settings.expose_causes,
            progress_interval: rates.progress_interval,
        }))
    }
}

/// A server's mounted upstreams.
pub(crate) struct Gateway {
    /// In mounting order.
    links: Vec<Arc<Link>>,
    subscribers: Arc<Subscribers>,
    /// The server's middleware, key and exposure of causes, for forwarded calls.
    middleware: Vec<Arc<dyn Middleware>>,
    key: Option<RateLimitKey>,
    expose_causes: bool,
    progress_interval: Duration,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("links", &self.links)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// The mount a listed name is under, and the upstream's own name for it.
    fn mounted<'a>(&self, name: &'a str) -> Option<(&Arc<Link>, &'a str)> {
        self.links
            .iter()
            .find_map(|link| Some((link, link.strip(name)?)))
    }

    /// Forwards a call through the server's steps.
    async fn forward(&self, call: CallRequest<'_>) -> Sourced {
        let CallRequest {
            name,
            arguments,
            progress,
            trace,
            extensions,
            client,
            round,
            ..
        } = call;
        let Some((link, upstream_name)) = self.mounted(&name) else {
            // The core asked the source that owns the name.
            let incident = crate::envelope::new_incident_id();
            return Sourced::Answered(ToolError::internal(&name, &incident, None).into());
        };
        let sent = arguments.is_some();
        let mut info = CallInfo {
            tool: std::borrow::Cow::Owned(name.to_string()),
            action: std::sync::Arc::from(&*name),
            arguments: Value::Object(arguments.unwrap_or_default()),
            extensions,
        };
        // The breaker tells callers apart as the rate limits do.
        let caller = rate_key(self.key.as_ref(), &info);
        link.start();
        let open = match link.open(upstream_name, caller.as_deref()) {
            Ok(open) => open,
            Err(refused) => return Sourced::Answered(refused.into()),
        };
        let connection = open.connection;
        let target = Forward {
            link,
            name: upstream_name,
            open,
            sent,
            caller: caller.as_deref(),
        };
        let plan = Plan {
            admission: link.admission(&name),
            key: self.key.as_ref(),
            middleware: &self.middleware,
            deadline: Some(link.upstream.call_timeout),
            heartbeat: None,
            progress_interval: self.progress_interval,
            handoffs: None,
        };
        let action = Arc::from(&*name);
        let ran = steps(
            &plan, &mut info, action, &target, progress, trace, client, round,
        );
        let answer: Answer = match ran.await {
            Ran::Refused(refused) => refused.into(),
            // A forward completes nothing: its upstream asks its own questions.
            Ran::Unfinished(answer) => answer,
            Ran::TimedOut(deadline) => {
                link.call_failed(connection, caller.as_deref());
                ToolError::timeout(&name, deadline).into()
            }
            Ran::Done(outcome, _) => settle(&name, outcome, self.expose_causes),
            Ran::InputRequired(asks) => return Sourced::InputRequired(asks),
        };
        Sourced::Answered(answer)
    }
}

/// A forwarded call, as the steps run it.
struct Forward<'a> {
    link: &'a Arc<Link>,
    /// The upstream's own name of the tool.
    name: &'a str,
    open: Open,
    /// Whether the client sent arguments (none are forwarded otherwise).
    sent: bool,
    caller: Option<&'a str>,
}

impl Run for Forward<'_> {
    fn run(&self, args: Value, context: Context) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
        let arguments = match args {
            Value::Object(map) if self.sent => Some(map),
            _ => None,
        };
        let open = self.open.clone();
        Box::pin(async move {
            (self.link)
                .forward(open, self.name, arguments, &context, self.caller)
                .await
                .map_err(Failure::Tool)
        })
    }
}

impl ToolSource for Gateway {
    fn start(&self) {
        self.links.iter().for_each(Link::start);
    }

    /// Waits for the upstreams whose first listing is still to come (tools unknown, first
    /// attempt to connect not ended) to list them or fail, at most [`FIRST_LISTING_WAIT`]; an
    /// upstream down since is not waited for.
    fn list(&self) -> BoxFuture<'_, Vec<Tool>> {
        Box::pin(async move {
            self.start();
            let unknown = (self.links.iter()).filter(|link| link.first_listing_pending());
            let first = unknown.map(|link| link.reached());
            let all = async {
                for attempt in first {
                    attempt.await;
                }
            };
            let _ = tokio::time::timeout(FIRST_LISTING_WAIT, all).await;
            self.listed()
        })
    }

    fn listed(&self) -> Vec<Tool> {
        self.links.iter().flat_map(|link| link.listed()).collect()
    }

    fn owns(&self, name: &str) -> bool {
        self.mounted(name).is_some()
    }

    fn listed_tool(&self, name: &str) -> Option<Tool> {
        let (link, upstream_name) = self.mounted(name)?;
        link.listed_tool(upstream_name)
    }

    fn call<'a>(&'a self, call: CallRequest<'a>) -> BoxFuture<'a, Sourced> {
        Box::pin(self.forward(call))
    }

    #[cfg(feature = "oauth")]
    fn scopes(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
    ) -> Option<Vec<String>> {
        let (link, upstream_name) = self.mounted(name)?;
        let scopes = link.scopes(upstream_name, arguments);
        (!scopes.is_empty()).then_some(scopes)
    }

    #[cfg(feature = "oauth")]
    fn all_scopes(&self) -> Vec<String> {
        self.links
            .iter()
            .flat_map(|link| link.all_scopes())
            .collect()
    }

    #[cfg(feature = "oauth")]
    fn unscoped(&self) -> Vec<String> {
        (self.links.iter())
            .filter(|link| link.all_scopes().is_empty())
            .map(|link| link.namespace.clone())
            .collect()
    }

    #[cfg(feature = "http")]
    fn asks_param_headers(&self) -> bool {
        // An upstream's tools may ask for `Mcp-Param-*` headers, and may change.
        true
    }

    fn session_started(&self, peer: Peer<RoleServer>) {
        self.subscribers.add(peer);
    }

    fn subscribe(&self, sink: SubscriptionSink) -> Box<dyn Send> {
        Box::new(self.subscribers.listen(sink))
    }

    fn contracts(&self) -> Vec<UpstreamContract> {
        self.links
            .iter()
            .filter_map(|link| link.contract())
            .collect()
    }

    fn reach(&self) -> BoxFuture<'_, Vec<String>> {
        Box::pin(async move {
            // All attempts run at once (each link's own task); they are awaited in turn.
            self.start();
            let mut unreachable = Vec::new();
            for link in &self.links {
                if !link.reached().await {
                    unreachable.push(link.namespace.clone());
                }
            }
            unreachable
        })
    }

    fn handoffs(self: Arc<Self>) -> Arc<dyn Handoffs> {
        self
    }
}

impl Handoffs for Gateway {
    fn tools_of(&self, namespace: &str) -> Option<Vec<String>> {
        let link = self.links.iter().find(|link| link.namespace == namespace)?;
        if tokio::runtime::Handle::try_current().is_ok() {
            link.start();
        }
        Some(
            link.listed()
                .into_iter()
                .map(|t| t.name.into_owned())
                .collect(),
        )
    }
}
