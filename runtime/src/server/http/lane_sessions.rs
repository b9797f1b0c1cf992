//! The sessions the HTTP fast lane (`lane`) may answer in: each live session's peer, told by
//! the server as the session's client says `initialized` (a leaf: the core keeps it, the lane
//! reads it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::service::NotificationContext;
use rmcp::{Peer, RoleServer};

/// The sessions the lane may answer in: each live session's peer, by its id.
#[derive(Default)]
pub(crate) struct LaneSessions {
    peers: Mutex<HashMap<Arc<str>, Peer<RoleServer>>>,
}

impl LaneSessions {
    /// A session's client said `initialized`: its requests may be answered by the lane from
    /// now on. Sessions whose transport has closed are forgotten at the same time.
    pub(crate) fn started(&self, context: &NotificationContext<RoleServer>) {
        let Some(id) = (context.extensions.get::<http::request::Parts>())
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|id| id.to_str().ok())
        else {
            return;
        };
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|_, peer| !peer.is_transport_closed());
        peers.insert(Arc::from(id), context.peer.clone());
    }

    /// The peer of session `id`, while its transport is open.
    pub(crate) fn peer(&self, id: &str) -> Option<Peer<RoleServer>> {
        let peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.get(id).filter(|p| !p.is_transport_closed()).cloned()
    }
}
