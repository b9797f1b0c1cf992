//! What a server puts around each call of a tool, after routing, validation and the
//! deprecation warning (ERRORS.md §4): rate limit → concurrency → middleware → the action under
//! its deadline, its panic caught, every failure as its envelope. One `Pipeline` per registered
//! tool, the same for every tool, generated or written by hand: the tool only runs actions.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Extensions, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};

use crate::envelope::{Envelope, awareness_of_invalid, inject_removed_action};
use crate::middleware::{CallInfo, Middleware, Next};
use crate::tool::{
    ActionDef, Answer, Callable, Context, Prepared, Progress, RateLimit, Rejection, Reporter, Tool,
    ToolDef, TraceContext, catching, finish,
};

use super::limits::{
    ConcurrencyLimiter, LimitStore, MemoryStore, RateLimiter, RateSpec, Slot, SlotSpec,
};
use crate::ToolError;
use crate::contract::ContractChange;
use crate::validate::ValidationError;

/// What a `tools/call` request carried besides its arguments.
#[derive(Default)]
pub(crate) struct Request {
    /// The client's `progressToken`, and where its notifications go.
    pub(crate) progress: Option<(ProgressToken, Notifier)>,
    /// The client's trace context, and the server's span id for the call.
    pub(crate) trace: Option<(TraceContext, String)>,
}

/// Where a call's progress notifications go.
pub(crate) enum Notifier {
    /// Through rmcp's service, which read the call.
    Peer(Peer<RoleServer>),
    /// Straight to the lines the stdio transport writes (a call it read itself), each before
    /// the call's answer.
    #[cfg(feature = "stdio")]
    Lines(tokio::sync::mpsc::Sender<super::fast::Framed>),
}

/// Sends a call's progress notifications in order, until the call closes its progress.
pub(crate) async fn forward_progress(
    notifier: Notifier,
    mut notes: tokio::sync::mpsc::UnboundedReceiver<rmcp::model::ProgressNotificationParam>,
) {
    while let Some(note) = notes.recv().await {
        let sent = match &notifier {
            Notifier::Peer(peer) => peer.notify_progress(note).await.is_ok(),
            #[cfg(feature = "stdio")]
            Notifier::Lines(lines) => {
                let line = super::fast::progress_line(note);
                lines.send((line, None)).await.is_ok()
            }
        };
        if !sent {
            return;
        }
    }
}

/// Progress every `every` while the handler has reported none: the seconds elapsed (to the
/// millisecond), no total.
async fn heartbeat(progress: &Progress, every: std::time::Duration) -> std::convert::Infallible {
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + every, every);
    loop {
        ticks.tick().await;
        if progress.reported_by_handler() {
            return std::future::pending().await;
        }
        let seconds = started.elapsed().as_millis() as f64 / 1000.0;
        progress.report(seconds, None, None, Reporter::Heartbeat);
    }
}

/// Chooses the rate-limit key of a call (a user, a session); `None` shares the tool's limit.
pub type RateLimitKey = Arc<dyn Fn(&CallInfo) -> Option<String> + Send + Sync>;

/// Whose budget a call spends: a verified caller's own (its subject, subdivided by the
/// server's key when it has one, so no argument can reach another subject's budget), else the
/// server's key, else the limit's shared budget.
pub(crate) fn rate_key(key: Option<&RateLimitKey>, info: &CallInfo) -> Option<String> {
    let chosen = key.and_then(|key| key(info));
    match (info.caller(), chosen) {
        (Some(caller), None) => Some(format!("sub:{}", caller.subject())),
        (Some(caller), Some(chosen)) => Some(format!("sub:{}/{chosen}", caller.subject())),
        (None, chosen) => chosen,
    }
}

/// The server's limit settings for the tools registered after them.
#[derive(Clone)]
pub(crate) struct RateConfig {
    pub(crate) key: Option<RateLimitKey>,
    /// The limit of tools that declare none.
    pub(crate) default: Option<RateLimit>,
    pub(crate) max_keys: usize,
    pub(crate) store: Arc<dyn LimitStore>,
    /// The least time between two progress notifications of a call.
    pub(crate) progress_interval: std::time::Duration,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            key: None,
            default: None,
            max_keys: super::limits::DEFAULT_MAX_KEYS,
            store: Arc::new(MemoryStore::new()),
            progress_interval: std::time::Duration::from_millis(100),
        }
    }
}

/// Limits and middleware of one tool on one server.
pub struct Pipeline {
    /// The tool's rate limit, shared by its actions.
    pub(crate) rate: Option<Box<dyn RateLimiter>>,
    /// Each action's own rate limit, by index.
    pub(crate) action_rates: Vec<Option<Box<dyn RateLimiter>>>,
    /// Whose budget a call spends (with the verified caller's subject, when there is one).
    pub(crate) key: Option<RateLimitKey>,
    /// The tool's concurrency limit, shared by its actions.
    pub(crate) slots: Option<Box<dyn ConcurrencyLimiter>>,
    /// Each action's own concurrency limit, by index.
    pub(crate) action_slots: Vec<Option<Box<dyn ConcurrencyLimiter>>>,
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
    pub(crate) expose_causes: bool,
    /// What changed since the lockfile, for this tool's validation errors.
    pub(crate) contract: Option<ContractNotes>,
    /// Served flat: envelopes name its actions by their MCP tool names.
    pub(crate) flat: bool,
    /// The least time between two progress notifications of a call.
    pub(crate) progress_interval: std::time::Duration,
    /// The server's mounted upstreams, for handoffs.
    #[cfg(feature = "gateway")]
    pub(crate) mounts: Option<Arc<dyn crate::tool::Handoffs>>,
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
            .field("concurrency", &self.slots.is_some())
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
        Pipeline {
            rate: rate(def.name(), def.rate_limit().or(rates.default)),
            action_rates: actions
                .iter()
                .map(|a| rate(a.qualified(), a.rate_limit()))
                .collect(),
            key: rates.key.clone(),
            slots: slots(tool_slots(def)),
            action_slots: actions.iter().map(|a| slots(action_slots(a))).collect(),
            middleware,
            expose_causes,
            contract: None,
            flat: false,
            progress_interval: rates.progress_interval,
            #[cfg(feature = "gateway")]
            mounts: None,
        }
    }
}

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
    let mut problems = Vec::new();
    for spec in specs {
        if spec.limit.max_active == 0 {
            problems.push(format!(
                "\"{}\": a concurrency limit of 0 calls at once lets no call run; allow at least 1 (#[action(concurrency(max = ..))], ActionDef::concurrency) or remove the limit",
                spec.name
            ));
        } else if let Some(refused) = store.refuses(&spec) {
            problems.push(format!("\"{}\": {refused}", spec.name));
        }
    }
    problems
}

impl Pipeline {
    /// Runs a prepared call of `tool` through the server's pipeline.
    pub(crate) async fn run(
        &self,
        tool: &dyn Tool,
        prepared: Prepared<'_>,
        extensions: Extensions,
        request: Request,
    ) -> Answer {
        let def = tool.definition();
        let Prepared {
            index,
            action,
            args,
            deprecation,
        } = prepared;
        let mut info = CallInfo {
            tool: def.name().to_owned(),
            action: action.qualified().to_owned(),
            arguments: args,
            extensions,
        };
        // The rate limit's key and the middleware see the arguments; the handler takes them
        // back without a copy when there is no middleware to keep them for.
        let _slots = match self.admit(index, &info, action.timeout()).await {
            Ok(slots) => slots,
            Err(refused) => return refused.into_error(def.name()).into(),
        };
        let args = if self.middleware.is_empty() {
            std::mem::take(&mut info.arguments)
        } else {
            info.arguments.clone()
        };
        let (progress, forwarder) = match request.progress {
            Some((token, notifier)) => {
                let (sink, notes) = tokio::sync::mpsc::unbounded_channel();
                let progress = Arc::new(Progress::new(token, self.progress_interval, sink));
                (
                    Some(progress),
                    Some(tokio::spawn(forward_progress(notifier, notes))),
                )
            }
            None => (None, None),
        };
        let caller = info.caller().cloned();
        let context = Context::of_call(
            action.qualified_shared(),
            progress.clone(),
            request.trace,
            caller,
        );
        #[cfg(feature = "gateway")]
        let context = match &self.mounts {
            Some(mounts) => context.with_mounts(Arc::clone(mounts)),
            None => context,
        };
        let handler_context = context.clone();
        let next = Next::new(
            &self.middleware,
            &info,
            Box::new(move || tool.invoke(index, args, handler_context)),
        );
        let handled = async {
            match action.timeout() {
                None => Ok(catching(|| next.run()).await),
                Some(deadline) => {
                    match tokio::time::timeout(deadline, catching(|| next.run())).await {
                        Ok(outcome) => Ok(outcome),
                        // The action's future is dropped here, cancelling it.
                        Err(_) => Err(ToolError::timeout(action.qualified(), deadline)),
                    }
                }
            }
        };
        let handled = match (action.heartbeat(), &progress) {
            (Some(every), Some(progress)) => tokio::select! {
                biased;
                handled = handled => handled,
                never = heartbeat(progress, every) => match never {},
            },
            _ => handled.await,
        };
        // No progress once the call is answered: what was reported goes out first.
        if let Some(progress) = &progress {
            progress.close();
        }
        if let Some(forwarder) = forwarder {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), forwarder).await;
        }
        let outcome = match handled {
            Ok(outcome) => outcome,
            Err(timed_out) => return timed_out.into(),
        };
        finish(
            def,
            action,
            outcome,
            deprecation,
            &context,
            self.expose_causes,
            match self.flat {
                true => Callable::Flat(def),
                false => Callable::Qualified,
            },
            |invalid| self.refused(invalid),
        )
    }

    /// Spends the call's rate limits and takes its slots, together: on a shared store that is
    /// one round trip for both, not two. A call the rate limits refuse gives back any slot it
    /// took; a call that finds no slot has still spent its budget, as if checked in turn.
    async fn admit(
        &self,
        index: usize,
        info: &CallInfo,
        deadline: Option<std::time::Duration>,
    ) -> Result<[Option<Slot>; 2], super::limits::Refusal> {
        let slots = [
            self.slots.as_deref(),
            self.action_slots.get(index).and_then(Option::as_deref),
        ];
        if slots.iter().all(Option::is_none) {
            self.spend(index, info).await?;
            return Ok([None, None]);
        }
        let mut spend = std::pin::pin!(self.spend(index, info));
        let mut enter = std::pin::pin!(async move {
            // The tool's slot first, then the action's own; held until the action is done.
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
        spent?;
        match entered {
            Some(slots) => slots,
            None => enter.await,
        }
    }

    /// Spends one call of the tool's budget, then of the action's; a call the action's refuses
    /// is given back to the tool's, so a refused call costs nothing.
    async fn spend(&self, index: usize, info: &CallInfo) -> Result<(), super::limits::Refusal> {
        let tool = self.rate.as_deref();
        let action = self.action_rates.get(index).and_then(Option::as_deref);
        if tool.is_none() && action.is_none() {
            return Ok(());
        }
        let key = rate_key(self.key.as_ref(), info);
        let key = key.as_deref();
        if let Some(tool) = tool {
            tool.spend(key).await?;
        }
        let Some(action) = action else {
            return Ok(());
        };
        let refused = action.spend(key).await;
        if let (Err(_), Some(tool)) = (&refused, tool) {
            tool.refund(key).await;
        }
        refused
    }

    /// A call rejected before its action: with what changed since the lockfile, when the
    /// server runs with one (ERRORS.md §4 and §7).
    pub(crate) fn reject(&self, def: &ToolDef, rejection: Rejection) -> Answer {
        match rejection {
            Rejection::Route {
                envelope,
                arguments,
            } => Answer::envelope(self.removed_action(def, &arguments, *envelope)),
            Rejection::Invalid(invalid) => self.refused(invalid),
            Rejection::Broken(result) => *result,
        }
    }

    /// A validation error, with what changed in the action's contract since the lockfile.
    fn refused(&self, invalid: ValidationError) -> Answer {
        let envelope = invalid.envelope();
        let Some(notes) = &self.contract else {
            return Answer::envelope(envelope);
        };
        Answer::envelope(
            match awareness_of_invalid(
                &envelope.text(),
                invalid.action(),
                &notes.changes,
                notes.max,
            ) {
                Some((text, changes)) => envelope.with_contract_changes(text, changes),
                None => envelope,
            },
        )
    }

    /// UNKNOWN_ACTION for an action the lockfile has and the running contract removed carries
    /// that action's changes (ERRORS.md §4); every other routing failure stays as it is.
    fn removed_action(
        &self,
        def: &ToolDef,
        args: &Map<String, Value>,
        envelope: Envelope,
    ) -> Envelope {
        let sent = def
            .discriminator()
            .and_then(|field| args.get(field))
            .and_then(Value::as_str);
        let (Some(notes), Some(sent)) = (&self.contract, sent) else {
            return envelope;
        };
        // Matched as routing matches (§10 rule 7): the value as a bare name first, then without
        // a leading `{tool}.`.
        let bare = format!("{}.{sent}", def.name());
        let qualified = sent
            .strip_prefix(def.name())
            .filter(|rest| rest.starts_with('.'))
            .map(|_| sent);
        let text = envelope.text();
        let found = [Some(bare.as_str()), qualified]
            .into_iter()
            .flatten()
            .find_map(|action| inject_removed_action(&text, action, &notes.changes, notes.max));
        drop(text);
        match found {
            Some((text, changes)) => envelope.with_contract_changes(text, changes),
            None => envelope,
        }
    }
}
