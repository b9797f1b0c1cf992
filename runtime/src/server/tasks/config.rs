//! How a server keeps its tasks: the store, and what it tells each new task.

use std::sync::Arc;
use std::time::Duration;

use super::memory::MemoryTaskStore;
use super::store::TaskStore;

/// How long a task is kept by default (`ttlMs`): an hour.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(60 * 60);
/// The polling interval clients are told by default (`pollIntervalMs`).
pub(crate) const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long a replica's lease on a task it runs lasts; renewed every third of it.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(15);
/// How many tasks one caller holds at once by default.
pub(crate) const DEFAULT_MAX_PER_CALLER: usize = 1_000;

/// The server's task settings.
#[derive(Clone)]
pub(crate) struct TaskConfig {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) max_per_caller: usize,
    /// Whether an action of the server runs as a task (set when it is built).
    pub(crate) used: bool,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            store: Arc::new(MemoryTaskStore::new()),
            ttl: DEFAULT_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            lease: DEFAULT_LEASE,
            max_per_caller: DEFAULT_MAX_PER_CALLER,
            used: false,
        }
    }
}
