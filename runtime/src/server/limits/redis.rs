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
//!   The connection is re-established in the background.
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
//! email, a subject); without a secret, of its plain SHA-256, and the store says so once.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelServerType};
use redis::{AsyncConnectionConfig, Client, RedisError, RedisResult, Script};
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use super::{ConcurrencyLimiter, LimitStore, RateLimiter, RateSpec, Refusal, Slot, SlotSpec};
use crate::tool::{BoxFuture, Concurrency, RateLimit};

/// What a [`RedisStore`] does with a call when Redis cannot answer in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPolicy {
    /// Serve the call under this replica's own limits, kept in its memory (each limit divided
    /// by [`RedisStoreBuilder::replicas`]) until Redis answers again; the outage is logged once,
    /// at `error`, and its end at `info`.
    Open,
    /// Refuse the call with SERVER_BUSY (`Tool "{tool}" cannot take calls right now.`) and a
    /// `retry_after`, as ERRORS.md §4 says for a store that cannot answer.
    Closed,
}

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

struct Inner {
    connection: Connection,
    prefix: String,
    /// The operator's secret caller keys are hashed under.
    key_secret: Option<Box<[u8]>>,
    /// Whether a caller key was stored without a secret (said once).
    unkeyed_said: AtomicBool,
    /// Where the limits are kept while Redis cannot answer and the policy is open.
    local: super::MemoryStore,
    replicas: u32,
    policy: FailPolicy,
    timeout: Duration,
    lease_margin: Duration,
    lease_without_deadline: Duration,
    /// Whether the last operation failed: an outage is logged when it starts and ends.
    down: AtomicBool,
    /// This process's part of every lease id.
    lease_seed: u64,
    leases: AtomicU64,
    /// Who to wake when a lease of a sorted set is released, by its key.
    wakers: Mutex<HashMap<String, Arc<Notify>>>,
    /// The task that listens for released leases, started by the first call that waits.
    listener: OnceLock<tokio::task::JoinHandle<()>>,
    /// The leases this replica holds, renewed together by one task.
    held: Mutex<Held>,
    /// Wakes the renewer when a lease is taken.
    taken: Arc<Notify>,
    /// The one task that renews every lease of this replica, started with the first lease.
    renewer: OnceLock<tokio::task::JoinHandle<()>>,
}

/// The leases a replica holds, by number: the sorted set, the lease id, its time to live, and
/// when it is next renewed (every third of its time to live).
#[derive(Default)]
struct Held {
    leases: HashMap<u64, HeldLease>,
}

struct HeldLease {
    key: String,
    id: String,
    ttl: Duration,
    due: tokio::time::Instant,
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

/// How long an operation may take before the store counts Redis as unavailable.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);
/// How much longer than the action's deadline a lease lasts.
const DEFAULT_LEASE_MARGIN: Duration = Duration::from_secs(5);
/// How long a lease of an action without a deadline lasts between renewals' reach.
const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// The longest a call at the head of the line waits before asking Redis again.
const POLL: Duration = Duration::from_millis(50);

/// Where the limits are kept, each with the client released leases are announced through:
/// one Redis (reconnecting in the background), a Redis Cluster (the client follows
/// `MOVED`/`ASK` redirections and the cluster's slot map), or the master Sentinels name.
enum Connection {
    Node(ConnectionManager, Client),
    Cluster(redis::cluster_async::ClusterConnection, Client),
    Sentinel(Box<Master>),
}

/// Which Redis a store is built for.
#[derive(Debug, Clone)]
enum Target {
    Node(String),
    Cluster(Vec<String>),
    Sentinel {
        sentinels: Vec<String>,
        name: String,
    },
}

/// The master a set of Sentinels names for a service, asked again once the connection to it
/// is lost, times out, or it answers `READONLY` (demoted by a failover).
struct Master {
    sentinels: tokio::sync::Mutex<SentinelClient>,
    /// The master's client and connection, with the number of the lookup that found them.
    current: Mutex<Option<(u64, Client, MultiplexedConnection)>>,
    lookups: AtomicU64,
    config: AsyncConnectionConfig,
}

impl Master {
    fn lock_current(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<(u64, Client, MultiplexedConnection)>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection to the master, looked up through the Sentinels when there is none (the
    /// crate checks that the node it names answers `ROLE` as a master).
    async fn connection(&self) -> RedisResult<(u64, Client, MultiplexedConnection)> {
        if let Some(current) = self.lock_current().clone() {
            return Ok(current);
        }
        let mut sentinels = self.sentinels.lock().await;
        // Someone else may have looked it up while this call waited.
        if let Some(current) = self.lock_current().clone() {
            return Ok(current);
        }
        let client = sentinels.async_get_client().await?;
        let connection = client
            .get_multiplexed_async_connection_with_config(&self.config)
            .await?;
        let lookup = self.lookups.fetch_add(1, Ordering::Relaxed);
        let current = (lookup, client, connection);
        *self.lock_current() = Some(current.clone());
        Ok(current)
    }

    /// Forgets the connection found by `lookup` (not a newer one), so the next operation asks
    /// the Sentinels again.
    fn forget(&self, lookup: u64) {
        let mut current = self.lock_current();
        if current
            .as_ref()
            .is_some_and(|(found, _, _)| *found == lookup)
        {
            *current = None;
        }
    }

    async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> RedisResult<T> {
        let (lookup, _, mut connection) = self.connection().await?;
        // Dropped unanswered (the store's timeout): the master may be gone without a word.
        let mut unanswered = Unanswered(self, Some(lookup));
        let answer = invocation.invoke_async(&mut connection).await;
        if !matches!(&answer, Err(error) if lost_master(error)) {
            unanswered.1 = None;
        }
        answer
    }
}

/// Forgets the master's connection when an operation ends without the master's answer.
struct Unanswered<'a>(&'a Master, Option<u64>);

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if let Some(lookup) = self.1 {
            self.0.forget(lookup);
        }
    }
}

/// Whether an error means the connection no longer leads to the master.
fn lost_master(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_timeout()
        || error.is_unrecoverable_error()
        || error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly)
}

/// A [`RedisStore`] being described: the settings, then [`build`](Self::build), which makes
/// the connection with them.
#[derive(Debug, Clone)]
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
    /// Redis: the same on every replica that shares the limits, and kept as secret as the
    /// keys themselves. Required when limits are kept per caller (`ServerBuilder::build` says
    /// so for a `rate_limit_key`; callers verified by OAuth are keyed by subject).
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
        let connection = match &self.target {
            Target::Node(url) => {
                let client = Client::open(url.as_str())?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(self.timeout))
                    .set_response_timeout(Some(self.timeout))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(500));
                let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)?;
                Connection::Node(connection, client)
            }
            Target::Cluster(nodes) => {
                // Released leases are announced on one node: a cluster's classic pub/sub
                // reaches every node's subscribers.
                let Some(first) = nodes.first() else {
                    return Err(RedisError::from((
                        redis::ErrorKind::InvalidClientConfig,
                        "a Redis Cluster needs at least one node to start from",
                    )));
                };
                let client = Client::open(first.as_str())?;
                let cluster =
                    redis::cluster::ClusterClient::builder(nodes.iter().map(String::as_str))
                        .connection_timeout(self.timeout)
                        .response_timeout(self.timeout)
                        .retries(2)
                        .min_retry_wait(10)
                        .max_retry_wait(100)
                        .build()?;
                let config = redis::cluster::ClusterConfig::new()
                    .set_connection_timeout(self.timeout)
                    .set_response_timeout(self.timeout);
                let connection = cluster.get_pending_async_connection_with_config(config);
                Connection::Cluster(connection, client)
            }
            Target::Sentinel { sentinels, name } => {
                let sentinels = SentinelClient::build(
                    sentinels.iter().map(String::as_str).collect(),
                    name.clone(),
                    None,
                    SentinelServerType::Master,
                )?;
                Connection::Sentinel(Box::new(Master {
                    sentinels: tokio::sync::Mutex::new(sentinels),
                    current: Mutex::new(None),
                    lookups: AtomicU64::new(0),
                    config: AsyncConnectionConfig::new()
                        .set_connection_timeout(Some(self.timeout))
                        .set_response_timeout(Some(self.timeout)),
                }))
            }
        };
        Ok(RedisStore {
            inner: Arc::new(Inner {
                connection,
                prefix: self.prefix,
                key_secret: self.key_secret,
                unkeyed_said: AtomicBool::new(false),
                local: super::MemoryStore::new(),
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
            "rate limits kept per caller in Redis need a secret to hash caller keys under, so that whoever reads Redis cannot test guesses of them; set RedisStoreBuilder::key_secret (the same on every replica)".to_owned()
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

    fn rate_limit(&self, spec: RateSpec<'_>) -> Box<dyn RateLimiter> {
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let max = spec.limit.max.max(1);
        let interval = (micros(spec.limit.window) / max).max(1);
        let local = self.inner.local.rate_limit(RateSpec {
            limit: RateLimit {
                max: (max / u64::from(self.inner.replicas)).max(1),
                ..spec.limit
            },
            ..spec
        });
        Box::new(RedisRate {
            store: Arc::clone(&self.inner),
            key: format!("{}:rate:{}", self.inner.prefix, spec.name),
            local,
            limit: spec.limit,
            interval,
            tolerance: interval.saturating_mul(max - 1),
        })
    }

    fn concurrency(&self, spec: SlotSpec<'_>) -> Box<dyn ConcurrencyLimiter> {
        let key = format!("{}:slots:{}", self.inner.prefix, spec.name);
        let wake = Arc::clone(
            self.inner
                .lock_wakers()
                .entry(key.clone())
                .or_insert_with(|| Arc::new(Notify::new())),
        );
        let replicas = usize::try_from(self.inner.replicas).unwrap_or(usize::MAX);
        let local = self.inner.local.concurrency(SlotSpec {
            limit: Concurrency {
                max_active: (spec.limit.max_active / replicas).max(1),
                ..spec.limit
            },
            ..spec
        });
        Box::new(RedisSlots {
            store: Arc::clone(&self.inner),
            key,
            local,
            limit: spec.limit,
            queued: AtomicUsize::new(0),
            line: tokio::sync::Mutex::new(()),
            last_wait: AtomicU64::new(1_000),
            wake,
        })
    }
}

/// Admits a call when its bucket has room, on Redis's clock. KEYS[1] the bucket; ARGV the
/// interval and the tolerance in µs. Returns 0, or the wait in µs.
const SPEND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local excess = tat - now - tonumber(ARGV[2])
if excess > 0 then return excess end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
";

/// Gives one interval back to a bucket, never below now. KEYS[1] the bucket; ARGV the interval.
const REFUND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
tat = tat - tonumber(ARGV[1])
if tat <= now then redis.call('DEL', KEYS[1]) return 0 end
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
";

/// Takes a lease when fewer than `max` are live. KEYS[1] the sorted set; ARGV the lease id, its
/// time to live in ms, `max`. Returns -1 when taken, else the ms until the earliest expiry.
const ACQUIRE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), ARGV[1])
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
  return -1
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return tonumber(first[2]) - now
";

/// Extends the leases of calls still running, of one sorted set, putting back those that are
/// gone (expired while Redis could not be reached, or lost in a failover): the set counts the
/// calls that run. KEYS[1] the set; ARGV pairs of a lease id and its time to live in ms.
/// Returns, per lease, 1 when extended, 0 when it was put back.
const RENEW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renewed = {}
local longest = 0
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local ttl = tonumber(ARGV[i + 1])
  local expiry = tonumber(redis.call('ZSCORE', KEYS[1], id) or '0')
  redis.call('ZADD', KEYS[1], string.format('%.0f', now + ttl), id)
  if ttl > longest then longest = ttl end
  if expiry <= now then renewed[#renewed + 1] = 0 else renewed[#renewed + 1] = 1 end
end
if longest > 0 and redis.call('PTTL', KEYS[1]) < longest then redis.call('PEXPIRE', KEYS[1], longest) end
return renewed
";

/// Gives a lease back and tells the waiters. KEYS[1] the sorted set; ARGV the lease id, the
/// channel.
const RELEASE: &str = r"
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('PUBLISH', ARGV[2], KEYS[1]) end
return 0
";

/// Each script, sent to Redis once per connection lifetime and then called by digest.
static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    spend: Script::new(SPEND),
    refund: Script::new(REFUND),
    acquire: Script::new(ACQUIRE),
    renew: Script::new(RENEW),
    release: Script::new(RELEASE),
});

struct Scripts {
    spend: Script,
    refund: Script,
    acquire: Script,
    renew: Script,
    release: Script,
}

/// Why an operation did not get an answer from Redis.
enum Failed {
    Redis(RedisError),
    TimedOut,
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
    fn lock_wakers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.wakers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `source` on `key` with `args`, within the timeout.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        key: &str,
        args: impl redis::ToRedisArgs,
    ) -> Result<T, Failed> {
        let mut invocation = script.key(key);
        invocation.arg(args);
        let invoked = async {
            match &self.connection {
                Connection::Node(node, _) => invocation.invoke_async(&mut node.clone()).await,
                Connection::Cluster(cluster, _) => {
                    invocation.invoke_async(&mut cluster.clone()).await
                }
                Connection::Sentinel(master) => master.invoke(&invocation).await,
            }
        };
        let answer = tokio::time::timeout(self.timeout, invoked)
            .await
            .map_err(|_| Failed::TimedOut)
            .and_then(|r| r.map_err(Failed::Redis));
        if answer.is_ok() && self.down.swap(false, Ordering::AcqRel) {
            tracing::info!(prefix = %self.prefix, "the Redis limit store answers again");
        }
        answer
    }

    /// What a call gets when Redis did not answer: admitted (fail open) or SERVER_BUSY.
    fn failed(&self, failed: &Failed) -> Result<(), Refusal> {
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
        match self.policy {
            FailPolicy::Open => Ok(()),
            FailPolicy::Closed => Err(Refusal::Unavailable {
                retry_after: Duration::from_secs(1),
            }),
        }
    }

    fn lock_held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a lease among those the replica renews, starting the renewer with the first;
    /// its number.
    fn hold(self: &Arc<Self>, key: String, id: String, ttl: Duration) -> u64 {
        let number = self.leases.fetch_add(1, Ordering::Relaxed);
        let due = tokio::time::Instant::now() + renewal_period(ttl);
        self.lock_held()
            .leases
            .insert(number, HeldLease { key, id, ttl, due });
        self.renewer
            .get_or_init(|| tokio::spawn(renew(Arc::downgrade(self))));
        self.taken.notify_one();
        number
    }

    /// A client of the Redis released leases are announced on.
    async fn announcer(&self) -> RedisResult<Client> {
        match &self.connection {
            Connection::Node(_, client) | Connection::Cluster(_, client) => Ok(client.clone()),
            Connection::Sentinel(master) => Ok(master.connection().await?.1),
        }
    }

    fn channel(&self) -> String {
        format!("{}:released", self.prefix)
    }

    /// Starts listening for released leases, once per store.
    fn listen(self: &Arc<Self>) {
        self.listener
            .get_or_init(|| tokio::spawn(listen(Arc::downgrade(self))));
    }
}

/// How often a lease is renewed: every third of its time to live.
fn renewal_period(ttl: Duration) -> Duration {
    (ttl / 3).max(Duration::from_millis(1))
}

/// Renews every lease of the replica as it falls due, those of one sorted set in one script
/// call; sleeps until the next one is due or a lease is taken.
async fn renew(store: Weak<Inner>) {
    loop {
        let Some(inner) = store.upgrade() else { return };
        let now = tokio::time::Instant::now();
        // Renewed a little early rather than in a pass of its own a moment later.
        let soon = now + Duration::from_millis(5);
        let mut due: HashMap<String, Vec<(u64, String, Duration)>> = HashMap::new();
        let mut next = None::<tokio::time::Instant>;
        {
            let mut held = inner.lock_held();
            for (&number, lease) in &mut held.leases {
                if lease.due <= soon {
                    lease.due = now + renewal_period(lease.ttl);
                    due.entry(lease.key.clone()).or_default().push((
                        number,
                        lease.id.clone(),
                        lease.ttl,
                    ));
                }
                next = Some(next.map_or(lease.due, |n: tokio::time::Instant| n.min(lease.due)));
            }
        }
        for (key, leases) in due {
            let args: Vec<String> = leases
                .iter()
                .flat_map(|(_, id, ttl)| [id.clone(), ttl.as_millis().to_string()])
                .collect();
            match inner.run::<Vec<i64>>(&SCRIPTS.renew, &key, &args).await {
                Ok(renewed) => {
                    // Put back: a call still running, or one whose release overtook its
                    // renewal (released again).
                    let (running, released): (Vec<_>, Vec<_>) = {
                        let held = inner.lock_held();
                        leases
                            .iter()
                            .zip(&renewed)
                            .filter(|(_, renewed)| **renewed == 0)
                            .map(|((number, id, _), _)| (held.leases.contains_key(number), id))
                            .partition(|(running, _)| *running)
                    };
                    if !running.is_empty() {
                        tracing::warn!(
                            key,
                            leases = running.len(),
                            "leases of running calls were gone from Redis (expired while it \
                             could not be reached, or lost in a failover) and are taken again: \
                             until now the fleet may have admitted as many calls too many"
                        );
                    }
                    for (_, id) in released {
                        let args = (id, inner.channel());
                        let _ = inner.run::<i64>(&SCRIPTS.release, &key, &args).await;
                    }
                }
                Err(failed) => {
                    let _ = inner.failed(&failed);
                }
            }
        }
        // Not kept while asleep: the store is dropped (and this task stopped) with its last user.
        let taken = Arc::clone(&inner.taken);
        drop(inner);
        match next {
            Some(next) => {
                tokio::select! {
                    () = tokio::time::sleep_until(next) => {}
                    () = taken.notified() => {}
                }
            }
            None => taken.notified().await,
        }
    }
}

/// Wakes the head of each line when a lease of its sorted set is released by any replica;
/// reconnects after an error (the line polls meanwhile).
async fn listen(store: Weak<Inner>) {
    loop {
        let Some(inner) = store.upgrade() else { return };
        let (channel, timeout) = (inner.channel(), inner.timeout);
        let subscribed = async {
            let client = inner.announcer().await?;
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, RedisError>(pubsub)
        };
        let subscribed = tokio::time::timeout(timeout * 4, subscribed).await;
        drop(inner);
        if let Ok(Ok(mut pubsub)) = subscribed {
            let mut messages = pubsub.on_message();
            while let Some(message) = next(&mut messages).await {
                let Some(store) = store.upgrade() else { return };
                let Ok(key) = message.get_payload::<String>() else {
                    continue;
                };
                if let Some(wake) = store.lock_wakers().get(&key) {
                    wake.notify_waiters();
                }
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn next<S: futures_core::Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

/// One rate limit on Redis.
struct RedisRate {
    store: Arc<Inner>,
    key: String,
    /// This replica's own share of the limit, kept while Redis cannot answer (fail open).
    local: Box<dyn RateLimiter>,
    limit: RateLimit,
    interval: u64,
    tolerance: u64,
}

impl RedisRate {
    fn bucket(&self, key: Option<&str>) -> String {
        match key {
            None => self.key.clone(),
            Some(key) => {
                let hash: [u8; 32] = match &self.store.key_secret {
                    Some(secret) => {
                        use hmac::{KeyInit, Mac};
                        let mut mac = hmac::Hmac::<Sha256>::new_from_slice(secret)
                            .expect("HMAC takes a key of any length");
                        mac.update(key.as_bytes());
                        mac.finalize().into_bytes().into()
                    }
                    None => {
                        if !self.store.unkeyed_said.swap(true, Ordering::Relaxed) {
                            tracing::warn!(prefix = %self.store.prefix, "caller keys are stored in Redis as plain SHA-256 hashes, which whoever reads Redis can test guesses against; set RedisStoreBuilder::key_secret");
                        }
                        Sha256::digest(key.as_bytes()).into()
                    }
                };
                let mut bucket = String::with_capacity(self.key.len() + 33);
                bucket.push_str(&self.key);
                bucket.push(':');
                for byte in &hash[..16] {
                    bucket.push_str(&format!("{byte:02x}"));
                }
                bucket
            }
        }
    }
}

impl RateLimiter for RedisRate {
    fn spend<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let bucket = self.bucket(key);
            let args = (self.interval, self.tolerance);
            match self.store.run::<u64>(&SCRIPTS.spend, &bucket, &args).await {
                Ok(0) => Ok(()),
                Ok(wait) => Err(Refusal::RateLimited {
                    limit: self.limit,
                    wait: Duration::from_micros(wait),
                }),
                Err(failed) => {
                    self.store.failed(&failed)?;
                    self.local.spend(key).await
                }
            }
        })
    }

    fn refund<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let bucket = self.bucket(key);
            let args = self.interval;
            if let Err(failed) = self.store.run::<u64>(&SCRIPTS.refund, &bucket, &args).await
                && self.store.failed(&failed).is_ok()
            {
                self.local.refund(key).await;
            }
        })
    }
}

/// One concurrency limit on Redis.
struct RedisSlots {
    store: Arc<Inner>,
    key: String,
    /// This replica's own share of the limit, kept while Redis cannot answer (fail open).
    local: Box<dyn ConcurrencyLimiter>,
    limit: Concurrency,
    /// Calls of this replica waiting in line.
    queued: AtomicUsize,
    /// This replica's line: its head asks Redis, the others wait their turn.
    line: tokio::sync::Mutex<()>,
    /// The ms to the earliest lease expiry, as Redis last said.
    last_wait: AtomicU64,
    wake: Arc<Notify>,
}

/// What one attempt at a lease got.
enum Attempt {
    Taken(String),
    /// The ms until the earliest lease expires.
    Full(u64),
}

impl RedisSlots {
    async fn attempt(&self, ttl: Duration) -> Result<Attempt, Failed> {
        let n = self.store.leases.fetch_add(1, Ordering::Relaxed);
        let id = format!("{:016x}{n:x}", self.store.lease_seed);
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let max = self.limit.max_active as u64;
        let args = (&id, ttl_ms, max);
        match self
            .store
            .run::<i64>(&SCRIPTS.acquire, &self.key, &args)
            .await?
        {
            -1 => Ok(Attempt::Taken(id)),
            wait => {
                let wait = wait.max(0).unsigned_abs();
                self.last_wait.store(wait, Ordering::Relaxed);
                Ok(Attempt::Full(wait))
            }
        }
    }

    fn busy(&self, wait_ms: u64) -> Refusal {
        Refusal::Busy {
            limit: self.limit,
            retry_after: Duration::from_millis(wait_ms),
        }
    }

    fn lease(&self, id: String, ttl: Duration) -> Slot {
        let store = Arc::clone(&self.store);
        let number = store.hold(self.key.clone(), id.clone(), ttl);
        Slot::new(Lease {
            store,
            key: self.key.clone(),
            id,
            number,
            wake: Arc::clone(&self.wake),
        })
    }
}

impl ConcurrencyLimiter for RedisSlots {
    fn enter(&self, deadline: Option<Duration>) -> BoxFuture<'_, Result<Slot, Refusal>> {
        Box::pin(async move {
            let store = &self.store;
            let ttl = deadline.map_or(store.lease_without_deadline, |d| d + store.lease_margin);
            // Nobody of this replica in line: ask Redis at once.
            if self.queued.load(Ordering::Acquire) == 0 {
                match self.attempt(ttl).await {
                    Ok(Attempt::Taken(id)) => return Ok(self.lease(id, ttl)),
                    Ok(Attempt::Full(_)) => {}
                    Err(failed) => {
                        store.failed(&failed)?;
                        return self.local.enter(deadline).await;
                    }
                }
            }
            let waiting = self.queued.fetch_add(1, Ordering::AcqRel);
            let _in_line = InLine(&self.queued);
            if waiting >= self.limit.max_queued {
                return Err(self.busy(self.last_wait.load(Ordering::Relaxed)));
            }
            store.listen();
            let _head = self.line.lock().await;
            loop {
                let released = self.wake.notified();
                tokio::pin!(released);
                released.as_mut().enable();
                match self.attempt(ttl).await {
                    Ok(Attempt::Taken(id)) => return Ok(self.lease(id, ttl)),
                    Ok(Attempt::Full(wait)) => {
                        let poll = POLL.min(Duration::from_millis(wait.max(1)));
                        tokio::select! {
                            () = released => {}
                            () = tokio::time::sleep(poll) => {}
                        }
                    }
                    Err(failed) => {
                        store.failed(&failed)?;
                        return self.local.enter(deadline).await;
                    }
                }
            }
        })
    }
}

/// A place in this replica's line, given back however the wait ends.
struct InLine<'a>(&'a AtomicUsize);

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A lease held by a running call: renewed while held, released when dropped.
struct Lease {
    store: Arc<Inner>,
    key: String,
    id: String,
    /// Its number among the leases the replica renews.
    number: u64,
    wake: Arc<Notify>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.store.lock_held().leases.remove(&self.number);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, key, id) = (
            Arc::clone(&self.store),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.id),
        );
        let wake = Arc::clone(&self.wake);
        runtime.spawn(async move {
            let channel = store.channel();
            let args = (&id, &channel);
            // Not released (Redis unreachable): the lease expires on its own.
            if store
                .run::<i64>(&SCRIPTS.release, &key, &args)
                .await
                .is_ok()
            {
                wake.notify_waiters();
            }
        });
    }
}
