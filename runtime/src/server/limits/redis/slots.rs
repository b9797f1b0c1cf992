//! One concurrency limit on Redis: a sorted set of leases scored by their expiry, taken by one
//! script call. A call that finds none free waits in this replica's line (`max_queued` is per
//! replica), whose head asks again when a lease is released anywhere and at least every 50 ms.
//!
//! A call that stops waiting for the script's reply (the store's timeout, or the call dropped)
//! may still get a lease: Redis runs the script when it can. Its reply is then awaited in the
//! background and a lease it took released at once, not left to expire.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use super::super::{ConcurrencyLimiter, LimitStore, Refusal, Slot, SlotSpec};
use super::scripts::SCRIPTS;
use super::shared::{Failed, Inner};
use crate::tool::{BoxFuture, Concurrency};

/// The longest a call at the head of the line waits before asking Redis again.
const POLL: Duration = Duration::from_millis(50);

/// One concurrency limit on Redis.
pub(super) struct RedisSlots {
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
    /// The limiter of `spec` in `store`, woken when the store hears a lease of its sorted set
    /// released, with this replica's share of it for an outage.
    pub(super) fn new(store: &Arc<Inner>, spec: SlotSpec<'_>) -> Self {
        let key = format!("{}:slots:{}", store.prefix, spec.name);
        let wake = Arc::clone(
            store
                .lock_wakers()
                .entry(key.clone())
                .or_insert_with(|| Arc::new(Notify::new())),
        );
        let replicas = usize::try_from(store.replicas).unwrap_or(usize::MAX);
        let local = store.local.concurrency(SlotSpec {
            limit: Concurrency {
                max_active: (spec.limit.max_active / replicas).max(1),
                ..spec.limit
            },
            ..spec
        });
        RedisSlots {
            store: Arc::clone(store),
            key,
            local,
            limit: spec.limit,
            queued: AtomicUsize::new(0),
            line: tokio::sync::Mutex::new(()),
            last_wait: AtomicU64::new(1_000),
            wake,
        }
    }

    async fn attempt(&self, ttl: Duration) -> Result<Attempt, Failed> {
        let n = self.store.leases.fetch_add(1, Ordering::Relaxed);
        let id = format!("{:016x}{n:x}", self.store.lease_seed);
        let mut taking = Taking::start(self, id.clone(), ttl);
        let reply = taking.reply.as_mut().expect("sent, not answered yet");
        let reply = self.store.within(reply).await;
        match &reply {
            // Still in flight: awaited in the background when `taking` is dropped.
            Err(Failed::TimedOut) => {}
            Ok(_) => taking.reply = None,
            Err(Failed::Redis(error)) => {
                taking.reply = None;
                taking.release = !error.is_connection_refusal();
            }
        }
        drop(taking);
        match reply? {
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

/// A lease being taken: the script's reply until it comes. Dropped before (the store's
/// timeout, or the call dropped while it waits), the reply is awaited in the background, at
/// most the lease's time to live, and a lease it may have taken is released; dropped after an
/// error that leaves it unknown whether the script ran, the lease is released too.
struct Taking {
    store: Arc<Inner>,
    key: String,
    id: String,
    ttl: Duration,
    reply: Option<BoxFuture<'static, redis::RedisResult<i64>>>,
    /// Whether to release the lease once dropped, its reply come.
    release: bool,
    wake: Arc<Notify>,
}

impl Taking {
    /// Sends the script that takes lease `id` of `slots` for `ttl`.
    fn start(slots: &RedisSlots, id: String, ttl: Duration) -> Self {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let args = (id.clone(), ttl_ms, slots.limit.max_active as u64);
        let (store, key) = (Arc::clone(&slots.store), slots.key.clone());
        let reply = Box::pin(async move {
            let mut invocation = SCRIPTS.acquire.key(&key);
            invocation.arg(&args);
            store.connection.invoke::<i64>(&invocation).await
        });
        Taking {
            store: Arc::clone(&slots.store),
            key: slots.key.clone(),
            id,
            ttl,
            reply: Some(reply),
            release: false,
            wake: Arc::clone(&slots.wake),
        }
    }
}

impl Drop for Taking {
    fn drop(&mut self) {
        let (reply, release) = (self.reply.take(), self.release);
        if reply.is_none() && !release {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, key, id) = (
            Arc::clone(&self.store),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.id),
        );
        let (ttl, wake) = (self.ttl, Arc::clone(&self.wake));
        runtime.spawn(async move {
            if let Some(reply) = reply {
                // No lease was taken when every one was (a wait), nor when the script never
                // reached Redis; otherwise one was, or may have been (no reply at all).
                match tokio::time::timeout(ttl, reply).await {
                    Ok(Ok(wait)) if wait >= 0 => return,
                    Ok(Err(error)) if error.is_connection_refusal() => return,
                    _ => {}
                }
            }
            if store.release(&key, &id).await {
                wake.notify_waiters();
            }
        });
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
            // Not released (Redis unreachable): the lease expires on its own.
            if store.release(&key, &id).await {
                wake.notify_waiters();
            }
        });
    }
}
