//! What every limiter of one store shares: the connection, the settings, and the outage state.
//! Scripts run here within the timeout, and a call whose script got no answer meets the fail
//! policy here, so an outage is logged once however many limiters see it. Only Redis out of
//! reach (no connection, no answer in time, a node that cannot serve now) is an outage; a
//! script Redis ran and failed is a bug, logged as one each time, the call answered as the
//! fail policy says.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use redis::{RedisError, Script};
use tokio::sync::Notify;

use super::super::{MemoryStore, Refusal};
use super::connection::Connection;
use super::scripts::SCRIPTS;

/// What a [`RedisStore`](crate::server::limits::RedisStore) does with a call when Redis
/// cannot answer in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPolicy {
    /// Serve the call under this replica's own limits, kept in its memory (each limit divided
    /// by [`RedisStoreBuilder::replicas`](crate::server::limits::RedisStoreBuilder::replicas))
    /// until Redis answers again; the outage is logged once, at `error`, and its end at `info`.
    Open,
    /// Refuse the call with SERVER_BUSY (`Tool "{tool}" cannot take calls right now.`) and a
    /// `retry_after`, as ERRORS.md §4 says for a store that cannot answer.
    Closed,
}

/// The state of one store, shared by its limiters and by the tasks that renew its leases and
/// listen for released ones (which hold it weakly, so the store stops them when dropped).
pub(super) struct Inner {
    pub(super) connection: Connection,
    pub(super) prefix: String,
    /// The operator's secret caller keys are hashed under.
    pub(super) key_secret: Option<Box<[u8]>>,
    /// Whether a call keyed by its caller came without a secret to hash the key under (said
    /// once).
    pub(super) unkeyed_said: AtomicBool,
    /// Where the limits are kept while Redis cannot answer and the policy is open.
    pub(super) local: MemoryStore,
    pub(super) replicas: u32,
    pub(super) policy: FailPolicy,
    pub(super) timeout: Duration,
    pub(super) lease_margin: Duration,
    pub(super) lease_without_deadline: Duration,
    /// Whether the last operation failed: an outage is logged when it starts and ends.
    pub(super) down: AtomicBool,
    /// This process's part of every lease id.
    pub(super) lease_seed: u64,
    pub(super) leases: AtomicU64,
    /// Who to wake when a lease of a sorted set is released, by its key.
    pub(super) wakers: Mutex<HashMap<String, Arc<Notify>>>,
    /// The task that listens for released leases, started by the first call that waits.
    pub(super) listener: OnceLock<tokio::task::JoinHandle<()>>,
    /// The leases this replica holds, renewed together by one task.
    pub(super) held: Mutex<Held>,
    /// Wakes the renewer when a lease is taken.
    pub(super) taken: Arc<Notify>,
    /// The one task that renews every lease of this replica, started with the first lease.
    pub(super) renewer: OnceLock<tokio::task::JoinHandle<()>>,
}

/// The leases a replica holds, by number: the sorted set, the lease id, its time to live, and
/// when it is next renewed (every third of its time to live).
#[derive(Default)]
pub(super) struct Held {
    pub(super) leases: HashMap<u64, HeldLease>,
}

pub(super) struct HeldLease {
    pub(super) key: String,
    pub(super) id: String,
    pub(super) ttl: Duration,
    pub(super) due: tokio::time::Instant,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in [self.listener.get(), self.renewer.get()]
            .into_iter()
            .flatten()
        {
            task.abort();
        }
    }
}

/// Why an operation did not get an answer from Redis.
pub(super) enum Failed {
    /// An error: of the connection, of the node (an outage), or of the script (a bug).
    Redis(RedisError),
    TimedOut,
}

/// Whether `error` says Redis could not be reached or cannot serve now (an outage), rather
/// than that it ran the script and the script failed, or answered what the script cannot
/// return (a bug, of this crate or of another program writing under the prefix).
pub(in crate::server) fn is_outage(error: &RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    if error.is_io_error() || error.is_timeout() {
        return true;
    }
    match error.kind() {
        // Connections that could not be made or were lost.
        ErrorKind::Parse
        | ErrorKind::AuthenticationFailed
        | ErrorKind::ClusterConnectionNotFound
        | ErrorKind::MasterNameNotFoundBySentinel
        | ErrorKind::NoValidReplicasFoundBySentinel => true,
        // A node that cannot serve now: loading, a cluster or a failover in progress.
        ErrorKind::Server(kind) => matches!(
            kind,
            ServerErrorKind::BusyLoading
                | ServerErrorKind::TryAgain
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::MasterDown
                | ServerErrorKind::ReadOnly
                | ServerErrorKind::Moved
                | ServerErrorKind::Ask
        ),
        // Another script still running (`BUSY`).
        ErrorKind::Extension => error.code() == Some("BUSY"),
        _ => false,
    }
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Redis(e) => write!(f, "{e}"),
            Failed::TimedOut => f.write_str("no answer within the timeout"),
        }
    }
}

impl Inner {
    pub(super) fn lock_wakers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.wakers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn lock_held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `script` on `key` with `args`, within the timeout.
    pub(super) async fn run<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        key: &str,
        args: impl redis::ToRedisArgs,
    ) -> Result<T, Failed> {
        let mut invocation = script.key(key);
        invocation.arg(args);
        self.within(self.connection.invoke(&invocation)).await
    }

    /// The reply of a script, if it comes within the timeout; when it does not, `reply` is
    /// dropped here unless it was borrowed (a lease being taken keeps waiting for its own).
    pub(super) async fn within<T>(
        &self,
        reply: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, Failed> {
        let answer = tokio::time::timeout(self.timeout, reply)
            .await
            .map_err(|_| Failed::TimedOut)
            .and_then(|r| r.map_err(Failed::Redis));
        if answer.is_ok() && self.down.swap(false, Ordering::AcqRel) {
            tracing::info!(prefix = %self.prefix, "the Redis limit store answers again");
        }
        answer
    }

    /// Gives lease `id` of the sorted set `key` back and tells the waiters of every replica;
    /// whether Redis said so (a lease that was not there is given back too).
    pub(super) async fn release(&self, key: &str, id: &str) -> bool {
        let args = (id, self.channel());
        self.run::<i64>(&SCRIPTS.release, key, &args).await.is_ok()
    }

    /// What a call keyed by its caller gets from a store without a key secret, which never
    /// stores a caller's key (a plain hash could be tested against guesses): what the fail
    /// policy says, logged once. Servers whose callers would be keyed are refused when built
    /// or served; this is a caller that came another way (a `Caller` an application put on the
    /// request itself).
    pub(super) fn unkeyed(&self) -> Result<(), Refusal> {
        if !self.unkeyed_said.swap(true, Ordering::Relaxed) {
            tracing::error!(
                prefix = %self.prefix,
                policy = ?self.policy,
                "a call keyed by its caller reached a Redis limit store without a key secret, \
                 which never stores caller keys: such calls meet the fail policy; set \
                 RedisStoreBuilder::key_secret"
            );
        }
        self.policy()
    }

    /// What the fail policy answers a call the store cannot limit: admitted under this
    /// replica's own limits (fail open) or SERVER_BUSY.
    fn policy(&self) -> Result<(), Refusal> {
        match self.policy {
            FailPolicy::Open => Ok(()),
            FailPolicy::Closed => Err(Refusal::Unavailable {
                retry_after: Duration::from_secs(1),
            }),
        }
    }

    /// What a call gets when Redis did not answer: admitted (fail open) or SERVER_BUSY. An
    /// outage is logged when it starts; a script that failed is logged each time, and is no
    /// outage.
    pub(super) fn failed(&self, failed: &Failed) -> Result<(), Refusal> {
        if let Failed::Redis(error) = failed
            && !is_outage(error)
        {
            tracing::error!(
                prefix = %self.prefix,
                %error,
                policy = ?self.policy,
                "a Redis limit script failed: a bug (of mcp-fusion, or of another program writing \
                 under the prefix), not an outage; the call is answered as the fail policy says"
            );
            return self.policy();
        }
        if !self.down.swap(true, Ordering::AcqRel) {
            match self.policy {
                FailPolicy::Open => tracing::error!(
                    prefix = %self.prefix,
                    error = %failed,
                    replicas = self.replicas,
                    "the Redis limit store cannot answer: calls are served under this \
                     replica's own limits (each divided by the replicas), not fleet-wide ones, \
                     until it does (fail open)"
                ),
                FailPolicy::Closed => tracing::error!(
                    prefix = %self.prefix,
                    error = %failed,
                    "the Redis limit store cannot answer: calls of limited tools are refused \
                     with SERVER_BUSY until it does (fail closed)"
                ),
            }
        }
        self.policy()
    }

    /// The channel released leases are announced on.
    pub(super) fn channel(&self) -> String {
        format!("{}:released", self.prefix)
    }
}
