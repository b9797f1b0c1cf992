//! Keeps the leases of running calls alive: one task per replica renews every lease it holds
//! every third of the lease's time to live, those of one sorted set in one script call, so a
//! replica that dies holding a lease frees it within that time. A renewal that finds a lease
//! gone (expired during an outage, lost in a failover) takes it again.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::scripts::SCRIPTS;
use super::shared::{HeldLease, Inner};

impl Inner {
    /// Counts a lease among those the replica renews, starting the renewer with the first;
    /// its number.
    pub(super) fn hold(self: &Arc<Self>, key: String, id: String, ttl: Duration) -> u64 {
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
