//! One mounted upstream: its state (kept by its keeper, `keeper`), its last known tools, its
//! own limits and breaker, and the forwarding of calls to it.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ErrorCode, ProgressToken, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::{RoleClient, model::Tool};
use serde_json::{Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::breaker::{Breaker, Tripped};
use super::listing::Coalesced;
use super::relay::Asking;
use super::subscribers::Subscribers;
use super::{SEPARATOR, Upstream};
use crate::ToolError;
use crate::contract::UpstreamContract;
use crate::envelope::new_incident_id;
use crate::server::admission::Admission;
use crate::server::limits::{ConcurrencyLimiter, LimitStore, RateLimiter, RateSpec, SlotSpec};
use crate::tool::{Context, Progress};

/// How long a client is told to wait while an upstream is connecting.
const CONNECTING_RETRY: u32 = 2;

pub(crate) struct Link {
    pub(crate) namespace: String,
    pub(super) upstream: Upstream,
    state: Mutex<State>,
    /// The upstream's tools as it last listed them (its own names, its order), or as the
    /// lockfile recorded them until it is first reached; `None` while unknown.
    tools: Mutex<Option<Arc<[Tool]>>>,
    /// Told each time the state changes.
    changed: tokio::sync::Notify,
    /// Where the progress of forwarded calls goes, by the token of the upstream request.
    progress: Mutex<HashMap<ProgressToken, Arc<Progress>>>,
    /// The calls in flight, for the upstream's requests to their clients.
    pub(super) asking: Arc<Asking>,
    /// The task that keeps the upstream connected, started by the first use.
    pub(super) keeper: OnceLock<()>,
    /// Stops the keeper (and the connection, and a child process) when the link is dropped.
    pub(super) stop: CancellationToken,
    /// Who is told when the upstream's tools change.
    subscribers: Arc<Subscribers>,
    /// The upstream's own limits, in the server's store.
    rate: Option<Box<dyn RateLimiter>>,
    slots: Option<Box<dyn ConcurrencyLimiter>>,
    breaker: Breaker,
    /// Times in a row the breaker tripped with no call served since: its backoff grows.
    trips: AtomicU32,
    /// Why the breaker last tripped, for the outage's log line.
    pub(super) tripped: Mutex<Option<String>>,
    /// Listings asked for by the upstream, one at a time.
    pub(super) relisting: Coalesced,
    /// Whether the first attempt to connect has ended (connected or not).
    attempted: std::sync::atomic::AtomicBool,
    /// Whether the upstream refused the gateway's credentials when last tried (`credentials`).
    pub(super) refused: std::sync::atomic::AtomicBool,
    /// The gateway's OAuth session for the upstream, kept across connections.
    #[cfg(feature = "oauth-client")]
    pub(super) oauth: tokio::sync::Mutex<Option<crate::oauth_client::OAuthSession>>,
}

pub(super) enum State {
    /// Not tried yet.
    Idle,
    Connecting,
    Up {
        peer: Peer<RoleClient>,
        /// Which connection this is, counted from 1.
        connection: u64,
        /// Closes it (the breaker tripped).
        closer: CancellationToken,
    },
    /// Not tried again before `retry_at`.
    Down {
        retry_at: Instant,
    },
}

/// A call the link may forward: the connection it goes on.
#[derive(Clone)]
pub(crate) struct Open {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) connection: u64,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("namespace", &self.namespace)
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The concurrency limit of the upstream mounted under `namespace`, if it has one: its calls
/// last at most the call timeout.
pub(super) fn slot_spec<'a>(namespace: &'a str, upstream: &Upstream) -> Option<SlotSpec<'a>> {
    Some(SlotSpec {
        name: namespace,
        limit: upstream.concurrency?,
        deadline: Some(upstream.call_timeout),
    })
}

impl Link {
    pub(crate) fn new(
        namespace: String,
        upstream: Upstream,
        subscribers: Arc<Subscribers>,
        store: &dyn LimitStore,
        max_keys: usize,
        locked: Option<&UpstreamContract>,
    ) -> Arc<Link> {
        let rate = upstream.rate_limit.filter(|l| l.max > 0).map(|limit| {
            store.rate_limit(RateSpec {
                name: &namespace,
                limit,
                max_keys,
            })
        });
        let slots = slot_spec(&namespace, &upstream).map(|spec| store.concurrency(spec));
        let link = Arc::new(Link {
            rate,
            slots,
            breaker: Breaker::new(upstream.breaker),
            namespace,
            upstream,
            state: Mutex::new(State::Idle),
            tools: Mutex::new(None),
            changed: tokio::sync::Notify::new(),
            progress: Mutex::default(),
            asking: Arc::default(),
            keeper: OnceLock::new(),
            stop: CancellationToken::new(),
            subscribers,
            trips: AtomicU32::new(0),
            tripped: Mutex::new(None),
            relisting: Coalesced::default(),
            attempted: std::sync::atomic::AtomicBool::new(false),
            refused: std::sync::atomic::AtomicBool::new(false),
            #[cfg(feature = "oauth-client")]
            oauth: tokio::sync::Mutex::new(None),
        });
        if let Some(locked) = locked {
            let tools = link.servable(locked.tools.clone());
            *lock(&link.tools) = Some(tools.into());
        }
        link
    }

    /// The tools of `tools` the gateway can list: those whose listed name
    /// (`{namespace}_{tool}`) is a tool name clients accept, `^[A-Za-z0-9_.-]{1,128}$`. Each
    /// other is left out, with a log line: listed, it could make a client refuse the whole
    /// listing.
    fn servable(&self, mut tools: Vec<Tool>) -> Vec<Tool> {
        tools.retain(|tool| {
            let listed = self.listed_name(&tool.name);
            let Some(why) = mcp_fusion_rules::names::tool_name_problem(&listed) else {
                return true;
            };
            tracing::warn!(
                upstream = %self.namespace,
                tool = %tool.name,
                "the upstream's tool is left out of the listing: its listed name \"{listed}\" {why} (tool names are ^[A-Za-z0-9_.-]{{1,128}}$)"
            );
            false
        });
        tools
    }

    /// Takes the upstream's tools as it lists them now; when they changed (in any order), logs
    /// what changed (classified as the contract diff classifies it) and tells the clients.
    pub(super) fn replace_tools(&self, tools: Vec<Tool>) {
        let new: Arc<[Tool]> = self.servable(tools).into();
        let old = lock(&self.tools).replace(Arc::clone(&new));
        let contract = |tools: &[Tool]| crate::contract::Contract {
            tools: Vec::new(),
            upstreams: vec![UpstreamContract::new(&self.namespace, tools.to_vec())],
        };
        match old {
            Some(old) if old == new => return,
            Some(old) => {
                let (old, new) = (contract(&old), contract(&new));
                if old == new {
                    return;
                }
                let diff = crate::contract::Diff::between(&old, &new);
                tracing::warn!(
                    upstream = %self.namespace,
                    severity = ?diff.max_severity(),
                    changes = %diff,
                    "the upstream's tools changed: clients are told to list them again"
                );
            }
            None => {}
        }
        self.subscribers.tell();
    }

    /// The upstream's tools as last known, with the namespace: `None` when it was never
    /// reached and the lockfile did not record it.
    pub(crate) fn contract(&self) -> Option<UpstreamContract> {
        let tools = lock(&self.tools);
        let tools = tools.as_deref()?;
        Some(UpstreamContract::new(&self.namespace, tools.to_vec()))
    }

    /// Whether its tools are known (listed by it, or recorded by the lockfile).
    pub(crate) fn known(&self) -> bool {
        lock(&self.tools).is_some()
    }

    /// Waits for the end of the first attempt to connect (once started): whether the upstream
    /// is connected.
    pub(crate) async fn reached(&self) -> bool {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match &*self.lock_state() {
                State::Up { .. } => return true,
                State::Down { .. } => return false,
                State::Idle | State::Connecting => {}
            }
            changed.await;
        }
    }

    /// Sets the state, telling those waiting for a change.
    pub(super) fn set_state(&self, state: State) {
        let ended = matches!(state, State::Up { .. } | State::Down { .. });
        *self.lock_state() = state;
        if ended {
            self.attempted.store(true, Ordering::Release);
        }
        self.changed.notify_waiters();
    }

    /// Whether its first listing is still to come: its tools are unknown and its first attempt
    /// to connect has not ended.
    pub(crate) fn first_listing_pending(&self) -> bool {
        !self.known() && !self.attempted.load(Ordering::Acquire)
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The upstream's tools as it last listed them, under their own names.
    pub(crate) fn tools(&self) -> Arc<[Tool]> {
        lock(&self.tools).clone().unwrap_or_else(|| Arc::from([]))
    }

    /// `name` as the gateway's clients call it.
    pub(crate) fn listed_name(&self, name: &str) -> String {
        format!("{}{SEPARATOR}{name}", self.namespace)
    }

    /// The upstream's tools as the gateway lists them: renamed under the namespace, in the
    /// order the upstream last listed them (kept until it lists them again, so that every
    /// listing in between is the same).
    pub(crate) fn listed(&self) -> Vec<Tool> {
        self.tools().iter().map(|tool| self.renamed(tool)).collect()
    }

    /// The upstream's tool `name` (its own name) as the gateway lists it, if it lists it.
    pub(crate) fn listed_tool(&self, name: &str) -> Option<Tool> {
        let tools = self.tools();
        tools
            .iter()
            .find(|tool| tool.name == name)
            .map(|tool| self.renamed(tool))
    }

    /// `tool` under the namespace.
    fn renamed(&self, tool: &Tool) -> Tool {
        let mut tool = tool.clone();
        tool.name = self.listed_name(&tool.name).into();
        tool
    }

    /// The upstream tool `name` names, when it is under this link's namespace.
    pub(crate) fn strip<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.namespace.as_str())?
            .strip_prefix(SEPARATOR)
    }

    #[cfg(feature = "oauth")]
    /// The scopes a call of the upstream's tool `name` with `arguments` needs: those configured
    /// for the upstream, and those its tool declares for the action called (the whole tool's
    /// when the action cannot be told).
    pub(crate) fn scopes(&self, name: &str, arguments: Option<&Map<String, Value>>) -> Vec<String> {
        let mut scopes = self.upstream.scopes.clone();
        let tools = self.tools();
        let tool = tools.iter().find(|tool| tool.name == name);
        let declared = tool.and_then(|tool| {
            let meta = tool.meta.as_ref()?;
            meta.0.get(crate::tool::SCOPES_KEY)?.as_object()
        });
        if let (Some(tool), Some(declared)) = (tool, declared) {
            let action = |called: &str| format!("{name}.{called}");
            let mut sent = arguments.into_iter().flatten();
            // The action called: the value sent for the field whose `enum` lists the tool's
            // actions (an action that declares no scope needs none), else a sent value that
            // completes the qualified name of an action that declares some.
            let discriminated = sent.clone().find_map(|(field, value)| {
                let value = value.as_str()?;
                let properties = tool.input_schema.get("properties")?;
                let actions = properties.get(field)?.get("enum")?.as_array()?;
                let listed = actions.iter().filter_map(Value::as_str);
                let lists_actions = listed.clone().any(|a| declared.contains_key(&action(a)));
                (lists_actions && listed.clone().any(|a| a == value))
                    .then(|| declared.get(&action(value)))
            });
            let needed: Vec<&Value> = match discriminated {
                Some(called) => called.into_iter().collect(),
                None => match sent.find_map(|(_, v)| declared.get(&action(v.as_str()?))) {
                    Some(called) => vec![called],
                    None => declared.values().collect(),
                },
            };
            let needed = needed.into_iter().filter_map(Value::as_array).flatten();
            scopes.extend(needed.filter_map(Value::as_str).map(str::to_owned));
        }
        scopes.sort_unstable();
        scopes.dedup();
        scopes
    }

    /// Every scope a tool of the upstream may need.
    #[cfg(feature = "oauth")]
    pub(crate) fn all_scopes(&self) -> Vec<String> {
        let mut scopes = self.upstream.scopes.clone();
        for tool in self.tools().iter() {
            scopes.extend(self.scopes(&tool.name, None));
        }
        scopes.sort_unstable();
        scopes.dedup();
        scopes
    }

    /// Whether the upstream is connected and lists the tool `name`, and `caller`'s own breaker
    /// lets it call: the connection to forward on, or the envelope that says why not.
    pub(crate) fn open(
        self: &Arc<Self>,
        name: &str,
        caller: Option<&str>,
    ) -> Result<Open, ToolError> {
        self.start();
        let (peer, connection) = match &*self.lock_state() {
            State::Up {
                peer, connection, ..
            } => (peer.clone(), *connection),
            State::Idle | State::Connecting => {
                return Err(ToolError::upstream_connecting(
                    &self.namespace,
                    CONNECTING_RETRY,
                ));
            }
            State::Down { .. } if self.refused() => {
                return Err(ToolError::upstream_credentials_refused(&self.namespace));
            }
            State::Down { retry_at } => return Err(self.unavailable(*retry_at)),
        };
        let tools = self.tools();
        if !tools.iter().any(|tool| tool.name == name) {
            return Err(self.mismatch(name, &tools));
        }
        if let Some(until) = self.breaker.open_for(caller) {
            return Err(self.unavailable(until));
        }
        Ok(Open { peer, connection })
    }

    /// What admits a call of its tools: the gateway's own limits for it, refused under `listed`.
    pub(crate) fn admission<'a>(&'a self, listed: &'a str) -> Admission<'a> {
        Admission {
            name: listed,
            rates: [self.rate.as_deref(), None],
            slots: [self.slots.as_deref(), None],
        }
    }

    /// Forwards a call of the upstream's tool `name` on `open`, with the call's trace and
    /// progress. Dropped before the answer (the client cancelled it, or its deadline passed),
    /// it tells the upstream.
    pub(crate) async fn forward(
        self: &Arc<Self>,
        open: Open,
        name: &str,
        arguments: Option<Map<String, Value>>,
        context: &Context,
        caller: Option<&str>,
    ) -> Result<CallToolResult, ToolError> {
        let Open { peer, connection } = open;
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        let mut meta = RequestMetaObject::new();
        if let Some((trace, span_id)) = context.trace_and_span() {
            // The upstream's call is a child of this server's span for the call.
            let flags = if trace.sampled() { "01" } else { "00" };
            meta.set_traceparent(format!("00-{}-{span_id}-{flags}", trace.trace_id()));
            if let Some(state) = trace.state() {
                meta.set_tracestate(state);
            }
        }
        // The gateway speaks to its upstreams on 2025-11-25 sessions, where an upstream asks
        // on the back-channel (relayed, `relay.rs`) and never answers `input_required` (rmcp
        // refuses to send it before 2026-07-28; anything else is a failed call).
        let options = || {
            let mut options = PeerRequestOptions::no_options();
            options.meta = Some(meta.clone());
            options
        };
        let call = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut answer = self.exchange(&peer, call.clone(), options(), context).await;
        if let Err(error) = &answer
            && error.auth_challenge().is_some()
            && self.renewed().await
        {
            // The upstream stopped taking the gateway's token (expired, revoked): once more
            // with a new one.
            answer = self.exchange(&peer, call, options(), context).await;
        }
        match answer {
            Ok(ServerResult::CallToolResult(result)) => {
                self.breaker.served(caller);
                self.trips.store(0, Ordering::Relaxed);
                Ok(result)
            }
            Ok(other) => {
                self.call_failed(connection, caller);
                Err(self.failed(name, &format!("{other:?}")))
            }
            Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                // The caller's arguments, not the upstream's health.
                self.breaker.served(caller);
                Err(ToolError::upstream_refused(&self.namespace, &error.message))
            }
            Err(ServiceError::McpError(error)) => {
                self.call_failed(connection, caller);
                Err(self.failed(name, &format!("{error:?}")))
            }
            Err(error) if error.auth_challenge().is_some() => {
                // The upstream refused the gateway's token mid-connection, a new one too: the
                // keeper connects again when the backoff ends, and until then calls are told
                // why.
                self.set_refused(true);
                self.go_down(Some(connection), 1);
                Err(ToolError::upstream_credentials_refused(&self.namespace))
            }
            Err(_) => Err(self.lost(connection)),
        }
    }

    /// Sends one call and waits for its answer, its progress routed to the call's and its
    /// requests to the client relayed; the upstream is told when the call is abandoned.
    async fn exchange(
        &self,
        peer: &Peer<RoleClient>,
        call: ClientRequest,
        options: PeerRequestOptions,
        context: &Context,
    ) -> Result<ServerResult, ServiceError> {
        let handle = peer.send_request_with_option(call, options).await?;
        // The upstream's progress for this call goes into the call's own (throttled, only
        // increasing, none after the answer), until the answer.
        let _route = context.progress_handle().map(|progress| {
            let token = handle.progress_token.clone();
            lock(&self.progress).insert(token.clone(), Arc::clone(progress));
            Route(self, token)
        });
        let _asking = self.asking.enter(handle.id.clone(), context);
        // Told to the upstream unless the answer came.
        let mut abandoned = Abandoned(Some((peer.clone(), handle.id.clone())));
        let answer = handle.await_response().await;
        abandoned.0 = None;
        answer
    }

    /// The upstream's progress note for the upstream request `token`, into its call's own.
    pub(super) fn progressed(&self, note: rmcp::model::ProgressNotificationParam) {
        let progress = lock(&self.progress).get(&note.progress_token).cloned();
        if let Some(progress) = progress {
            let message = note.message.as_deref();
            progress.report(
                note.progress,
                note.total,
                message,
                crate::tool::Reporter::Handler,
            );
        }
    }

    /// Counts a failed call of `caller` on `connection` (no answer in time, no result, an
    /// internal error): at the breaker's count in a row, `caller` is refused for the backoff,
    /// or (the failures of several callers, or of the only one) the connection is dropped and
    /// nothing is forwarded until the backoff ends, when the keeper connects again: that
    /// connection is the probe.
    pub(crate) fn call_failed(&self, connection: u64, caller: Option<&str>) {
        let trips = self.trips.load(Ordering::Relaxed) + 1;
        let until = Instant::now() + self.backoff(trips);
        match self.breaker.failed(caller, until) {
            Tripped::No => {}
            Tripped::Caller => tracing::warn!(
                upstream = %self.namespace,
                failures = self.upstream.breaker,
                "one caller's calls to the upstream failed in a row: that caller is answered HANDOFF_UPSTREAM_UNAVAILABLE for the backoff"
            ),
            Tripped::All => {
                self.trips.fetch_add(1, Ordering::Relaxed);
                *lock(&self.tripped) = Some(format!(
                    "{} calls in a row failed or went unanswered: the gateway stopped forwarding to it",
                    self.upstream.breaker
                ));
                self.go_down(Some(connection), trips);
            }
        }
    }

    /// The connection was made again: the breaker's counts start over.
    pub(super) fn reconnected(&self) {
        self.breaker.reset();
    }

    /// HANDOFF_UPSTREAM_UNAVAILABLE until `retry_at`.
    fn unavailable(&self, retry_at: Instant) -> ToolError {
        let wait = retry_at.saturating_duration_since(Instant::now());
        let secs = crate::envelope::seconds_up(wait).max(1);
        ToolError::upstream_unavailable(&self.namespace, u32::try_from(secs).unwrap_or(u32::MAX))
    }

    /// HANDOFF_NAMESPACE_MISMATCH for `name`, with the close tool (ERRORS.md §4, "Close").
    fn mismatch(&self, name: &str, tools: &[Tool]) -> ToolError {
        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        let closest = crate::closest::Names::new(&names)
            .closest(name)
            .map(|i| self.listed_name(&names[i]));
        let listed = names.iter().map(|n| self.listed_name(n));
        ToolError::namespace_mismatch(&self.namespace, name, closest.as_deref(), listed)
    }

    /// INTERNAL_ERROR for an answer that is no result: what came is logged, not sent.
    fn failed(&self, name: &str, answered: &str) -> ToolError {
        let incident = new_incident_id();
        tracing::error!(
            upstream = %self.namespace,
            tool = name,
            incident = %incident,
            answered = %answered,
            "an upstream answered a call with an error or a message that is no result"
        );
        ToolError::upstream_failed(&self.namespace, name, &incident)
    }

    /// The connection `connection` is gone (seen by a call): the upstream is down until the
    /// keeper tries again; HANDOFF_UPSTREAM_UNAVAILABLE until then.
    fn lost(&self, connection: u64) -> ToolError {
        let retry_at = self.go_down(Some(connection), 1);
        self.unavailable(retry_at)
    }

    /// Marks the upstream down after its `failures`-th consecutive failure (closing its
    /// connection), unless a newer connection is up or it is down already; when it is tried
    /// again.
    pub(super) fn go_down(&self, connection: Option<u64>, failures: u32) -> Instant {
        let mut state = self.lock_state();
        match &*state {
            State::Down { retry_at } => *retry_at,
            State::Up { connection: up, .. } if connection.is_some_and(|c| c != *up) => {
                Instant::now()
            }
            _ => {
                let retry_at = Instant::now() + self.backoff(failures);
                if let State::Up { closer, .. } =
                    std::mem::replace(&mut *state, State::Down { retry_at })
                {
                    closer.cancel();
                }
                drop(state);
                self.attempted.store(true, Ordering::Release);
                self.changed.notify_waiters();
                retry_at
            }
        }
    }

    /// The wait after the `failures`-th consecutive failure: the first backoff doubled for
    /// each before it, at most the maximum, less up to a fifth at random.
    fn backoff(&self, failures: u32) -> Duration {
        let (first, max) = self.upstream.backoff;
        let doubled = first.saturating_mul(1 << failures.saturating_sub(1).min(16));
        let full = doubled.min(max);
        let random = RandomState::new().hash_one(failures) % 1000;
        full.mul_f64(1.0 - 0.2 * (random as f64 / 1000.0))
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Routes the upstream's progress notes of one call to its client until dropped (the call
/// answered, or abandoned).
struct Route<'a>(&'a Link, ProgressToken);

impl Drop for Route<'_> {
    fn drop(&mut self) {
        lock(&self.0.progress).remove(&self.1);
    }
}

/// Tells the upstream a call was abandoned (cancelled by the client, or timed out), unless
/// disarmed by its answer.
struct Abandoned(Option<(Peer<RoleClient>, rmcp::model::RequestId)>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = "the gateway's client cancelled it, or it took too long".to_owned();
                let cancelled = CancelledNotificationParam::new(Some(id), Some(reason));
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}
