//! Admission: the limits a call passes before anything runs (ERRORS.md §4: the rate limit,
//! then the concurrency limit), with one rule for every call, of a tool of the server's own or
//! of an upstream a gateway mounts: the rate limits are spent in order (the tool's, then the
//! action's own), the running slots taken in order, and **a call refused at any step spends
//! nothing**: the budget earlier limits took is given back, the slots it took are released.
//!
//! On a store shared by replicas, spending and taking slots go out together (one round trip,
//! not two); the outcome is the same as if they were checked in turn.

use std::sync::Arc;
use std::time::Duration;

use crate::ToolError;
use crate::middleware::CallInfo;
use crate::tool::{ActionDef, RateLimit, ToolDef};

use super::limits::{
    ConcurrencyLimiter, LimitStore, MemoryStore, RateLimiter, RateSpec, Refusal, Slot, SlotSpec,
};

/// Chooses the rate-limit key of a call (a user, a session); `None` shares the tool's limit.
pub type RateLimitKey = Arc<dyn Fn(&CallInfo) -> Option<String> + Send + Sync>;

/// Whose budget a call spends: a verified caller's own (its subject, subdivided by the
/// server's key when it has one, so no argument can reach another subject's budget), else the
/// server's key, else the limit's shared budget.
///
/// The key is unambiguous whatever the subject and the chosen key hold: the subject is
/// length-prefixed (`sub:{bytes}:{subject}`, then `:{chosen}`), and a key chosen for a caller
/// nobody verified is apart (`key:{chosen}`), so subject `a/b` is not subject `a` keyed `b`, nor
/// is a chosen `sub:…` a subject's budget.
pub(crate) fn rate_key(key: Option<&RateLimitKey>, info: &CallInfo) -> Option<String> {
    let chosen = key.and_then(|key| key(info));
    match (info.caller(), chosen) {
        (Some(caller), chosen) => {
            let subject = caller.subject();
            let mut key = format!("sub:{}:{subject}", subject.len());
            if let Some(chosen) = chosen {
                key.push(':');
                key.push_str(&chosen);
            }
            Some(key)
        }
        (None, chosen) => Some(format!("key:{}", chosen?)),
    }
}

/// The server's limit settings, from which each tool's limiters are made.
#[derive(Clone)]
pub(crate) struct RateConfig {
    pub(crate) key: Option<RateLimitKey>,
    /// The limit of tools that declare none.
    pub(crate) default: Option<RateLimit>,
    pub(crate) max_keys: usize,
    pub(crate) store: Arc<dyn LimitStore>,
    /// The least time between two progress notifications of a call.
    pub(crate) progress_interval: Duration,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            key: None,
            default: None,
            max_keys: super::limits::DEFAULT_MAX_KEYS,
            store: Arc::new(MemoryStore::new()),
            progress_interval: Duration::from_millis(100),
        }
    }
}

/// The limiters of one tool on one server: the tool's own, shared by its actions, and each
/// action's.
pub(crate) struct ToolLimits {
    rate: Option<Box<dyn RateLimiter>>,
    action_rates: Vec<Option<Box<dyn RateLimiter>>>,
    slots: Option<Box<dyn ConcurrencyLimiter>>,
    action_slots: Vec<Option<Box<dyn ConcurrencyLimiter>>>,
}

impl ToolLimits {
    pub(crate) fn new(def: &ToolDef, rates: &RateConfig) -> Self {
        let store = &*rates.store;
        // A limit of zero calls is refused by the macros; by hand it means none.
        let rate = |name: &str, limit: Option<RateLimit>| {
            let limit = limit.filter(|l| l.max > 0)?;
            Some(store.rate_limit(RateSpec {
                name,
                limit,
                max_keys: rates.max_keys,
            }))
        };
        let slots = |spec: Option<SlotSpec<'_>>| Some(store.concurrency(spec?));
        let actions = def.actions();
        ToolLimits {
            rate: rate(def.name(), def.rate_limit().or(rates.default)),
            action_rates: actions
                .iter()
                .map(|a| rate(a.qualified(), a.rate_limit()))
                .collect(),
            slots: slots(tool_slots(def)),
            action_slots: actions.iter().map(|a| slots(action_slots(a))).collect(),
        }
    }

    /// What admits a call of the action at `index`.
    pub(crate) fn of_action<'a>(&'a self, index: usize, name: &'a str) -> Admission<'a> {
        Admission {
            name,
            rates: [
                self.rate.as_deref(),
                self.action_rates.get(index).and_then(Option::as_deref),
            ],
            slots: [
                self.slots.as_deref(),
                self.action_slots.get(index).and_then(Option::as_deref),
            ],
        }
    }
}

impl std::fmt::Debug for ToolLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolLimits")
            .field("rate_limited", &self.rate.is_some())
            .field("concurrency", &self.slots.is_some())
            .finish_non_exhaustive()
    }
}

/// The limits one call passes, outermost first, and the name its refusals carry.
#[derive(Clone, Copy)]
pub(crate) struct Admission<'a> {
    /// The tool (or upstream) whose refusals these are.
    pub(crate) name: &'a str,
    pub(crate) rates: [Option<&'a dyn RateLimiter>; 2],
    pub(crate) slots: [Option<&'a dyn ConcurrencyLimiter>; 2],
}

impl Admission<'_> {
    /// Whether no limit applies: every call is admitted, nothing spent or held.
    pub(crate) fn is_free(&self) -> bool {
        self.rates.iter().all(Option::is_none) && self.slots.iter().all(Option::is_none)
    }

    /// Spends the budget of `key` and takes the running slots (held until the admission is
    /// dropped), or refuses with the envelope of ERRORS.md §4, having spent nothing. `deadline`
    /// is the call's: a shared store lets a slot outlive a process that died holding it by about
    /// that long.
    pub(crate) async fn admit(
        &self,
        key: Option<&str>,
        deadline: Option<Duration>,
    ) -> Result<Admitted, ToolError> {
        let refused = |refusal: Refusal| refusal.into_error(self.name);
        if self.slots.iter().all(Option::is_none) {
            self.spend(key).await.map_err(refused)?;
            return Ok(Admitted([None, None]));
        }
        let slots = self.slots;
        let mut spend = std::pin::pin!(self.spend(key));
        let mut enter = std::pin::pin!(async move {
            // The outer slot first, then the inner; held until the call is done.
            let mut held = [None, None];
            for (limit, slot) in slots.into_iter().zip(&mut held) {
                if let Some(limit) = limit {
                    *slot = Some(limit.enter(deadline).await?);
                }
            }
            Ok(held)
        });
        let mut entered = None;
        let spent = loop {
            tokio::select! {
                biased;
                spent = &mut spend => break spent,
                slots = &mut enter, if entered.is_none() => entered = Some(slots),
            }
        };
        // Refused by a rate limit: the slots taken so far go back as `enter` is dropped.
        spent.map_err(refused)?;
        let entered = match entered {
            Some(entered) => entered,
            None => enter.await,
        };
        match entered {
            Ok(held) => Ok(Admitted(held)),
            Err(refusal) => {
                // No slot: the call does not run, so it spends nothing.
                self.refund(key, 2).await;
                Err(refused(refusal))
            }
        }
    }

    /// Spends one call of each rate limit in order; one that refuses gives back what the
    /// limits before it took.
    pub(crate) async fn spend(&self, key: Option<&str>) -> Result<(), Refusal> {
        for (i, rate) in self.rates.iter().enumerate() {
            let Some(rate) = rate else { continue };
            if let Err(refusal) = rate.spend(key).await {
                self.refund(key, i).await;
                return Err(refusal);
            }
        }
        Ok(())
    }

    /// Gives back the call spent under `key` by the first `spent` rate limits.
    pub(crate) async fn refund(&self, key: Option<&str>, spent: usize) {
        for rate in self.rates.iter().take(spent).flatten() {
            rate.refund(key).await;
        }
    }
}

/// A call admitted: its running slots, given back when dropped.
#[must_use = "the slots are given back when dropped"]
pub(crate) struct Admitted(#[allow(dead_code)] [Option<Slot>; 2]);

/// The tool's own concurrency limit, if it has one: its calls' longest deadline is the longest
/// of its actions', none when an action has none.
fn tool_slots(def: &ToolDef) -> Option<SlotSpec<'_>> {
    let deadline = def
        .actions()
        .iter()
        .map(ActionDef::timeout)
        .try_fold(Duration::ZERO, |longest, d| Some(longest.max(d?)));
    Some(SlotSpec {
        name: def.name(),
        limit: def.concurrency()?,
        deadline,
    })
}

/// An action's own concurrency limit, if it has one.
fn action_slots(action: &ActionDef) -> Option<SlotSpec<'_>> {
    Some(SlotSpec {
        name: action.qualified(),
        limit: action.concurrency()?,
        deadline: action.timeout(),
    })
}

/// Why the limits of `def` cannot be kept as declared, with the store that keeps them: a
/// concurrency limit that lets no call run, or one the store refuses.
pub(crate) fn limit_problems(def: &ToolDef, store: &dyn LimitStore) -> Vec<String> {
    let specs = std::iter::once(tool_slots(def))
        .chain(def.actions().iter().map(action_slots))
        .flatten();
    let declared = "#[action(concurrency(max = ..))], ActionDef::concurrency";
    specs
        .filter_map(|spec| {
            let problem = slot_problem(&spec, store, declared)?;
            Some(format!("\"{}\": {problem}", spec.name))
        })
        .collect()
}

/// Why the concurrency limit `spec` cannot be kept by `store`, one sentence naming the fix
/// (`declared`: where the limit is set): a limit of 0 calls at once, or one the store
/// refuses (a Redis lease too short to be renewed).
pub(crate) fn slot_problem(
    spec: &SlotSpec<'_>,
    store: &dyn LimitStore,
    declared: &str,
) -> Option<String> {
    if spec.limit.max_active == 0 {
        return Some(format!(
            "a concurrency limit of 0 calls at once lets no call run; allow at least 1 ({declared}) or remove the limit"
        ));
    }
    store.refuses(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::limits::MemoryStore;
    use crate::tool::Concurrency;

    fn store() -> MemoryStore {
        MemoryStore::new()
    }

    /// Whose budget a call spends is told apart however subjects and chosen keys are spelt:
    /// subject `a/b` is not subject `a` keyed `b`, nor a caller nobody verified whose chosen
    /// key looks like a subject's.
    #[test]
    fn budget_keys_never_collide() {
        use crate::middleware::CallInfo;
        use crate::tool::Caller;
        let chosen =
            |key: &'static str| -> RateLimitKey { Arc::new(move |_| Some(key.to_owned())) };
        let key = |subject: Option<&str>, chosen: Option<&RateLimitKey>| {
            let mut info = CallInfo::new("t", "t.a", serde_json::json!({}));
            if let Some(subject) = subject {
                info = info.with_extension(Caller::new(subject, Vec::<String>::new()));
            }
            rate_key(chosen, &info)
        };
        let (b, sub_a) = (chosen("b"), chosen("sub:a"));
        let (empty, slash_b) = (chosen(""), chosen("/b"));
        let keys = [
            key(Some("a/b"), None),
            key(Some("a"), Some(&b)),
            key(Some("a"), None),
            key(None, Some(&sub_a)),
            key(Some("a"), Some(&empty)),
            key(Some("a/"), Some(&b)),
            key(Some("a"), Some(&slash_b)),
            key(None, None),
        ];
        for (i, one) in keys.iter().enumerate() {
            for other in &keys[i + 1..] {
                assert_ne!(one, other, "two budgets share a key: {keys:?}");
            }
        }
    }

    /// A call refused at any step spends nothing: a full line gives back the budget the rate
    /// limits took, and the action's rate limit gives back the tool's.
    #[tokio::test]
    async fn a_refused_call_spends_nothing() {
        let store = store();
        let limit = RateLimit {
            max: 2,
            window: Duration::from_secs(60),
        };
        let spec = |name| RateSpec {
            name,
            limit,
            max_keys: 10,
        };
        let tool_rate = store.rate_limit(spec("t"));
        let action_rate = store.rate_limit(RateSpec {
            limit: RateLimit { max: 1, ..limit },
            ..spec("t.a")
        });
        let slots = store.concurrency(SlotSpec {
            name: "t",
            limit: Concurrency {
                max_active: 1,
                max_queued: 0,
            },
            deadline: None,
        });
        let admission = Admission {
            name: "t",
            rates: [Some(&*tool_rate), Some(&*action_rate)],
            slots: [Some(&*slots), None],
        };
        let running = admission.admit(None, None).await.expect("admitted");
        // The slot is taken: refused busy, and the budgets it spent come back.
        let busy = admission.admit(Some("k"), None).await.err().expect("busy");
        assert_eq!(busy.code().as_str(), "SERVER_BUSY");
        drop(running);
        // The action's budget (1) was spent once by the first call: refused, and the tool's
        // budget spent for it is given back.
        let limited = admission.admit(None, None).await.err().expect("limited");
        assert_eq!(limited.code().as_str(), "RATE_LIMITED");
        // Key "k": nothing was spent by its refusal, so its whole budget is there.
        let only_tool = Admission {
            rates: [Some(&*tool_rate), None],
            slots: [None, None],
            ..admission
        };
        for _ in 0..2 {
            let admitted = only_tool.admit(Some("k"), None).await;
            assert!(admitted.is_ok(), "two calls of its budget");
        }
        assert!(only_tool.admit(Some("k"), None).await.is_err());
        // The unkeyed budget: one spent by the first call, one left.
        assert!(only_tool.admit(None, None).await.is_ok(), "one left");
        assert!(only_tool.admit(None, None).await.is_err());
    }
}
