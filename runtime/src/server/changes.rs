//! What changed on the server, told to every client that asked, in either era: the sessions
//! that began with `initialize` (before MCP 2026-07-28; `notifications/*/list_changed` to every
//! session, `notifications/resources/updated` to those that `resources/subscribe`d to the
//! resource) and the `subscriptions/listen` streams of 2026-07-28 (what each stream's accepted
//! filter names, tagged with its `subscriptionId` by rmcp's sink).
//!
//! The user's code tells it through [`Changes`]; the server answers `resources/subscribe`,
//! `resources/unsubscribe` and `subscriptions/listen` itself.
//!
//! Bounded whatever clients do: each session and stream has a queue of
//! [`QUEUED`] notifications (a slow reader loses the newest beyond it, never memory), a session
//! subscribes to at most [`SUBSCRIPTIONS`] resources and a stream's filter names at most as
//! many, streams are capped per caller (the OAuth subject, else the HTTP connection) and in
//! all, and a closed session or a cancelled stream is forgotten at once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use rmcp::model::{ErrorData, ServerNotification, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

/// Notifications waiting for one slow session or stream; beyond it, new ones are dropped.
pub(crate) const QUEUED: usize = 64;
/// Resources one session may subscribe to, and one stream's filter may name.
pub(crate) const SUBSCRIPTIONS: usize = 256;
/// `subscriptions/listen` streams one caller may hold open.
pub(crate) const STREAMS_PER_CALLER: usize = 16;
/// `subscriptions/listen` streams open at once, in all.
pub(crate) const STREAMS: usize = 1024;

/// Tells the server's clients what changed: a resource's content, or the listing of tools,
/// prompts or resources. Cheap to clone; taken from the builder before the server is built
/// ([`ServerBuilder::changes`](super::ServerBuilder::changes)) or from the server
/// ([`Server::changes`](crate::Server::changes)), and kept by whatever changes things (a tool,
/// your own handler, a background task). Telling is immediate and never waits: each client
/// that asked gets the notification on its own queue.
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
/// let builder = Server::builder("notes", "1").tool(PingTool);
/// let changes = builder.changes();
/// let server = builder.build()?;
/// // Later, when a note is edited: clients subscribed to it (2025-11-25 `resources/subscribe`,
/// // or a 2026-07-28 `subscriptions/listen` naming it) are told.
/// changes.resource_updated("note://1");
/// changes.resource_list_changed();
/// # let _ = server;
/// # Ok::<(), mcp_fusion::server::BuildError>(())
/// ```
#[derive(Clone, Default)]
pub struct Changes {
    hub: Arc<Hub>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (sessions, streams) = self.hub.counts();
        f.debug_struct("Changes")
            .field("sessions", &sessions)
            .field("streams", &streams)
            .finish()
    }
}

impl Changes {
    /// The resource at `uri` changed: `notifications/resources/updated` to those subscribed.
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.hub.tell(Change::Updated(uri.into().into()));
    }

    /// The listing of resources changed: `notifications/resources/list_changed`.
    pub fn resource_list_changed(&self) {
        self.hub.tell(Change::Resources);
    }

    /// The listing of prompts changed: `notifications/prompts/list_changed`.
    pub fn prompt_list_changed(&self) {
        self.hub.tell(Change::Prompts);
    }

    /// The listing of tools changed: `notifications/tools/list_changed`.
    pub fn tool_list_changed(&self) {
        self.hub.tell(Change::Tools);
    }

    pub(crate) fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }
}

/// One change.
#[derive(Clone, Debug)]
enum Change {
    Tools,
    Prompts,
    Resources,
    Updated(Arc<str>),
}

impl Change {
    fn notification(&self) -> ServerNotification {
        use rmcp::model::*;
        match self {
            Change::Tools => ToolListChangedNotification::default().into(),
            Change::Prompts => PromptListChangedNotification::default().into(),
            Change::Resources => ResourceListChangedNotification::default().into(),
            Change::Updated(uri) => ResourceUpdatedNotification::new(
                ResourceUpdatedNotificationParam::new(uri.to_string()),
            )
            .into(),
        }
    }

    /// Whether a stream that accepted `filter` wants it.
    fn wanted_by(&self, filter: &SubscriptionFilter) -> bool {
        let yes = |flag: Option<bool>| flag == Some(true);
        match self {
            Change::Tools => yes(filter.tools_list_changed),
            Change::Prompts => yes(filter.prompts_list_changed),
            Change::Resources => yes(filter.resources_list_changed),
            Change::Updated(uri) => (filter.resource_subscriptions.as_ref())
                .is_some_and(|uris| uris.iter().any(|u| **u == **uri)),
        }
    }
}

/// The HTTP connection a request came on (this server's own accept loop), in the request's
/// extensions.
#[cfg(feature = "http")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Connection(pub(crate) u64);

/// Who holds streams, for the per-caller cap.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Holder {
    /// A verified caller (OAuth).
    Subject(String),
    /// An HTTP connection of this server's own accept loop.
    #[cfg(feature = "http")]
    Connection(u64),
    /// Nothing tells callers apart (an application's own HTTP server, stdio): they share one
    /// per-caller cap.
    Anyone,
}

/// A session that began with `initialize`.
struct Session {
    peer: Peer<RoleServer>,
    subscribed: HashSet<Arc<str>>,
    queue: mpsc::Sender<Change>,
}

/// A `subscriptions/listen` stream.
struct Stream {
    id: u64,
    holder: Holder,
    accepted: SubscriptionFilter,
    queue: mpsc::Sender<Change>,
}

/// The sessions and streams to tell.
#[derive(Default)]
pub(crate) struct Hub {
    sessions: Mutex<Vec<Session>>,
    streams: Mutex<Vec<Stream>>,
    next: std::sync::atomic::AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether two peers are the same session: rmcp shares one peer information between every
/// clone of a session's peer.
pub(crate) fn same(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

impl Hub {
    fn counts(&self) -> (usize, usize) {
        (lock(&self.sessions).len(), lock(&self.streams).len())
    }

    /// Puts `change` on the queue of each session and stream that wants it.
    fn tell(&self, change: Change) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| !s.peer.is_transport_closed() && !s.queue.is_closed());
        for session in sessions.iter() {
            let wanted = match &change {
                Change::Updated(uri) => session.subscribed.contains(uri),
                _ => true,
            };
            if wanted && session.queue.try_send(change.clone()).is_err() {
                tracing::debug!("a session reads its notifications too slowly: one dropped");
            }
        }
        drop(sessions);
        for stream in lock(&self.streams).iter() {
            if change.wanted_by(&stream.accepted) && stream.queue.try_send(change.clone()).is_err()
            {
                tracing::debug!("a listen stream is read too slowly: one notification dropped");
            }
        }
    }

    /// Counts a session that began (once, however many `notifications/initialized` it sends),
    /// with the task that writes its notifications.
    pub(crate) fn session_started(&self, peer: Peer<RoleServer>) {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| !s.peer.is_transport_closed() && !s.queue.is_closed());
        if sessions.iter().any(|s| same(&s.peer, &peer)) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (queue, mut queued) = mpsc::channel::<Change>(QUEUED);
        let writer = peer.clone();
        runtime.spawn(async move {
            while let Some(change) = queued.recv().await {
                if writer
                    .send_notification(change.notification())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        sessions.push(Session {
            peer,
            subscribed: HashSet::new(),
            queue,
        });
    }

    /// `resources/subscribe` of a session.
    pub(crate) fn subscribe(&self, peer: &Peer<RoleServer>, uri: &str) -> Result<(), ErrorData> {
        let mut sessions = lock(&self.sessions);
        let Some(session) = sessions.iter_mut().find(|s| same(&s.peer, peer)) else {
            return Err(ErrorData::invalid_request(
                "resources/subscribe needs a session that began with initialize and \
                 notifications/initialized",
                None,
            ));
        };
        if session.subscribed.len() >= SUBSCRIPTIONS && !session.subscribed.contains(uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "This session already subscribes to {SUBSCRIPTIONS} resources, the most it \
                     may: unsubscribe from one first."
                ),
                None,
            ));
        }
        session.subscribed.insert(uri.into());
        Ok(())
    }

    /// `resources/unsubscribe` of a session (of a resource it never subscribed to: nothing).
    pub(crate) fn unsubscribe(&self, peer: &Peer<RoleServer>, uri: &str) {
        let mut sessions = lock(&self.sessions);
        if let Some(session) = sessions.iter_mut().find(|s| same(&s.peer, peer)) {
            session.subscribed.remove(uri);
        }
    }

    /// Of the filter a stream asks for, what the server accepts: every listing change, and at
    /// most [`SUBSCRIPTIONS`] resources (the first ones named).
    pub(crate) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = requested.clone();
        if let Some(uris) = &mut accepted.resource_subscriptions {
            uris.truncate(SUBSCRIPTIONS);
        }
        accepted
    }

    /// Serves one `subscriptions/listen` stream (its acknowledgement already sent by rmcp)
    /// until the client cancels it, or `ended`.
    pub(crate) async fn listen(
        self: &Arc<Self>,
        context: SubscriptionContext,
        holder: Holder,
        ended: tokio_util::sync::CancellationToken,
    ) -> Result<(), ErrorData> {
        let (queue, mut queued) = mpsc::channel::<Change>(QUEUED);
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        {
            let mut streams = lock(&self.streams);
            let held = streams.iter().filter(|s| s.holder == holder).count();
            if streams.len() >= STREAMS || held >= STREAMS_PER_CALLER {
                tracing::warn!(
                    ?holder,
                    held,
                    "subscriptions/listen refused: too many streams"
                );
                return Err(ErrorData::new(
                    rmcp::model::ErrorCode(-32000),
                    format!(
                        "Server busy: too many subscriptions/listen streams are open (at most \
                         {STREAMS_PER_CALLER} per caller): close one, then listen again."
                    ),
                    None,
                ));
            }
            streams.push(Stream {
                id,
                holder,
                accepted: context.accepted().clone(),
                queue,
            });
        }
        let _open = Open {
            hub: Arc::downgrade(self),
            id,
        };
        let sink = context.sink();
        loop {
            tokio::select! {
                biased;
                () = ended.cancelled() => return Ok(()),
                () = context.cancelled() => return Ok(()),
                change = queued.recv() => {
                    let Some(change) = change else { return Ok(()) };
                    if sink.send(change.notification()).await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// A stream being told, forgotten when dropped.
struct Open {
    hub: Weak<Hub>,
    id: u64,
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            lock(&hub.streams).retain(|s| s.id != self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_names_at_most_the_cap_of_resources() {
        let uris: Vec<String> = (0..1000).map(|i| format!("test://{i}")).collect();
        let mut requested = SubscriptionFilter::default();
        requested.resource_subscriptions = Some(uris);
        let accepted = Hub::accepted(&requested);
        assert_eq!(
            accepted.resource_subscriptions.map(|u| u.len()),
            Some(SUBSCRIPTIONS)
        );
    }

    #[test]
    fn changes_go_to_the_streams_that_asked() {
        let mut filter = SubscriptionFilter::default();
        filter.prompts_list_changed = Some(true);
        filter.resource_subscriptions = Some(vec!["a".into()]);
        assert!(Change::Prompts.wanted_by(&filter));
        assert!(!Change::Tools.wanted_by(&filter));
        assert!(Change::Updated("a".into()).wanted_by(&filter));
        assert!(!Change::Updated("b".into()).wanted_by(&filter));
    }
}
