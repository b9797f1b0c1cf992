//! Limits shared by every replica through one Redis, a Redis Cluster, or the master a set of
//! Sentinels names.
//!
//! - **Rate limits**: GCRA (as in memory) in one Lua script per call, on Redis's own clock
//!   (`TIME`), so replicas whose clocks disagree still agree on every budget. A bucket is one
//!   string key holding its TAT in microseconds, expiring once it is as good as new.
//! - **Concurrency**: a sorted set of leases per limit, scored by their expiry on Redis's clock.
//!   A lease lasts the action's deadline plus a margin and is renewed every third of that while
//!   the handler runs (one task per replica renews them all, those of one limit in one script
//!   call), so a replica that dies holding one frees it within that time. A call that
//!   finds no lease free waits in this replica's line (`max_queued` is per replica); the head of
//!   the line tries again when a lease is released anywhere (pub/sub) and at least every 50 ms.
//! - **Outages**: every operation has a timeout; when Redis cannot answer, the store keeps the
//!   limits in this replica's memory, each divided by the replicas ([`FailPolicy::Open`],
//!   logged once per outage), or refuses the call with SERVER_BUSY ([`FailPolicy::Closed`]).
//!   The connection is re-established in the background. An outage is Redis out of reach (no
//!   connection, no answer in time, a node loading or failing over); a script Redis ran and
//!   failed is a bug, logged at `error` each time, the call answered as the policy says.
//! - **Failover** (a cluster's or Sentinel's): Redis replicates asynchronously, so what a
//!   master acknowledged in its last moments may not have reached the replica that takes its
//!   place. A lease lost that way is taken again by its replica's next renewal (within a third
//!   of its time to live: renewals put back the leases of calls still running); until then the
//!   fleet may admit as many calls more as leases were lost. Spends of a rate limit lost that
//!   way are not restored: a budget may admit its last few calls again, once.
//!
//! Scripts are sent once and then called by digest (`EVALSHA`), sent again when Redis answers
//! `NOSCRIPT` (after a restart). Keys are `{prefix}:rate:{limit}[:{key hash}]` and
//! `{prefix}:slots:{limit}`; released leases are announced on `{prefix}:released`. A caller's
//! key is stored only as the first 128 bits of its HMAC-SHA-256 under the operator's secret
//! ([`RedisStoreBuilder::key_secret`]), so whoever reads Redis cannot test guesses of it (an
//! email, a subject). Without a secret it is never stored: a server that would key budgets by
//! caller is refused, and a call keyed anyway meets the fail policy. Each replica puts at most
//! `max_rate_limit_keys` caller keys per limit in Redis (counted until their buckets expire);
//! past it, calls under other keys share one overflow bucket, `{prefix}:rate:{limit}:overflow`.
//!
//! The files, from the top down: the store and its builder here; the two limiters, `rate.rs`
//! and `slots.rs` (with `renewal.rs`, which keeps leases alive, and `listener.rs`, which hears
//! them released); `shared.rs`, the state they share and the fail policy; `scripts.rs`, the
//! Lua; `connection.rs`, how Redis is reached.

mod callers;
pub(in crate::server) mod connection;
pub(in crate::server) mod listener;
mod rate;
mod renewal;
mod scripts;
pub(in crate::server) mod shared;
mod slots;
mod used;

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use redis::RedisError;
use tokio::sync::Notify;

use super::{ConcurrencyLimiter, LimitStore, MemoryStore, RateLimiter, RateSpec, SlotSpec};
use connection::{Connection, Target};
use rate::RedisRate;
pub use shared::FailPolicy;
use shared::Inner;
use slots::RedisSlots;

/// Limits shared by every server that uses the same Redis and prefix: described with
/// [`RedisStore::builder`].
///
/// ```no_run
/// use mcp_fusion::server::limits::{FailPolicy, RedisStore};
///
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisStore::builder("redis://127.0.0.1:6379")
///     .fail(FailPolicy::Closed)
///     .prefix("billing")
///     .build()?;
/// # let _ = store;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.inner.prefix)
            .field("policy", &self.inner.policy)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// How long an operation may take before the store counts Redis as unavailable.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);
/// How much longer than the action's deadline a lease lasts.
const DEFAULT_LEASE_MARGIN: Duration = Duration::from_secs(5);
/// How long a lease of an action without a deadline lasts between renewals' reach.
const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A [`RedisStore`] being described: the settings, then [`build`](Self::build), which makes
/// the connection with them. Its `Debug` shows no credential: neither the password of a Redis
/// URL nor the key secret.
///
/// ```
/// use mcp_fusion::server::limits::RedisStore;
///
/// let builder = RedisStore::builder("redis://limits:hunter2@10.0.0.5:6379/0")
///     .key_secret("a secret of 32 random bytes, say");
/// let shown = format!("{builder:?}");
/// assert!(shown.contains("redis://limits:<redacted>@10.0.0.5:6379/0"));
/// assert!(!shown.contains("hunter2") && !shown.contains("random bytes"));
/// ```
#[derive(Clone)]
#[must_use = "a store is described until it is built"]
pub struct RedisStoreBuilder {
    target: Target,
    prefix: String,
    key_secret: Option<Box<[u8]>>,
    replicas: u32,
    policy: FailPolicy,
    timeout: Duration,
    lease_margin: Duration,
    lease_without_deadline: Duration,
}

impl std::fmt::Debug for RedisStoreBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStoreBuilder")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .field(
                "key_secret",
                &self.key_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("replicas", &self.replicas)
            .field("policy", &self.policy)
            .field("timeout", &self.timeout)
            .field("lease_margin", &self.lease_margin)
            .field("lease_without_deadline", &self.lease_without_deadline)
            .finish()
    }
}

impl RedisStore {
    /// Starts describing a store on the Redis at `url` (`redis://host:port/db`); it fails
    /// closed by default.
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        Self::builder_for(Target::Node(url.into()))
    }

    /// Starts describing a store on a Redis Cluster (or a Valkey cluster), reached first
    /// through `nodes` (`redis://host:port` of some of its nodes): every limit is one key, so
    /// each script runs on the one node that holds its slot, wherever the slot moves. The
    /// guarantees and the fail policy are those of one node.
    ///
    /// ```no_run
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::server::limits::RedisStore;
    /// let store = RedisStore::cluster(["redis://10.0.0.5:6379", "redis://10.0.0.6:6379"])
    ///     .key_secret(std::env::var("LIMITS_KEY_SECRET")?)
    ///     .build()?;
    /// # let _ = store;
    /// # Ok(()) }
    /// ```
    pub fn cluster<S: Into<String>>(nodes: impl IntoIterator<Item = S>) -> RedisStoreBuilder {
        Self::builder_for(Target::Cluster(nodes.into_iter().map(Into::into).collect()))
    }

    /// Starts describing a store on the Redis master that `sentinels` (`redis://host:port` of
    /// Redis Sentinels) name `name`: the store asks them where the master is, and again when
    /// the connection to it is lost or it no longer takes writes, so a failover they make is
    /// followed without a restart. While no master answers, the fail policy applies.
    ///
    /// Redis replicates asynchronously: what a master acknowledged just before it died may not
    /// have reached the replica promoted in its place (so with a cluster's failover). A lease
    /// lost that way is put back by its replica's next renewal (within a third of its time to
    /// live), until which the fleet may admit as many calls more as leases were lost; spends
    /// of a rate limit lost that way are not restored (a budget may admit its last few calls
    /// again, once).
    ///
    /// ```no_run
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::server::limits::RedisStore;
    /// let sentinels = ["redis://10.0.0.5:26379", "redis://10.0.0.6:26379", "redis://10.0.0.7:26379"];
    /// let store = RedisStore::sentinel(sentinels, "limits").build()?;
    /// # let _ = store;
    /// # Ok(()) }
    /// ```
    pub fn sentinel<S: Into<String>>(
        sentinels: impl IntoIterator<Item = S>,
        name: impl Into<String>,
    ) -> RedisStoreBuilder {
        Self::builder_for(Target::Sentinel {
            sentinels: sentinels.into_iter().map(Into::into).collect(),
            name: name.into(),
        })
    }

    fn builder_for(target: Target) -> RedisStoreBuilder {
        RedisStoreBuilder {
            target,
            prefix: "mcp-fusion".to_owned(),
            key_secret: None,
            replicas: 1,
            policy: FailPolicy::Closed,
            timeout: DEFAULT_TIMEOUT,
            lease_margin: DEFAULT_LEASE_MARGIN,
            lease_without_deadline: DEFAULT_LEASE,
        }
    }
}

impl RedisStoreBuilder {
    /// What a call meets when Redis cannot answer in time ([`FailPolicy::Closed`] by default).
    pub fn fail(mut self, policy: FailPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How many replicas share the limits (1 by default): with [`FailPolicy::Open`], while
    /// Redis cannot answer, each replica keeps every limit in its own memory divided by this
    /// (at least 1 call), so that the fleet together stays near the limit.
    pub fn replicas(mut self, replicas: u32) -> Self {
        self.replicas = replicas.max(1);
        self
    }

    /// The prefix of every key and channel (`mcp-fusion` by default): servers with different
    /// prefixes share a Redis without sharing limits.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The secret caller keys are hashed under (HMAC-SHA-256) before they name a budget in
    /// Redis: the same on every replica that shares the limits, at least 16 bytes (32 random
    /// ones, say), and kept as secret as the keys themselves. Without it, no caller's key is
    /// stored, so a server whose rate limits this store keeps may not key budgets by caller:
    /// [`ServerBuilder::build`](crate::server::ServerBuilder::build) refuses one with a
    /// `rate_limit_key`, and serving one with OAuth (`HttpOptions::oauth`: every verified
    /// caller spends a budget named by its subject) is refused (`Server::serve_http` fails,
    /// `Server::http_service` panics). A store keeping only shared budgets and concurrency
    /// limits needs none.
    ///
    /// To rotate it, start the replicas with the new secret: each caller's budget starts full
    /// again under its new name (an old one expires once it would be full anyway), so during
    /// the rotation a caller may spend at most one window's budget twice.
    ///
    /// ```no_run
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let secret = std::env::var("LIMITS_KEY_SECRET")?;
    /// let store = mcp_fusion::server::limits::RedisStore::builder("redis://10.0.0.5:6379")
    ///     .key_secret(secret)
    ///     .build()?;
    /// # let _ = store;
    /// # Ok(()) }
    /// ```
    pub fn key_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.key_secret = Some(secret.as_ref().into());
        self
    }

    /// How long one operation may take before Redis counts as unavailable (250 ms by default):
    /// the connection's own response timeout too.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How much longer than its action's deadline a lease lasts (5 s by default); an action
    /// without a deadline holds leases of `without_deadline` (30 s by default). Leases are
    /// renewed every third of that while the call runs: this is how long a slot outlives a
    /// replica that died holding it. A lease too short to be renewed in time (under three
    /// timeouts) is refused when the server is built.
    pub fn leases(mut self, margin: Duration, without_deadline: Duration) -> Self {
        self.lease_margin = margin;
        self.lease_without_deadline = without_deadline;
        self
    }

    /// The store. Connects on first use, so a server starts while Redis is down; must be
    /// called inside a Tokio runtime. Fails on a malformed URL, or a timeout of zero.
    pub fn build(self) -> Result<RedisStore, RedisError> {
        if self.timeout.is_zero() {
            return Err(RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "a timeout of zero lets no operation complete",
            )));
        }
        if self.key_secret.as_ref().is_some_and(|s| s.len() < 16) {
            return Err(RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "a key secret of fewer than 16 bytes can be guessed: use 32 random bytes",
            )));
        }
        let connection = Connection::open(&self.target, self.timeout)?;
        Ok(RedisStore {
            inner: Arc::new(Inner {
                connection,
                prefix: self.prefix,
                key_secret: self.key_secret,
                unkeyed_said: AtomicBool::new(false),
                local: MemoryStore::new(),
                replicas: self.replicas,
                policy: self.policy,
                timeout: self.timeout,
                lease_margin: self.lease_margin,
                lease_without_deadline: self.lease_without_deadline,
                down: AtomicBool::new(false),
                lease_seed: RandomState::new().hash_one(std::process::id()),
                leases: AtomicU64::new(0),
                wakers: Mutex::new(HashMap::new()),
                listener: OnceLock::new(),
                held: Mutex::default(),
                taken: Arc::new(Notify::new()),
                renewer: OnceLock::new(),
            }),
        })
    }
}

impl LimitStore for RedisStore {
    fn refuses_caller_keys(&self) -> Option<String> {
        self.inner.key_secret.is_none().then(|| {
            "rate limits kept per caller in Redis need a secret to hash caller keys under, so that whoever reads Redis cannot test guesses of them (an email, a subject); set RedisStoreBuilder::key_secret (the same on every replica)".to_owned()
        })
    }

    fn refuses(&self, spec: &SlotSpec<'_>) -> Option<String> {
        let inner = &self.inner;
        let ttl = spec
            .deadline
            .map_or(inner.lease_without_deadline, |d| d + inner.lease_margin);
        // A lease is renewed every third of its time to live, each renewal taking up to the
        // store's timeout: shorter than three timeouts, it may expire while it is renewed.
        let shortest = inner
            .timeout
            .saturating_mul(3)
            .max(Duration::from_millis(30));
        (ttl < shortest).then(|| {
            format!(
                "its Redis leases would last {} ms (the deadline plus the lease margin), less than the {} ms (three Redis timeouts) a lease needs to be renewed in time; raise the margin (RedisStore::leases) or lower the timeout (RedisStore::timeout)",
                ttl.as_millis(),
                shortest.as_millis()
            )
        })
    }

    fn used_states(&self) -> Option<Arc<dyn super::UsedStates>> {
        Some(Arc::new(used::RedisUsed(Arc::clone(&self.inner))))
    }

    fn rate_limit(&self, spec: RateSpec<'_>) -> Box<dyn RateLimiter> {
        Box::new(RedisRate::new(&self.inner, spec))
    }

    fn concurrency(&self, spec: SlotSpec<'_>) -> Box<dyn ConcurrencyLimiter> {
        Box::new(RedisSlots::new(&self.inner, spec))
    }
}
