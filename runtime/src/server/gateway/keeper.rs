//! Keeping an upstream connected: its keeper connects (starting the child or reaching the
//! endpoint, the MCP handshake, a bounded first listing), waits for the connection to end,
//! waits the backoff, connects again; one log line per outage, one on recovery. What the
//! upstream tells on its own goes to its link (`Events`).

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use rmcp::ErrorData as McpError;
#[allow(deprecated)] // Sampling and roots (SEP-2577), still relayed.
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ListRootsResult, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Target;
use super::link::{Link, State, lock};
use super::relay::{origin, relay};
use super::{credentials, listing};
use crate::tool::ClientRequestKind;

impl Link {
    /// Starts keeping the upstream connected, once; must be called inside a Tokio runtime.
    pub(crate) fn start(self: &Arc<Self>) {
        self.keeper.get_or_init(|| {
            tokio::spawn(keep(Arc::downgrade(self), self.stop.clone()));
        });
    }
}

/// Keeps the upstream connected until the link is dropped: connects, waits for the connection
/// to end, waits the backoff, connects again. One log line per outage, one on recovery.
pub(super) async fn keep(link: Weak<Link>, stop: CancellationToken) {
    let mut failures: u32 = 0;
    let mut connections: u64 = 0;
    loop {
        let Some(this) = link.upgrade() else { return };
        let namespace = this.namespace.clone();
        this.set_state(State::Connecting);
        let timeout = this.upstream.connect_timeout;
        let opened = tokio::select! {
            () = stop.cancelled() => return,
            opened = tokio::time::timeout(timeout, open(&this)) => opened,
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
                this.reconnected();
                this.set_refused(false);
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
        let tripped = lock(&this.tripped).take();
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

/// What an upstream tells the gateway on its own: its tools changed, progress of forwarded
/// calls; and what it asks of the client of a forwarded call (`relay`).
#[derive(Clone)]
pub(super) struct Events {
    link: Weak<Link>,
}

impl Events {
    /// Relays an upstream's request to the client of its call.
    async fn relay<T: serde::de::DeserializeOwned>(
        &self,
        context: &RequestContext<RoleClient>,
        request: ClientRequestKind,
    ) -> Result<T, McpError> {
        let link = (self.link.upgrade())
            .ok_or_else(|| McpError::invalid_request("the gateway unmounted the upstream", None))?;
        let (namespace, relays) = (&link.namespace, &link.upstream.relays);
        relay(
            &link.asking,
            origin(&context.extensions),
            namespace,
            relays,
            request,
        )
        .await
    }
}

// Sampling and roots are deprecated by SEP-2577 in rmcp; the gateway still relays them.
#[allow(deprecated)]
impl ClientHandler for Events {
    /// The gateway declares to the upstream what it relays for it
    /// ([`Upstream::relay_sampling`](super::Upstream::relay_sampling) and the like); whether
    /// the client of a call can answer is known only when the upstream asks.
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        if let Some(link) = self.link.upgrade() {
            config.capabilities = link.upstream.relays.capabilities();
        }
        config
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        self.relay(&context, ClientRequestKind::Sample(params))
            .await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.relay(&context, ClientRequestKind::Elicit(request))
            .await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        self.relay(&context, ClientRequestKind::Roots).await
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let Some(link) = self.link.upgrade() else {
            return;
        };
        // One listing at a time, in a task of its own; asked again meanwhile, once more after.
        if !link.relisting.ask() {
            return;
        }
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                match listing::list(&peer, link.upstream.connect_timeout).await {
                    Ok(tools) => link.replace_tools(tools),
                    Err(error) => {
                        tracing::warn!(upstream = %link.namespace, %error, "the upstream said its tools changed, but did not list them")
                    }
                }
                if !link.relisting.done() {
                    return;
                }
                // Asked again meanwhile: once more, but not at once, so that an upstream that
                // keeps saying its tools changed is listed at most once per spacing.
                tokio::time::sleep(listing::RELIST_SPACING).await;
            }
        });
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(link) = self.link.upgrade() {
            link.progressed(params);
        }
    }
}

/// Connects: starts the child or reaches the endpoint, makes the handshake, lists the
/// tools.
async fn open(link: &Arc<Link>) -> Result<RunningService<RoleClient, Events>, String> {
    let events = Events {
        link: Arc::downgrade(link),
    };
    let service = match &link.upstream.target {
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
            for (name, value) in &link.upstream.headers {
                let name = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header {name}: {e}"))?;
                let value = http::HeaderValue::from_str(value)
                    .map_err(|e| format!("header {name}: {e}"))?;
                headers.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers);
            credentials::connect_http(link, config, events).await?
        }
    };
    let tools = listing::list(service.peer(), link.upstream.connect_timeout).await?;
    link.replace_tools(tools);
    Ok(service)
}
