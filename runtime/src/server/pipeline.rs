//! What a server puts around each call of a tool, after routing, validation and the
//! deprecation warning (ERRORS.md §4): rate limit → concurrency → middleware → the action under
//! its deadline, its panic caught, every failure as its envelope. One `Pipeline` per registered
//! tool, the same for every tool, generated or written by hand: the tool only runs actions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Semaphore, SemaphorePermit};

use rmcp::model::{CallToolResult, Extensions};
use serde_json::{Map, Value};

use crate::call_result::envelope;
use crate::envelope::inject_removed_action;
use crate::middleware::{CallInfo, Middleware, Next};
use crate::tool::{Context, Prepared, RateLimit, Rejection, Tool, ToolDef, catching, finish};

use super::rate::Rate;
use crate::validate::ValidationError;
use crate::{ContractChange, ToolError, inject_contract_awareness};

/// Chooses the rate-limit key of a call (a user, a session); `None` shares the tool's limit.
pub type RateLimitKey = Arc<dyn Fn(&CallInfo) -> Option<String> + Send + Sync>;

/// The server's rate-limit settings for the tools registered after them.
#[derive(Clone)]
pub(crate) struct RateConfig {
    pub(crate) key: Option<RateLimitKey>,
    /// The limit of tools that declare none.
    pub(crate) default: Option<RateLimit>,
    pub(crate) max_keys: usize,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            key: None,
            default: None,
            max_keys: super::rate::DEFAULT_MAX_KEYS,
        }
    }
}

/// Limits and middleware of one tool on one server.
pub struct Pipeline {
    pub(crate) rate: Option<Rate>,
    /// Each action's own rate limit, by index.
    pub(crate) action_rates: Vec<Option<Rate>>,
    pub(crate) slots: Option<Slots>,
    /// Each action's own concurrency limit, by index.
    pub(crate) action_slots: Vec<Option<Slots>>,
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
    pub(crate) expose_causes: bool,
    /// What changed since the lockfile, for this tool's validation errors.
    pub(crate) contract: Option<ContractNotes>,
}

/// A tool's BREAKING and RISKY changes since the lockfile, and how many a block shows.
#[derive(Debug)]
pub(crate) struct ContractNotes {
    pub(crate) changes: Vec<ContractChange>,
    pub(crate) max: usize,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("rate_limited", &self.rate.is_some())
            .field(
                "concurrency",
                &self.slots.as_ref().map(|s| (s.max_active, s.max_queued)),
            )
            .field("middleware", &self.middleware.len())
            .field("expose_causes", &self.expose_causes)
            .finish()
    }
}

impl Pipeline {
    pub(crate) fn new(
        def: &ToolDef,
        middleware: Vec<Arc<dyn Middleware>>,
        rates: &RateConfig,
        expose_causes: bool,
    ) -> Self {
        Pipeline {
            rate: def
                .rate_limit()
                .or(rates.default)
                .and_then(|limit| Rate::new(limit, rates.key.clone(), rates.max_keys)),
            action_rates: def
                .actions()
                .iter()
                .map(|a| {
                    let limit = a.action_rate_limit()?;
                    Rate::new(limit, rates.key.clone(), rates.max_keys)
                })
                .collect(),
            slots: def
                .concurrency()
                .map(|c| Slots::new(c.max_active, c.max_queued)),
            action_slots: def
                .actions()
                .iter()
                .map(|a| {
                    a.concurrency_limit()
                        .map(|c| Slots::new(c.max_active, c.max_queued))
                })
                .collect(),
            middleware,
            expose_causes,
            contract: None,
        }
    }
}

impl Pipeline {
    /// Runs a prepared call of `tool` through the server's pipeline.
    pub(crate) async fn run(
        &self,
        tool: &dyn Tool,
        prepared: Prepared<'_>,
        extensions: Extensions,
    ) -> CallToolResult {
        let def = tool.definition();
        let Prepared {
            index,
            action,
            args,
            deprecation,
        } = prepared;
        let context = Context::new(action.qualified_shared());
        let mut info = CallInfo {
            tool: def.name().to_owned(),
            action: action.qualified().to_owned(),
            arguments: args,
            extensions,
        };
        // The rate limit's key and the middleware see the arguments; the handler takes them
        // back without a copy when there is no middleware to keep them for.
        // The tool's budget first, then the action's own.
        let rates = [
            self.rate.as_ref(),
            self.action_rates.get(index).and_then(Option::as_ref),
        ];
        for rate in rates.into_iter().flatten() {
            if let Err(limited) = rate.check(&info) {
                return limited.into();
            }
        }
        let args = if self.middleware.is_empty() {
            std::mem::take(&mut info.arguments)
        } else {
            info.arguments.clone()
        };
        // The tool's slot first, then the action's own; held until the action is done.
        let limits = [
            self.slots.as_ref(),
            self.action_slots.get(index).and_then(Option::as_ref),
        ];
        let mut _permits = [None, None];
        for (limit, permit) in limits.into_iter().zip(&mut _permits) {
            if let Some(limit) = limit {
                match limit.enter(def.name()).await {
                    Ok(entered) => *permit = Some(entered),
                    Err(busy) => return busy.into(),
                }
            }
        }
        let handler_context = context.clone();
        let next = Next::new(
            &self.middleware,
            &info,
            Box::new(move || tool.invoke(index, args, handler_context)),
        );
        let outcome = match action.timeout_duration() {
            None => catching(|| next.run()).await,
            Some(deadline) => match tokio::time::timeout(deadline, catching(|| next.run())).await {
                Ok(outcome) => outcome,
                // The action's future is dropped here, cancelling it.
                Err(_) => return ToolError::timeout(action.qualified(), deadline).into(),
            },
        };
        finish(
            def,
            action,
            outcome,
            deprecation,
            &context,
            self.expose_causes,
            |invalid| self.refused(invalid),
        )
    }

    /// A call rejected before its action: with what changed since the lockfile, when the
    /// server runs with one (ERRORS.md §4 and §7).
    pub(crate) fn reject(&self, def: &ToolDef, rejection: Rejection) -> CallToolResult {
        match rejection {
            Rejection::Route { text, arguments } => {
                envelope(self.removed_action(def, &arguments, text), true)
            }
            Rejection::Invalid(invalid) => self.refused(invalid),
            Rejection::Broken(result) => *result,
        }
    }

    /// A validation error, with what changed in the action's contract since the lockfile.
    fn refused(&self, invalid: ValidationError) -> CallToolResult {
        match &self.contract {
            None => (&invalid).into(),
            Some(notes) => envelope(
                inject_contract_awareness(
                    &invalid.render(),
                    invalid.action(),
                    &notes.changes,
                    notes.max,
                ),
                true,
            ),
        }
    }

    /// UNKNOWN_ACTION for an action the lockfile has and the running contract removed carries
    /// that action's changes (ERRORS.md §4); every other routing failure stays as it is.
    fn removed_action(&self, def: &ToolDef, args: &Map<String, Value>, text: String) -> String {
        let sent = def
            .discriminator()
            .and_then(|field| args.get(field))
            .and_then(Value::as_str);
        let (Some(notes), Some(sent)) = (&self.contract, sent) else {
            return text;
        };
        let qualified = match sent
            .strip_prefix(def.name())
            .and_then(|r| r.strip_prefix('.'))
        {
            Some(_) => sent.to_owned(),
            None => format!("{}.{sent}", def.name()),
        };
        inject_removed_action(&text, &qualified, &notes.changes, notes.max)
    }
}

/// A concurrency limit: `max_active` calls run; up to `max_queued` wait, first come first
/// served; the rest are told the tool is busy. A waiter that is cancelled leaves the queue.
pub(crate) struct Slots {
    semaphore: Semaphore,
    max_active: usize,
    max_queued: usize,
    queued: AtomicUsize,
}

impl Slots {
    fn new(max_active: usize, max_queued: usize) -> Self {
        Slots {
            semaphore: Semaphore::new(max_active),
            max_active,
            max_queued,
            queued: AtomicUsize::new(0),
        }
    }

    /// A running slot, waiting in line for one if needed; SERVER_BUSY when the line is full.
    pub(crate) async fn enter(&self, tool: &str) -> Result<SemaphorePermit<'_>, ToolError> {
        if let Ok(permit) = self.semaphore.try_acquire() {
            return Ok(permit);
        }
        let waiting = self.queued.fetch_add(1, Ordering::AcqRel);
        let _in_line = InLine(&self.queued);
        if waiting >= self.max_queued {
            return Err(ToolError::server_busy(
                tool,
                self.max_active,
                self.max_queued,
                1,
            ));
        }
        // Tokio's semaphore hands permits out in the order they were asked for.
        self.semaphore
            .acquire()
            .await
            .map_err(|_| ToolError::server_busy(tool, self.max_active, self.max_queued, 1))
    }
}

/// A place in the waiting line, given back however the wait ends (permit, busy, cancelled).
struct InLine<'a>(&'a AtomicUsize);

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
