//! Hears tasks answered or cancelled through any replica (Redis pub/sub on
//! `{prefix}:tasks:changed`, each message a task's hash) and wakes the running side of those
//! that run here, so a cancel stops a handler at once rather than at its next lease renewal.
//! The listening itself is the limits store's (`runtime/src/server/limits/redis/listener.rs`).

use std::sync::Arc;
use std::time::Duration;

use super::super::super::limits::redis::connection::Connection;
use super::super::super::limits::redis::listener::{Hears, listen};
use super::shared::Inner;

impl Hears for Inner {
    fn connection(&self) -> &Connection {
        &self.connection
    }

    fn channel(&self) -> String {
        Inner::channel(self)
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The task of hash `payload` changed: its running side, if here, reads it now.
    fn heard(&self, payload: &str) {
        if let Some(changes) = self.lock_running().get(payload) {
            changes.heard();
        }
    }
}

impl Inner {
    /// Starts listening for changed tasks, once per store.
    pub(super) fn listen(self: &Arc<Self>) {
        self.listener
            .get_or_init(|| tokio::spawn(listen(Arc::downgrade(self))));
    }
}
