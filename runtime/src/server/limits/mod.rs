//! Where a server keeps the state of its limits: rate limits and concurrency limits, in this
//! process ([`MemoryStore`], the default) or shared by every replica of a fleet
//! (`RedisStore`, feature `redis`). A store is chosen with
//! [`ServerBuilder::limit_store`](crate::server::ServerBuilder::limit_store); the envelopes are the same whichever
//! holds the state (ERRORS.md §4).
//!
//! A store makes one limiter per limit when a tool is registered ([`LimitStore::rate_limit`],
//! [`LimitStore::concurrency`]); a tool's limiter is shared by its actions, an action's own is
//! its alone. The pipeline asks the tool's limiter first, then the action's.

mod memory;
#[cfg(feature = "redis")]
pub(super) mod redis;

use std::time::Duration;

use crate::tool::{BoxFuture, Concurrency, RateLimit};

pub(crate) use memory::DEFAULT_MAX_KEYS;
pub use memory::MemoryStore;
#[cfg(feature = "redis")]
pub use redis::{FailPolicy, RedisStore, RedisStoreBuilder};

/// Keeps the state of a server's limits. Implement it to hold limits in a store of your own;
/// [`MemoryStore`] and `RedisStore` (feature `redis`) are the two that ship.
///
/// A store that keeps one tool's limits apart and the rest in memory:
///
/// ```
/// use mcp_fusion::Server;
/// use mcp_fusion::server::limits::{
///     ConcurrencyLimiter, LimitStore, MemoryStore, RateLimiter, RateSpec, SlotSpec,
/// };
///
/// struct Logged(MemoryStore);
///
/// impl LimitStore for Logged {
///     fn rate_limit(&self, spec: RateSpec<'_>) -> Box<dyn RateLimiter> {
///         eprintln!("{}: {} calls per {:?}", spec.name, spec.limit.max, spec.limit.window);
///         self.0.rate_limit(spec)
///     }
///
///     fn concurrency(&self, spec: SlotSpec<'_>) -> Box<dyn ConcurrencyLimiter> {
///         eprintln!("{}: {} at once", spec.name, spec.limit.max_active);
///         self.0.concurrency(spec)
///     }
/// }
///
/// let server = Server::builder("billing-server", "1.0.0").limit_store(Logged(MemoryStore::new()));
/// # let _ = server;
/// ```
pub trait LimitStore: Send + Sync + 'static {
    /// The limiter of one rate limit, made once when its tool is registered.
    fn rate_limit(&self, spec: RateSpec<'_>) -> Box<dyn RateLimiter>;

    /// The limiter of one concurrency limit, made once when its tool is registered.
    fn concurrency(&self, spec: SlotSpec<'_>) -> Box<dyn ConcurrencyLimiter>;

    /// Why this store cannot keep rate limits per caller as it is set up (caller keys it would
    /// store readable), one sentence naming the fix; `None` when it can. Asked of a store that
    /// keeps rate limits when a server with a
    /// [`rate_limit_key`](crate::server::ServerBuilder::rate_limit_key) is built, which then
    /// fails with the reason, and when a server is served with OAuth (each verified caller
    /// spends a budget named by its subject), which is then refused.
    fn refuses_caller_keys(&self) -> Option<String> {
        None
    }

    /// A record of the round states (MCP 2026-07-28's `requestState`) used already, shared
    /// by every replica that uses this store, so that one state runs once in the fleet;
    /// `None` (the default) for a store of this process alone: the server then keeps the
    /// record itself, and a state runs once per replica.
    fn used_states(&self) -> Option<std::sync::Arc<dyn UsedStates>> {
        None
    }

    /// Why this store cannot keep a concurrency limit as `spec` asks (a lease too short to be
    /// renewed, say), one sentence naming the fix; `None` when it can. Asked when the tool is
    /// registered, which then fails with the reason.
    fn refuses(&self, spec: &SlotSpec<'_>) -> Option<String> {
        let _ = spec;
        None
    }
}

/// A record of used round states shared by replicas ([`LimitStore::used_states`]).
///
/// A record kept in a map of your own (one process; a shared store would use its own
/// atomic "set if absent, with expiry"):
///
/// ```
/// use std::collections::HashSet;
/// use std::sync::Mutex;
/// use std::time::Duration;
/// use mcp_fusion::server::limits::UsedStates;
/// use mcp_fusion::tools::BoxFuture;
///
/// #[derive(Default)]
/// struct Seen(Mutex<HashSet<[u8; 32]>>);
///
/// impl UsedStates for Seen {
///     fn spend(&self, id: [u8; 32], _ttl: Duration) -> BoxFuture<'_, Result<bool, String>> {
///         let first = self.0.lock().unwrap().insert(id);
///         Box::pin(async move { Ok(first) })
///     }
/// }
/// ```
pub trait UsedStates: Send + Sync + 'static {
    /// Records the state `id` (a digest: it names no caller) as used for `ttl`, in one atomic
    /// step: `Ok(true)` the first time, `Ok(false)` when it was recorded already. `Err` (why,
    /// for the log) when the record cannot be reached: the state is then refused, since it
    /// may have run already.
    fn spend(&self, id: [u8; 32], ttl: Duration) -> BoxFuture<'_, Result<bool, String>>;
}

/// What a store is told of a rate limit.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RateSpec<'a> {
    /// The tool's name for a tool's limit, the qualified action for an action's
    /// (`billing.create_invoice`): unique among the server's limits.
    pub name: &'a str,
    /// The limit.
    pub limit: RateLimit,
    /// How many distinct caller keys a store that holds them in process tracks at once, and
    /// a store shared by replicas lets each replica create per limit: past it, calls under a
    /// key not tracked share one overflow budget.
    pub max_keys: usize,
}

/// What a store is told of a concurrency limit.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SlotSpec<'a> {
    /// The tool's name for a tool's limit, the qualified action for an action's.
    pub name: &'a str,
    /// The limit.
    pub limit: Concurrency,
    /// The longest deadline of the calls it limits; `None` when one of them has none.
    pub deadline: Option<Duration>,
}

/// Spends calls of one rate limit.
pub trait RateLimiter: Send + Sync {
    /// Spends one call of the budget of `key` (the limit's shared budget for `None`), or tells
    /// why not.
    fn spend<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, Result<(), Refusal>>;

    /// Gives back the call just spent under `key`: the action's own limit refused the call the
    /// tool's limit had admitted, so the call did not happen.
    fn refund<'a>(&'a self, key: Option<&'a str>) -> BoxFuture<'a, ()>;
}

/// Hands out the running slots of one concurrency limit.
pub trait ConcurrencyLimiter: Send + Sync {
    /// A running slot, waiting in line for one if needed. `deadline` is the action's, if it
    /// has one: a store shared by several processes lets a slot outlive a process that died
    /// holding it by about that long. Dropping the future leaves the line.
    fn enter(&self, deadline: Option<Duration>) -> BoxFuture<'_, Result<Slot, Refusal>>;
}

/// A running slot, given back when dropped.
///
/// ```
/// use std::sync::Arc;
/// use mcp_fusion::server::limits::Slot;
///
/// let slots = Arc::new(tokio::sync::Semaphore::new(1));
/// let slot = Slot::new(Arc::clone(&slots).try_acquire_owned().unwrap());
/// assert_eq!(slots.available_permits(), 0);
/// drop(slot);
/// assert_eq!(slots.available_permits(), 1);
/// ```
#[must_use = "the slot is given back when dropped"]
pub struct Slot {
    _held: Option<Box<dyn Send + Sync>>,
}

impl Slot {
    /// A slot that holds `guard` (a permit, a lease) until it is dropped.
    pub fn new(guard: impl Send + Sync + 'static) -> Self {
        Slot {
            _held: Some(Box::new(guard)),
        }
    }

    /// A slot that holds nothing: a store that fails open admits the call without one.
    pub fn unlimited() -> Self {
        Slot { _held: None }
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").finish_non_exhaustive()
    }
}

/// Why a store refused a call; the pipeline answers it with the envelope of ERRORS.md §4.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::limits::Refusal;
///
/// let refused = Refusal::Unavailable { retry_after: Duration::from_secs(1) };
/// assert!(matches!(refused, Refusal::Unavailable { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The budget is spent: RATE_LIMITED, retry after `wait`.
    RateLimited {
        /// The limit that refused.
        limit: RateLimit,
        /// Until the next call is admitted.
        wait: Duration,
    },
    /// Every slot is taken and the line is full: SERVER_BUSY.
    Busy {
        /// The limit that refused (fleet-wide `max_active` for a shared store).
        limit: Concurrency,
        /// Until a slot is expected to free up (the envelope says at least 1 s).
        retry_after: Duration,
    },
    /// The store cannot answer and is set to fail closed: SERVER_BUSY.
    Unavailable {
        /// When to try again (the envelope says at least 1 s).
        retry_after: Duration,
    },
}

impl Refusal {
    /// The envelope of this refusal for a call of `tool`.
    pub(crate) fn into_error(self, tool: &str) -> crate::ToolError {
        let secs = |d: Duration| u32::try_from(crate::envelope::seconds_up(d)).unwrap_or(u32::MAX);
        match self {
            Refusal::RateLimited { limit, wait } => {
                crate::ToolError::rate_limited(limit.max, limit.window, wait)
            }
            Refusal::Busy { limit, retry_after } => crate::ToolError::server_busy(
                tool,
                limit.max_active,
                limit.max_queued,
                secs(retry_after),
            ),
            Refusal::Unavailable { retry_after } => {
                crate::ToolError::limits_unavailable(tool, secs(retry_after))
            }
        }
    }
}
