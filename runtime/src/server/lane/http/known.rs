//! The sessions the HTTP fast lane (`session`) may answer in: each live session's peer, told by
//! the server as the session's client says `initialized` (a leaf: the core keeps it, the lane
//! reads it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use std::time::Duration;

use rmcp::service::NotificationContext;
use rmcp::{Peer, RoleServer};
use tokio::time::Instant;

/// The sessions the lane may answer in: each live session's peer, by its id.
#[derive(Default)]
pub(crate) struct LaneSessions {
    /// Each session's peer, and when rmcp's session was last told the client is there.
    peers: Mutex<HashMap<Arc<str>, Known>>,
}

/// A session's peer, and when rmcp's session was last told the client is there.
type Known = (Peer<RoleServer>, Instant);

impl LaneSessions {
    /// A session's client said `initialized`: its requests may be answered by the lane from
    /// now on. Sessions whose transport has closed are forgotten at the same time.
    pub(crate) fn started(&self, context: &NotificationContext<RoleServer>) {
        let Some(id) = (context.extensions.get::<http::request::Parts>())
            .and_then(|parts| parts.headers.get(&crate::server::http::SESSION_ID))
            .and_then(|id| id.to_str().ok())
        else {
            return;
        };
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|_, (peer, _)| !peer.is_transport_closed());
        peers.insert(Arc::from(id), (context.peer.clone(), Instant::now()));
    }

    /// The peer of session `id`, while its transport is open; and whether rmcp's session is
    /// to be told again that its client is there (last told `every` ago or more: the lane's
    /// requests never reach it, and it ends a session it hears nothing of for its keep-alive).
    pub(crate) fn peer(&self, id: &str, every: Duration) -> Option<(Peer<RoleServer>, bool)> {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        let (peer, told) = peers
            .get_mut(id)
            .filter(|(p, _)| !p.is_transport_closed())?;
        let due = told.elapsed() >= every;
        if due {
            *told = Instant::now();
        }
        Some((peer.clone(), due))
    }
}
