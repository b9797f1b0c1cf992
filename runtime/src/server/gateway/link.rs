//! One mounted upstream: a task that keeps it connected (with a backoff between failures),
//! its last known tools, and the forwarding of calls to it.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ErrorCode, ProgressNotificationParam, ProgressToken, RequestMetaObject,
    ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{SEPARATOR, Subscribers, Target, Upstream};
use crate::ToolError;
use crate::contract::UpstreamContract;
use crate::envelope::new_incident_id;
use crate::server::Request;
use crate::server::limits::{ConcurrencyLimiter, LimitStore, RateLimiter, RateSpec, SlotSpec};

/// How long a client is told to wait while an upstream is connecting.
const CONNECTING_RETRY: u32 = 2;

pub(crate) struct Link {
    pub(crate) namespace: String,
    upstream: Upstream,
    state: Mutex<State>,
    /// The upstream's tools as it last listed them (its own names, its order), or as the
    /// lockfile recorded them until it is first reached; `None` while unknown.
    tools: Mutex<Option<Arc<[rmcp::model::Tool]>>>,
    /// Told each time the state changes.
    changed: tokio::sync::Notify,
    /// Where the progress of forwarded calls goes, by the token of the upstream request.
    progress: Mutex<HashMap<ProgressToken, Forward>>,
    /// The task that keeps the upstream connected, started by the first use.
    keeper: OnceLock<()>,
    /// Stops the keeper (and the connection, and a child process) when the link is dropped.
    stop: CancellationToken,
    /// Who is told when the upstream's tools change.
    subscribers: Arc<Subscribers>,
    /// The upstream's own limits, in the server's store.
    rate: Option<Box<dyn RateLimiter>>,
    slots: Option<Box<dyn ConcurrencyLimiter>>,
    /// Calls in a row that failed (no answer in time, no result, an internal error).
    failing: AtomicU32,
    /// Times in a row the breaker tripped with no call served since: its backoff grows.
    trips: AtomicU32,
    /// Why the breaker last tripped, for the outage's log line.
    tripped: Mutex<Option<String>>,
}

/// A forwarded call's progress: the client's token, and the notes' way to it.
struct Forward {
    token: ProgressToken,
    notes: mpsc::UnboundedSender<ProgressNotificationParam>,
}

enum State {
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
        let slots = upstream.concurrency.map(|limit| {
            store.concurrency(SlotSpec {
                name: &namespace,
                limit,
                deadline: Some(upstream.call_timeout),
            })
        });
        Arc::new(Link {
            rate,
            slots,
            namespace,
            upstream,
            state: Mutex::new(State::Idle),
            tools: Mutex::new(locked.map(|locked| Arc::from(locked.tools.as_slice()))),
            changed: tokio::sync::Notify::new(),
            progress: Mutex::default(),
            keeper: OnceLock::new(),
            stop: CancellationToken::new(),
            subscribers,
            failing: AtomicU32::new(0),
            trips: AtomicU32::new(0),
            tripped: Mutex::new(None),
        })
    }

    /// Takes the upstream's tools as it lists them now; when they changed (in any order), logs
    /// what changed (classified as the contract diff classifies it) and tells the clients.
    fn replace_tools(&self, tools: Vec<rmcp::model::Tool>) {
        let new: Arc<[rmcp::model::Tool]> = tools.into();
        let old = self
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(Arc::clone(&new));
        let contract = |tools: &[rmcp::model::Tool]| crate::contract::Contract {
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
        let tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        let tools = tools.as_deref()?;
        Some(UpstreamContract::new(&self.namespace, tools.to_vec()))
    }

    /// Waits for the end of the first attempt to connect (starting it): whether the upstream
    /// is connected.
    pub(crate) async fn reached(self: &Arc<Self>) -> bool {
        self.start();
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
    fn set_state(&self, state: State) {
        *self.lock_state() = state;
        self.changed.notify_waiters();
    }

    /// Lists the upstream's tools again (it said they changed).
    async fn relist(&self, peer: Peer<RoleClient>) {
        match peer.list_all_tools().await {
            Ok(tools) => self.replace_tools(tools),
            Err(error) => {
                tracing::warn!(upstream = %self.namespace, %error, "the upstream said its tools changed, but did not list them")
            }
        }
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_progress(&self) -> MutexGuard<'_, HashMap<ProgressToken, Forward>> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts keeping the upstream connected, once; must be called inside a Tokio runtime.
    pub(crate) fn start(self: &Arc<Self>) {
        self.keeper.get_or_init(|| {
            tokio::spawn(keep(Arc::downgrade(self), self.stop.clone()));
        });
    }

    /// The upstream's tools as it last listed them, under their own names.
    pub(crate) fn tools(&self) -> Arc<[rmcp::model::Tool]> {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_else(|| Arc::from([]))
    }

    /// `name` as the gateway's clients call it.
    pub(crate) fn listed_name(&self, name: &str) -> String {
        format!("{}{SEPARATOR}{name}", self.namespace)
    }

    /// The upstream's tools as the gateway lists them: renamed under the namespace.
    pub(crate) fn listed(&self) -> Vec<rmcp::model::Tool> {
        self.tools()
            .iter()
            .map(|tool| {
                let mut tool = tool.clone();
                tool.name = self.listed_name(&tool.name).into();
                tool
            })
            .collect()
    }

    /// The upstream tool `name` names, when it is under this link's namespace.
    pub(crate) fn strip<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_prefix(self.namespace.as_str())?
            .strip_prefix(SEPARATOR)
    }

    /// Admits a call of the upstream's tool `name`: the upstream is connected and lists it,
    /// and the gateway's own limits for it let it through, spending the budget of `key` (the
    /// upstream's shared budget for `None`); the slot is held until the admission is dropped.
    pub(crate) async fn admit(
        self: &Arc<Self>,
        name: &str,
        key: Option<&str>,
    ) -> Result<Admitted, ToolError> {
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
            State::Down { retry_at } => {
                return Err(self.unavailable(*retry_at));
            }
        };
        let tools = self.tools();
        if !tools.iter().any(|tool| tool.name == name) {
            return Err(self.mismatch(name, &tools));
        }
        let listed = self.listed_name(name);
        if let Some(rate) = &self.rate
            && let Err(refusal) = rate.spend(key).await
        {
            return Err(refusal.into_error(&listed));
        }
        let slot = match &self.slots {
            Some(slots) => match slots.enter(Some(self.upstream.call_timeout)).await {
                Ok(slot) => Some(slot),
                Err(refusal) => {
                    // A call that does not run spends nothing.
                    if let Some(rate) = &self.rate {
                        rate.refund(key).await;
                    }
                    return Err(refusal.into_error(&listed));
                }
            },
            None => None,
        };
        Ok(Admitted {
            peer,
            connection,
            _slot: slot,
        })
    }

    /// Forwards an admitted call of the upstream's tool `name`. Dropped before the answer (the
    /// client cancelled the call), it tells the upstream.
    pub(crate) async fn forward(
        self: &Arc<Self>,
        admitted: Admitted,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        request: Request,
    ) -> Result<CallToolResult, ToolError> {
        let Admitted {
            peer,
            connection,
            _slot,
        } = admitted;
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        let mut meta = RequestMetaObject::new();
        if let Some((trace, span_id)) = &request.trace {
            // The upstream's call is a child of this server's span for the call.
            let flags = if trace.sampled() { "01" } else { "00" };
            meta.set_traceparent(format!("00-{}-{span_id}-{flags}", trace.trace_id()));
            if let Some(state) = trace.state() {
                meta.set_tracestate(state);
            }
        }
        let mut options = PeerRequestOptions::no_options();
        options.meta = Some(meta);
        let call = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer.send_request_with_option(call, options).await {
            Ok(handle) => handle,
            Err(_) => return Err(self.lost(connection)),
        };
        // The upstream's progress for this call goes to the client, in order, before the answer.
        let mut route = None;
        let forwarder = request.progress.map(|(token, notifier)| {
            let (notes, received) = mpsc::unbounded_channel();
            self.lock_progress()
                .insert(handle.progress_token.clone(), Forward { token, notes });
            route = Some(Route(self, handle.progress_token.clone()));
            tokio::spawn(crate::server::forward_progress(notifier, received))
        });
        let id = handle.id.clone();
        // Told to the upstream unless the answer came.
        let mut abandoned = Abandoned(Some((peer.clone(), id)));
        let answer =
            tokio::time::timeout(self.upstream.call_timeout, handle.await_response()).await;
        // No progress after the answer: what came before it goes out first.
        drop(route);
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        let Ok(answer) = answer else {
            self.call_failed(connection);
            return Err(ToolError::timeout(
                &self.listed_name(name),
                self.upstream.call_timeout,
            ));
        };
        abandoned.0 = None;
        match answer {
            Ok(ServerResult::CallToolResult(result)) => {
                self.failing.store(0, Ordering::Relaxed);
                self.trips.store(0, Ordering::Relaxed);
                Ok(result)
            }
            Ok(other) => {
                self.call_failed(connection);
                Err(self.failed(name, &format!("{other:?}")))
            }
            Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                // The caller's arguments, not the upstream's health.
                self.failing.store(0, Ordering::Relaxed);
                Err(ToolError::upstream_refused(&self.namespace, &error.message))
            }
            Err(ServiceError::McpError(error)) => {
                self.call_failed(connection);
                Err(self.failed(name, &format!("{error:?}")))
            }
            Err(_) => Err(self.lost(connection)),
        }
    }

    /// Counts a failed call on `connection`; at the breaker's count in a row, the connection
    /// is dropped and nothing is forwarded until the backoff ends (growing with each trip
    /// that no served call followed), when the keeper connects again: that connection is the
    /// probe.
    fn call_failed(&self, connection: u64) {
        let failed = self.failing.fetch_add(1, Ordering::Relaxed) + 1;
        if failed < self.upstream.breaker {
            return;
        }
        self.failing.store(0, Ordering::Relaxed);
        let trips = self.trips.fetch_add(1, Ordering::Relaxed) + 1;
        *self.tripped.lock().unwrap_or_else(PoisonError::into_inner) = Some(format!(
            "{failed} calls in a row failed or went unanswered: the gateway stopped forwarding to it"
        ));
        self.go_down(Some(connection), trips);
    }

    /// HANDOFF_UPSTREAM_UNAVAILABLE until `retry_at`.
    fn unavailable(&self, retry_at: Instant) -> ToolError {
        let wait = retry_at.saturating_duration_since(Instant::now());
        let secs = crate::envelope::seconds_up(wait).max(1);
        ToolError::upstream_unavailable(&self.namespace, u32::try_from(secs).unwrap_or(u32::MAX))
    }

    /// HANDOFF_NAMESPACE_MISMATCH for `name`, with the close tool (ERRORS.md §4, "Close").
    fn mismatch(&self, name: &str, tools: &[rmcp::model::Tool]) -> ToolError {
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
    fn go_down(&self, connection: Option<u64>, failures: u32) -> Instant {
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

    /// Connects: starts the child or reaches the endpoint, makes the handshake, lists the
    /// tools.
    async fn open(self: &Arc<Self>) -> Result<RunningService<RoleClient, Events>, String> {
        let events = Events {
            link: Arc::downgrade(self),
        };
        let service = match &self.upstream.target {
            Target::Command { program, args, env } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args);
                command.envs(env.iter().map(|(k, v)| (k, v)));
                let transport = rmcp::transport::TokioChildProcess::new(command)
                    .map_err(|e| format!("cannot start {program}: {e}"))?;
                events.serve(transport).await.map_err(|e| e.to_string())?
            }
            Target::Http(url) => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut headers = HashMap::new();
                for (name, value) in &self.upstream.headers {
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|e| format!("header {name}: {e}"))?;
                    let value = http::HeaderValue::from_str(value)
                        .map_err(|e| format!("header {name}: {e}"))?;
                    headers.insert(name, value);
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers);
                if let Some(token) = &self.upstream.bearer {
                    config = config.auth_header(token.clone());
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
                events.serve(transport).await.map_err(|e| e.to_string())?
            }
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list: {e}"))?;
        self.replace_tools(tools);
        Ok(service)
    }
}

/// A call the gateway lets through to an upstream: the connection it goes on, and its slot.
pub(crate) struct Admitted {
    peer: Peer<RoleClient>,
    connection: u64,
    _slot: Option<crate::server::limits::Slot>,
}

/// Routes the upstream's progress notes of one call to its client until dropped (the call
/// answered, or abandoned).
struct Route<'a>(&'a Link, ProgressToken);

impl Drop for Route<'_> {
    fn drop(&mut self) {
        self.0.lock_progress().remove(&self.1);
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

/// Keeps the upstream connected until the link is dropped: connects, waits for the connection
/// to end, waits the backoff, connects again. One log line per outage, one on recovery.
async fn keep(link: Weak<Link>, stop: CancellationToken) {
    let mut failures: u32 = 0;
    let mut connections: u64 = 0;
    loop {
        let Some(this) = link.upgrade() else { return };
        let namespace = this.namespace.clone();
        this.set_state(State::Connecting);
        let timeout = this.upstream.connect_timeout;
        let opened = tokio::select! {
            () = stop.cancelled() => return,
            opened = tokio::time::timeout(timeout, this.open()) => opened,
        };
        // Why the upstream is not connected now, and which connection ended, if one did.
        let (error, ended) = match opened {
            Ok(Ok(service)) => {
                connections += 1;
                let tools = this.tools().len();
                let dropped = CancellationToken::new();
                this.set_state(State::Up {
                    peer: service.peer().clone(),
                    connection: connections,
                    closer: dropped.clone(),
                });
                match failures {
                    0 => tracing::info!(upstream = %namespace, tools, "connected to the upstream"),
                    _ => tracing::info!(upstream = %namespace, tools, "the upstream answers again"),
                }
                // Its end is the first failure of an outage.
                failures = 0;
                drop(this);
                let closer = service.cancellation_token();
                let waiting = service.waiting();
                tokio::pin!(waiting);
                let quit = tokio::select! {
                    quit = &mut waiting => quit,
                    // The breaker tripped.
                    () = dropped.cancelled() => {
                        closer.cancel();
                        waiting.await
                    }
                    () = stop.cancelled() => {
                        closer.cancel();
                        let _ = waiting.await;
                        return;
                    }
                };
                (
                    format!("the connection closed ({quit:?})"),
                    Some(connections),
                )
            }
            Ok(Err(error)) => (error, None),
            Err(_) => (
                format!("no connection within {} ms", timeout.as_millis()),
                None,
            ),
        };
        let Some(this) = link.upgrade() else { return };
        failures += 1;
        let retry_at = this.go_down(ended, failures);
        let tripped = this
            .tripped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        outage(&namespace, failures, &tripped.unwrap_or(error), retry_at);
        drop(this);
        if wait_until(retry_at, &stop).await {
            return;
        }
    }
}

/// Logs a failure: at `error` the first of an outage, at `debug` the next ones.
fn outage(namespace: &str, failures: u32, error: &str, retry_at: Instant) {
    let retry_ms = retry_at
        .saturating_duration_since(Instant::now())
        .as_millis();
    match failures {
        1 => tracing::error!(
            upstream = %namespace,
            error,
            retry_ms,
            "the upstream cannot be reached: its calls are answered HANDOFF_UPSTREAM_UNAVAILABLE until it answers again"
        ),
        _ => {
            tracing::debug!(upstream = %namespace, error, failures, retry_ms, "the upstream still cannot be reached")
        }
    }
}

/// Waits until `at`; whether the link stopped meanwhile.
async fn wait_until(at: Instant, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = stop.cancelled() => true,
        () = tokio::time::sleep_until(at) => false,
    }
}

/// What an upstream tells the gateway on its own: progress of forwarded calls.
struct Events {
    link: Weak<Link>,
}

impl ClientHandler for Events {
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(link) = self.link.upgrade() {
            link.relist(context.peer).await;
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Some(link) = self.link.upgrade() else {
            return;
        };
        let progress = link.lock_progress();
        if let Some(forward) = progress.get(&params.progress_token) {
            let mut note = params;
            note.progress_token = forward.token.clone();
            let _ = forward.notes.send(note);
        }
    }
}
