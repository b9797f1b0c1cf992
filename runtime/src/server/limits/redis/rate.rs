//! One rate limit on Redis: GCRA, as in memory, one script call per spend. A caller's key
//! names its bucket only as a hash under the operator's secret, so whoever reads Redis cannot
//! test guesses of it; without a secret, it never reaches Redis. Past the caller keys a replica
//! may put in Redis for the limit (`callers.rs`), new ones share an overflow bucket.

use std::sync::Arc;
use std::time::Duration;

use sha2::Sha256;

use super::super::{LimitStore, RateLimiter, RateSpec, Refusal};
use super::callers::Callers;
use super::scripts::SCRIPTS;
use super::shared::{FailPolicy, Inner};
use crate::tool::{BoxFuture, RateLimit};

/// One rate limit on Redis.
pub(super) struct RedisRate {
    store: Arc<Inner>,
    key: String,
    /// This replica's own share of the limit, kept while Redis cannot answer (fail open).
    local: Box<dyn RateLimiter>,
    limit: RateLimit,
    interval: u64,
    tolerance: u64,
    /// The caller keys this replica has in Redis for the limit.
    callers: Callers,
}

impl RedisRate {
    /// The limiter of `spec` in `store`: its emission interval and burst tolerance in µs, and
    /// this replica's share of it for an outage.
    pub(super) fn new(store: &Arc<Inner>, spec: RateSpec<'_>) -> Self {
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let max = spec.limit.max.max(1);
        let interval = (micros(spec.limit.window) / max).max(1);
        let local = store.local.rate_limit(RateSpec {
            limit: RateLimit {
                max: (max / u64::from(store.replicas)).max(1),
                ..spec.limit
            },
            ..spec
        });
        let tolerance = interval.saturating_mul(max - 1);
        RedisRate {
            store: Arc::clone(store),
            key: format!("{}:rate:{}", store.prefix, spec.name),
            local,
            limit: spec.limit,
            interval,
            tolerance,
            callers: Callers::new(
                spec.max_keys,
                Duration::from_micros(tolerance.saturating_add(interval)),
            ),
        }
    }

    /// The bucket `key` spends (the limit's shared one for `None`; past the caller keys this
    /// replica may have in Redis, the overflow bucket), counting it when `spending`; `None` for
    /// a caller's key when the store has no secret to hash it under: a plain hash could be
    /// tested against guesses.
    fn bucket(&self, key: Option<&str>, spending: bool) -> Option<String> {
        let Some(key) = key else {
            return Some(self.key.clone());
        };
        use hmac::{KeyInit, Mac};
        let secret = self.store.key_secret.as_deref()?;
        let mut mac =
            hmac::Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
        mac.update(key.as_bytes());
        let hash: [u8; 32] = mac.finalize().into_bytes().into();
        let hash: [u8; 16] = hash[..16].try_into().expect("16 of 32 bytes");
        let hash = u128::from_be_bytes(hash);
        let own = match spending {
            true => self.callers.spend(hash),
            false => self.callers.has_own(hash),
        };
        Some(match own {
            true => format!("{}:{hash:032x}", self.key),
            false => format!("{}:overflow", self.key),
        })
    }
}

impl RateLimiter for RedisRate {
    fn spend<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let Some(bucket) = self.bucket(key, true) else {
                self.store.unkeyed()?;
                return self.local.spend(key).await;
            };
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
            let Some(bucket) = self.bucket(key, false) else {
                if self.store.policy == FailPolicy::Open {
                    self.local.refund(key).await;
                }
                return;
            };
            let args = self.interval;
            if let Err(failed) = self.store.run::<u64>(&SCRIPTS.refund, &bucket, &args).await
                && self.store.failed(&failed).is_ok()
            {
                self.local.refund(key).await;
            }
        })
    }
}
