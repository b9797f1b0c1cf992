//! Limits shared by every replica through one Redis.
//!
//! - **Rate limits**: GCRA (as in memory) in one Lua script per call, on Redis's own clock
//!   (`TIME`), so replicas whose clocks disagree still agree on every budget. A bucket is one
//!   string key holding its TAT in microseconds, expiring once it is as good as new.
//! - **Concurrency**: a sorted set of leases per limit, scored by their expiry on Redis's clock.
//!   A lease lasts the action's deadline plus a margin and is renewed every third of that while
//!   the handler runs, so a replica that dies holding one frees it within that time. A call that
//!   finds no lease free waits in this replica's line (`max_queued` is per replica); the head of
//!   the line tries again when a lease is released anywhere (pub/sub) and at least every 50 ms.
//! - **Outages**: every operation has a timeout; when Redis cannot answer, the store admits the
//!   call ([`FailPolicy::Open`], logged once per outage) or refuses it with SERVER_BUSY
//!   ([`FailPolicy::Closed`]). The connection is re-established in the background.
//!
//! Scripts are sent once and then called by digest (`EVALSHA`), sent again when Redis answers
//! `NOSCRIPT` (after a restart). Keys are `{prefix}:rate:{limit}[:{key hash}]` and
//! `{prefix}:slots:{limit}`; released leases are announced on `{prefix}:released`. A caller's
//! key is stored only as the first 128 bits of its SHA-256.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisError, Script};
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use super::{ConcurrencyLimiter, LimitStore, RateLimiter, RateSpec, Refusal, Slot, SlotSpec};
use crate::tool::{BoxFuture, Concurrency, RateLimit};

/// What a [`RedisStore`] does with a call when Redis cannot answer in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPolicy {
    /// Serve the call as if it were within every limit; the outage is logged once, at `error`,
    /// and its end at `info`.
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
    client: Client,
    connection: ConnectionManager,
    prefix: String,
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
        if let Some(listener) = self.listener.get() {
            listener.abort();
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

/// A [`RedisStore`] being described: the settings, then [`build`](Self::build), which makes
/// the connection with them.
#[derive(Debug, Clone)]
#[must_use = "a store is described until it is built"]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
    policy: FailPolicy,
    timeout: Duration,
    lease_margin: Duration,
    lease_without_deadline: Duration,
}

impl RedisStore {
    /// Starts describing a store on the Redis at `url` (`redis://host:port/db`); it fails
    /// closed by default.
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder {
            url: url.into(),
            prefix: "mcp-fusion".to_owned(),
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

    /// The prefix of every key and channel (`mcp-fusion` by default): servers with different
    /// prefixes share a Redis without sharing limits.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
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
        let client = Client::open(self.url.as_str())?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)?;
        Ok(RedisStore {
            inner: Arc::new(Inner {
                client,
                connection,
                prefix: self.prefix,
                policy: self.policy,
                timeout: self.timeout,
                lease_margin: self.lease_margin,
                lease_without_deadline: self.lease_without_deadline,
                down: AtomicBool::new(false),
                lease_seed: RandomState::new().hash_one(std::process::id()),
                leases: AtomicU64::new(0),
                wakers: Mutex::new(HashMap::new()),
                listener: OnceLock::new(),
            }),
        })
    }
}

impl LimitStore for RedisStore {
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
        Box::new(RedisRate {
            store: Arc::clone(&self.inner),
            key: format!("{}:rate:{}", self.inner.prefix, spec.name),
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
        Box::new(RedisSlots {
            store: Arc::clone(&self.inner),
            key,
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

/// Extends a live lease. KEYS[1] the sorted set; ARGV the lease id, its time to live in ms.
/// Returns 1, or 0 when the lease had already expired (and is gone).
const RENEW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '0')
if expiry <= now then redis.call('ZREM', KEYS[1], ARGV[1]) return 0 end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', string.format('%.0f', now + ttl), ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
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
        let mut connection = self.connection.clone();
        let answer = tokio::time::timeout(self.timeout, invocation.invoke_async(&mut connection))
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
                    "the Redis limit store cannot answer: calls are served WITHOUT fleet-wide \
                     limits until it does (fail open)"
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

    fn channel(&self) -> String {
        format!("{}:released", self.prefix)
    }

    /// Starts listening for released leases, once per store.
    fn listen(self: &Arc<Self>) {
        self.listener
            .get_or_init(|| tokio::spawn(listen(Arc::downgrade(self))));
    }
}

/// Wakes the head of each line when a lease of its sorted set is released by any replica;
/// reconnects after an error (the line polls meanwhile).
async fn listen(store: Weak<Inner>) {
    loop {
        let Some((client, channel, timeout)) = store
            .upgrade()
            .map(|s| (s.client.clone(), s.channel(), s.timeout))
        else {
            return;
        };
        let subscribed = async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, RedisError>(pubsub)
        };
        if let Ok(Ok(mut pubsub)) = tokio::time::timeout(timeout * 4, subscribed).await {
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
    limit: RateLimit,
    interval: u64,
    tolerance: u64,
}

impl RedisRate {
    fn bucket(&self, key: Option<&str>) -> String {
        match key {
            None => self.key.clone(),
            Some(key) => {
                let hash = Sha256::digest(key.as_bytes());
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
                Err(failed) => self.store.failed(&failed),
            }
        })
    }

    fn refund<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let bucket = self.bucket(key);
            let args = self.interval;
            if let Err(failed) = self.store.run::<u64>(&SCRIPTS.refund, &bucket, &args).await {
                let _ = self.store.failed(&failed);
            }
        })
    }
}

/// One concurrency limit on Redis.
struct RedisSlots {
    store: Arc<Inner>,
    key: String,
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
        let key = self.key.clone();
        let renewing = {
            let (store, key, id) = (Arc::clone(&store), key.clone(), id.clone());
            tokio::spawn(async move {
                let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
                let mut every = tokio::time::interval((ttl / 3).max(Duration::from_millis(1)));
                every.tick().await;
                loop {
                    every.tick().await;
                    let args = (&id, ttl_ms);
                    match store.run::<i64>(&SCRIPTS.renew, &key, &args).await {
                        Ok(1) => {}
                        Ok(_) => {
                            tracing::warn!(
                                key,
                                "a lease expired before it was renewed (Redis unreachable for \
                                 longer than its time to live): the fleet may run one call too \
                                 many until this one ends"
                            );
                            return;
                        }
                        Err(failed) => {
                            let _ = store.failed(&failed);
                        }
                    }
                }
            })
        };
        Slot::new(Lease {
            store,
            key,
            id,
            renewing,
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
                    Err(failed) => return store.failed(&failed).map(|()| Slot::unlimited()),
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
                    Err(failed) => return store.failed(&failed).map(|()| Slot::unlimited()),
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
    renewing: tokio::task::JoinHandle<()>,
    wake: Arc<Notify>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewing.abort();
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
