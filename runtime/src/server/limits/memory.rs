//! Limits in this process: the generic cell rate algorithm (GCRA) for rate limits, one bucket
//! per limit or one per caller key with the keyed state bounded, and a semaphore with a
//! first-come-first-served line for concurrency.
//!
//! A bucket is one instant, its *theoretical arrival time* (TAT): `max` calls per `window` admit
//! one call every `window / max` (the emission interval) with a burst of `max`. A call at `now`
//! is admitted when `TAT - now <= (max - 1) × interval`, and moves the TAT one interval on; when
//! refused, the wait is exactly the excess. A bucket whose TAT has passed is indistinguishable
//! from a new one, so it can be forgotten without resetting anyone's budget.
//!
//! Keyed buckets hold a 64-bit hash of the key under a per-process random seed (never the key,
//! which is often a credential) and the TAT: at most 64 bytes each, counting the map's growth.
//! Stale buckets are dropped when the map doubles and at least once per window; past
//! `max_keys` live buckets, calls under a new key share one overflow bucket, so a flood of
//! distinct keys costs at most `max_keys × 64` bytes per limit and cannot reset a caller's
//! limit.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::{ConcurrencyLimiter, LimitStore, RateLimiter, RateSpec, Refusal, Slot, SlotSpec};
use crate::tool::{BoxFuture, Concurrency, RateLimit};

/// How many distinct rate-limit keys a tool tracks before new keys share one bucket.
pub(crate) const DEFAULT_MAX_KEYS: usize = 100_000;

/// Limits held in this process: each server's own, gone when it stops. The default store.
///
/// ```
/// use mcp_fusion::Server;
/// use mcp_fusion::server::limits::MemoryStore;
///
/// let server = Server::builder("billing-server", "1.0.0").limit_store(MemoryStore::new());
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryStore {
    _private: (),
}

impl MemoryStore {
    /// The in-memory store.
    pub fn new() -> Self {
        MemoryStore::default()
    }
}

impl LimitStore for MemoryStore {
    fn rate_limit(&self, spec: RateSpec<'_>) -> Box<dyn RateLimiter> {
        Box::new(Rate::new(spec.limit, spec.max_keys))
    }

    fn concurrency(&self, spec: SlotSpec<'_>) -> Box<dyn ConcurrencyLimiter> {
        Box::new(Slots::new(spec.limit))
    }
}

/// One rate limit in memory.
pub(crate) struct Rate {
    limit: RateLimit,
    gcra: Gcra,
    shared: AtomicU64,
    keyed: Keyed,
}

impl Rate {
    pub(crate) fn new(limit: RateLimit, max_keys: usize) -> Self {
        Rate {
            limit,
            gcra: Gcra::new(limit),
            shared: AtomicU64::new(0),
            keyed: Keyed {
                seed: RandomState::new(),
                max_keys,
                buckets: Mutex::new(Buckets {
                    tat: HashMap::new(),
                    overflow: 0,
                    sweep_at: SWEEP_FROM,
                    swept: 0,
                }),
            },
        }
    }

    /// RATE_LIMITED with the exact wait when the call's bucket is empty. The key is never kept.
    pub(crate) fn check(&self, key: Option<&str>) -> Result<(), Refusal> {
        let now = self.gcra.now();
        let verdict = match key {
            Some(key) => self.keyed.check(&self.gcra, key, now),
            None => self.gcra.check_shared(&self.shared, now),
        };
        verdict.map_err(|wait| Refusal::RateLimited {
            limit: self.limit,
            wait,
        })
    }

    /// Moves the call's bucket one interval back, never below now (a full budget).
    fn give_back(&self, key: Option<&str>) {
        let now = self.gcra.now();
        let back = |tat: u64| tat.saturating_sub(self.gcra.interval).max(now);
        match key {
            Some(key) => {
                let hash = self.keyed.seed.hash_one(key);
                if let Some(tat) = self.keyed.lock().tat.get_mut(&hash) {
                    *tat = back(*tat);
                }
            }
            None => {
                let _ = self
                    .shared
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| Some(back(t)));
            }
        }
    }

    /// How many keyed buckets are held.
    #[cfg(test)]
    fn keys(&self) -> usize {
        self.keyed.lock().tat.len()
    }
}

impl RateLimiter for Rate {
    fn spend<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, Result<(), Refusal>> {
        let verdict = self.check(key);
        Box::pin(std::future::ready(verdict))
    }

    fn refund<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, ()> {
        self.give_back(key);
        Box::pin(std::future::ready(()))
    }
}

/// The arithmetic of one limit, on nanoseconds since the limit was made.
struct Gcra {
    start: Instant,
    window: u64,
    interval: u64,
    tolerance: u64,
}

impl Gcra {
    /// A limit of zero calls (which the macros refuse) admits one call per window.
    fn new(limit: RateLimit) -> Self {
        let max = limit.max.max(1);
        let window = u64::try_from(limit.window.as_nanos()).unwrap_or(u64::MAX);
        let interval = (window / max).max(1);
        Gcra {
            start: Instant::now(),
            window,
            interval,
            tolerance: interval.saturating_mul(max - 1),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The bucket's next TAT when the call is admitted, or the wait.
    fn next(&self, tat: u64, now: u64) -> Result<u64, Duration> {
        let tat = tat.max(now);
        match (tat - now).checked_sub(self.tolerance) {
            Some(excess) if excess > 0 => Err(Duration::from_nanos(excess)),
            _ => Ok(tat.saturating_add(self.interval)),
        }
    }

    fn check_shared(&self, bucket: &AtomicU64, now: u64) -> Result<(), Duration> {
        let mut tat = bucket.load(Ordering::Acquire);
        loop {
            let next = self.next(tat, now)?;
            match bucket.compare_exchange_weak(tat, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(current) => tat = current,
            }
        }
    }
}

/// Below this many keys the map is not swept for size.
const SWEEP_FROM: usize = 1024;

struct Keyed {
    seed: RandomState,
    max_keys: usize,
    buckets: Mutex<Buckets>,
}

struct Buckets {
    /// TAT by hashed key.
    tat: HashMap<u64, u64>,
    /// The bucket shared by new keys past `max_keys`.
    overflow: u64,
    /// The size at which the map is next swept.
    sweep_at: usize,
    /// When it was last swept.
    swept: u64,
}

impl Keyed {
    fn lock(&self) -> std::sync::MutexGuard<'_, Buckets> {
        // Nothing panics while the lock is held; a poisoned map is still consistent.
        self.buckets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check(&self, gcra: &Gcra, key: &str, now: u64) -> Result<(), Duration> {
        let hash = self.seed.hash_one(key);
        let mut buckets = self.lock();
        if buckets.tat.len() >= buckets.sweep_at || now.saturating_sub(buckets.swept) >= gcra.window
        {
            buckets.sweep(now);
        }
        let known = buckets.tat.get(&hash).copied();
        if known.is_none() && buckets.tat.len() >= self.max_keys {
            let next = gcra.next(buckets.overflow, now)?;
            buckets.overflow = next;
            return Ok(());
        }
        let next = gcra.next(known.unwrap_or(0), now)?;
        buckets.tat.insert(hash, next);
        Ok(())
    }
}

impl Buckets {
    /// Drops the buckets that are as good as new, and the memory they held.
    fn sweep(&mut self, now: u64) {
        self.tat.retain(|_, tat| *tat > now);
        if self.tat.capacity() > 4 * self.tat.len() + SWEEP_FROM {
            self.tat.shrink_to_fit();
        }
        self.sweep_at = (2 * self.tat.len()).max(SWEEP_FROM);
        self.swept = now;
    }
}

/// A concurrency limit in memory: `max_active` calls run; up to `max_queued` wait, first come
/// first served; the rest are told the tool is busy. A waiter that is cancelled leaves the line.
struct Slots {
    semaphore: Arc<Semaphore>,
    limit: Concurrency,
    queued: AtomicUsize,
}

impl Slots {
    fn new(limit: Concurrency) -> Self {
        Slots {
            semaphore: Arc::new(Semaphore::new(limit.max_active)),
            limit,
            queued: AtomicUsize::new(0),
        }
    }

    fn busy(&self) -> Refusal {
        Refusal::Busy {
            limit: self.limit,
            retry_after: Duration::from_secs(1),
        }
    }
}

impl ConcurrencyLimiter for Slots {
    fn enter(&self, _deadline: Option<Duration>) -> BoxFuture<'_, Result<Slot, Refusal>> {
        // The uncontended path allocates nothing but the slot.
        if let Ok(permit) = Arc::clone(&self.semaphore).try_acquire_owned() {
            return Box::pin(std::future::ready(Ok(Slot::new(permit))));
        }
        Box::pin(async move {
            let waiting = self.queued.fetch_add(1, Ordering::AcqRel);
            let _in_line = InLine(&self.queued);
            if waiting >= self.limit.max_queued {
                return Err(self.busy());
            }
            // Tokio's semaphore hands permits out in the order they were asked for.
            match Arc::clone(&self.semaphore).acquire_owned().await {
                Ok(permit) => Ok(Slot::new(permit)),
                Err(_) => Err(self.busy()),
            }
        })
    }
}

/// A place in the waiting line, given back however the wait ends (permit, busy, cancelled).
struct InLine<'a>(&'a AtomicUsize);

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(max: u64, window: Duration, max_keys: usize) -> Rate {
        Rate::new(RateLimit { max, window }, max_keys)
    }

    fn call(user: Option<&str>) -> Option<&str> {
        user
    }

    #[test]
    fn the_default_key_cap_is_pinned() {
        assert_eq!(DEFAULT_MAX_KEYS, 100_000);
    }

    #[test]
    fn a_burst_of_max_then_the_exact_wait() {
        let rate = keyed(3, Duration::from_secs(60), 10);
        let gcra = &rate.gcra;
        let bucket = AtomicU64::new(0);
        for _ in 0..3 {
            assert!(gcra.check_shared(&bucket, 0).is_ok());
        }
        assert_eq!(gcra.check_shared(&bucket, 0), Err(Duration::from_secs(20)));
        // Five seconds later the wait is five seconds shorter; at twenty, one call goes.
        assert_eq!(
            gcra.check_shared(&bucket, 5_000_000_000),
            Err(Duration::from_secs(15))
        );
        assert!(gcra.check_shared(&bucket, 20_000_000_000).is_ok());
        assert!(gcra.check_shared(&bucket, 20_000_000_000).is_err());
    }

    #[test]
    fn callers_have_their_own_budgets_and_keyless_calls_share_one() {
        let rate = keyed(2, Duration::from_secs(3600), 10);
        for user in ["alice", "alice", "bob", "carol"] {
            assert!(rate.check(call(Some(user))).is_ok(), "{user}");
        }
        assert!(rate.check(call(Some("alice"))).is_err());
        assert!(rate.check(call(None)).is_ok());
        assert!(rate.check(call(None)).is_ok());
        assert!(rate.check(call(None)).is_err());
        assert_eq!(rate.keys(), 3);
    }

    #[test]
    fn past_the_cap_new_keys_share_one_bucket_and_known_keys_keep_theirs() {
        let rate = keyed(1, Duration::from_secs(3600), 2);
        assert!(rate.check(call(Some("alice"))).is_ok());
        assert!(rate.check(call(Some("bob"))).is_ok());
        // The overflow bucket: carol's call spends it, dave's finds it empty.
        assert!(rate.check(call(Some("carol"))).is_ok());
        assert!(rate.check(call(Some("dave"))).is_err());
        // Alice's own budget was not reset by the flood.
        assert!(rate.check(call(Some("alice"))).is_err());
        assert_eq!(rate.keys(), 2);
    }

    #[test]
    fn stale_keys_are_forgotten() {
        let rate = keyed(1_000, Duration::from_millis(10), 1_000_000);
        for i in 0..50_000 {
            assert!(rate.check(Some(&format!("user-{i}"))).is_ok());
        }
        // Every bucket is as good as new after the window: the next sweep drops them all.
        std::thread::sleep(Duration::from_millis(20));
        assert!(rate.check(call(Some("late"))).is_ok());
        assert_eq!(rate.keys(), 1);
    }

    #[test]
    fn a_refund_gives_back_exactly_one_call() {
        let rate = keyed(2, Duration::from_secs(3600), 10);
        for key in [None, Some("alice")] {
            assert!(rate.check(key).is_ok());
            assert!(rate.check(key).is_ok());
            assert!(rate.check(key).is_err());
            rate.give_back(key);
            assert!(rate.check(key).is_ok(), "{key:?}");
            assert!(rate.check(key).is_err(), "{key:?}");
        }
    }
}
