//! The clients to tell when the listing changes (an upstream's tools changed): the sessions
//! that began with `initialize` (stdio, HTTP sessions before 2026-07-28), told unsolicited,
//! and the `subscriptions/listen` streams that asked for `tools` listing changes (2026-07-28).
//! Stateless HTTP before 2026-07-28 has no one to tell.
//!
//! What is kept is bounded by the live sessions: a session is kept once however many
//! `notifications/initialized` it sends, a closed one is forgotten at the next session and at
//! every telling, and a stream only while it is open.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

use crate::server::changes::same;

/// The sessions and streams to tell.
#[derive(Default)]
pub(crate) struct Subscribers {
    peers: Mutex<Vec<Peer<RoleServer>>>,
    streams: Mutex<Vec<Arc<SubscriptionSink>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Subscribers {
    /// Counts a session that began (again, for a second `notifications/initialized`: kept once).
    pub(crate) fn add(&self, peer: Peer<RoleServer>) {
        let mut peers = lock(&self.peers);
        peers.retain(|p| !p.is_transport_closed());
        if !peers.iter().any(|p| same(p, &peer)) {
            peers.push(peer);
        }
    }

    /// How many sessions are counted.
    #[cfg(test)]
    pub(crate) fn sessions(&self) -> usize {
        lock(&self.peers).len()
    }

    /// Counts a stream until the returned guard is dropped.
    pub(crate) fn listen(self: &Arc<Self>, stream: SubscriptionSink) -> Listening {
        let stream = Arc::new(stream);
        lock(&self.streams).push(Arc::clone(&stream));
        Listening {
            subscribers: Arc::downgrade(self),
            stream,
        }
    }

    /// Sends `notifications/tools/list_changed` to every session and stream, forgetting those
    /// that are gone.
    pub(crate) fn tell(self: &Arc<Self>) {
        let this = Arc::clone(self);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let peers = lock(&this.peers).clone();
            let mut gone = Vec::new();
            for peer in peers {
                if peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                    gone.push(peer);
                }
            }
            lock(&this.peers).retain(|p| !gone.iter().any(|g| same(p, g)));
            let streams = lock(&this.streams).clone();
            for stream in streams {
                // A stream that ended is forgotten by its guard.
                let _ = stream.notify_tool_list_changed().await;
            }
        });
    }
}

/// A stream being told, until dropped.
pub(crate) struct Listening {
    subscribers: Weak<Subscribers>,
    stream: Arc<SubscriptionSink>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(subscribers) = self.subscribers.upgrade() {
            lock(&subscribers.streams).retain(|s| !Arc::ptr_eq(s, &self.stream));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session that sends `notifications/initialized` again and again is kept once; one
    /// that closed is forgotten when the next begins.
    #[tokio::test]
    async fn sessions_are_kept_once_and_forgotten_when_closed() {
        use rmcp::ServiceExt;
        use rmcp::model::ClientConfig;

        struct Quiet;
        impl rmcp::ServerHandler for Quiet {}
        let subscribers = Subscribers::default();
        let mut running = Vec::new();
        for _ in 0..2 {
            let (server_end, client_end) = tokio::io::duplex(4096);
            let server = tokio::spawn(async move { Quiet.serve(server_end).await });
            let client = ClientConfig::default()
                .serve(client_end)
                .await
                .expect("client");
            let server = server.await.expect("joined").expect("initialized");
            for _ in 0..100 {
                subscribers.add(server.peer().clone());
            }
            running.push((client, server));
        }
        assert_eq!(subscribers.sessions(), 2);
        let (client, server) = running.remove(0);
        client.cancel().await.expect("closed");
        let _ = server.waiting().await;
        let (client, server) = running.remove(0);
        subscribers.add(server.peer().clone());
        assert_eq!(subscribers.sessions(), 1);
        drop((client, server));
    }
}
