//! The caller keys one replica has put in Redis for one rate limit, capped as the memory store
//! caps its keys (`max_rate_limit_keys`): a key is counted from its first spend until its
//! bucket expires in Redis (at most a window after its last spend, when it is as good as new);
//! past the cap, calls under a key not counted share one overflow bucket. A flood of made-up
//! keys then costs Redis at most the cap per replica and limit, and cannot reset anyone's
//! budget. Keys are held as the first 128 bits of their keyed hash, never as sent.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// Below this many keys the map is not swept for size.
const SWEEP_FROM: usize = 1024;

/// The caller keys one replica has in Redis for one limit.
pub(super) struct Callers {
    max: usize,
    /// How long after its last spend a bucket may live in Redis: the limit's window, and a
    /// millisecond of rounding.
    lives: Duration,
    tracked: Mutex<Tracked>,
}

struct Tracked {
    /// When each key's bucket has expired at the latest, by keyed hash.
    until: HashMap<u128, Instant>,
    /// The size at which the map is next swept.
    sweep_at: usize,
    /// When it was last swept.
    swept: Instant,
}

impl Callers {
    /// At most `max` keys, each living `window` after its last spend.
    pub(super) fn new(max: usize, window: Duration) -> Self {
        Callers {
            max,
            lives: window + Duration::from_millis(1),
            tracked: Mutex::new(Tracked {
                until: HashMap::new(),
                sweep_at: SWEEP_FROM,
                swept: Instant::now(),
            }),
        }
    }

    /// Whether the key of keyed hash `hash` has a bucket of its own for a spend now (counted
    /// from now on), or spends the overflow bucket (the cap is reached).
    pub(super) fn spend(&self, hash: u128) -> bool {
        let now = Instant::now();
        let mut tracked = self.tracked.lock().unwrap_or_else(PoisonError::into_inner);
        if tracked.until.len() >= tracked.sweep_at || now >= tracked.swept + self.lives {
            tracked.sweep(now);
        }
        let known = tracked.until.get(&hash).is_some_and(|until| *until > now);
        if !known && tracked.until.len() >= self.max {
            return false;
        }
        tracked.until.insert(hash, now + self.lives);
        true
    }

    /// Whether the key of keyed hash `hash` has a bucket of its own (a refund goes there), or
    /// spent the overflow bucket.
    pub(super) fn has_own(&self, hash: u128) -> bool {
        let tracked = self.tracked.lock().unwrap_or_else(PoisonError::into_inner);
        tracked.until.contains_key(&hash)
    }
}

impl Tracked {
    /// Forgets the keys whose buckets have expired, and the memory they held.
    fn sweep(&mut self, now: Instant) {
        self.until.retain(|_, until| *until > now);
        if self.until.capacity() > 4 * self.until.len() + SWEEP_FROM {
            self.until.shrink_to_fit();
        }
        self.sweep_at = (2 * self.until.len()).max(SWEEP_FROM);
        self.swept = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn past_the_cap_new_keys_overflow_until_a_bucket_expires() {
        let window = Duration::from_secs(60);
        let callers = Callers::new(2, window);
        assert!(callers.spend(1) && callers.spend(2));
        assert!(!callers.spend(3), "the cap is reached");
        assert!(callers.has_own(2) && !callers.has_own(3));
        // Key 1 spends again half a window later: its bucket lives a window from then.
        tokio::time::advance(window / 2).await;
        assert!(callers.spend(1), "a counted key keeps its bucket");
        // Key 2's bucket has expired a window after its last spend; key 1's has not.
        tokio::time::advance(window / 2 + Duration::from_millis(2)).await;
        assert!(callers.spend(3), "key 2's place is free");
        assert!(!callers.spend(4), "keys 1 and 3 are counted");
    }
}
