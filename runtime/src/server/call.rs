//! The one call pipeline. Every `tools/call`, whichever transport read it (stdio, streamable
//! HTTP, in process) and whatever answers it (an action of the server's own tools, a tool of a
//! source such as an upstream a gateway mounts), takes the same steps (ERRORS.md §4):
//!
//! 1. prepare: routing, validation and the deprecation warning (a source: its own checks);
//! 2. admit: the rate limits, then the concurrency slots ([`Admission`]: a call refused at any
//!    step spends nothing);
//! 3. complete: the fields only the user can give that the call left out, asked of them
//!    (`ask_user`; the arguments validated again with their answers);
//! 4. the middleware, outermost first, around
//! 5. the action (or the forward) under its deadline, its panic caught, its progress sent;
//! 6. settle: the outcome as its answer, every failure as its envelope.
//!
//! A call the client cancels stops where it is (in a queue, in the middleware, in the handler):
//! its future is dropped, which gives back its slot or its place in line.

// Logging is deprecated by SEP-2577 in rmcp; it is still served.
#![allow(deprecated)]

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::Value;
use tracing::Instrument;

use crate::ToolError;
use crate::middleware::{CallInfo, Middleware, Next};
use crate::tool::{
    ActionDef, Answer, BoxFuture, ClientAccess, Context, Deadline, Failure, Handoffs, Outcome,
    Progress, ask_user, catching, finish, prepare,
};

use rmcp::model::InputRequests;

use super::admission::{Admission, RateLimitKey, rate_key};
use super::client::Round;
use super::core::Server;
use super::progress;
use super::registry::Registered;
use super::request::{CallRequest, ProgressSink, Stopping, boxed, unless_cancelled};
use super::source::Sourced;

/// How a `tools/call` ended.
pub(crate) enum Called {
    Answered(Answer),
    /// The round is over (2026-07-28): what the call asks of its client.
    InputRequired(InputRequests),
    UnknownTool,
    /// The client cancelled it while the named action was on its way.
    Cancelled {
        action: Arc<str>,
    },
}

/// What a prepared call runs once admitted, inside the middleware: an action's handler, or
/// the forward of a call to an upstream.
pub(crate) trait Run: Sync {
    /// Completes the arguments of an admitted call before the middleware sees them (an
    /// action's fields only the user can give, asked of them through `client`); the answer
    /// that ends the call instead. `None` when there is nothing to complete (no future made).
    fn complete<'a>(
        &'a self,
        _args: &'a mut Value,
        _client: Option<&'a ClientAccess>,
    ) -> Option<BoxFuture<'a, Result<(), Answer>>> {
        None
    }

    fn run(&self, args: Value, context: Context) -> BoxFuture<'_, Result<CallToolResult, Failure>>;
}

/// One configuration of the steps: what admits a call, what runs around it, and for how long.
pub(crate) struct Plan<'a> {
    pub(crate) admission: Admission<'a>,
    /// Whose budget a call spends (with the verified caller's subject, when there is one).
    pub(crate) key: Option<&'a RateLimitKey>,
    pub(crate) middleware: &'a [Arc<dyn Middleware>],
    pub(crate) deadline: Option<Duration>,
    /// Progress while the handler reports none.
    pub(crate) heartbeat: Option<Duration>,
    /// The least time between two progress notifications.
    pub(crate) progress_interval: Duration,
    /// Where a handler's handoff leads.
    pub(crate) handoffs: Option<&'a Arc<dyn Handoffs>>,
}

/// How the steps ended, for the caller to settle.
// Made once per call and matched at once: boxing the common outcome would only cost an
// allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Ran {
    /// Refused by its limits, having spent nothing.
    Refused(ToolError),
    /// Ended before the middleware by what completing its arguments gave instead.
    Unfinished(Answer),
    /// What the middleware and the action gave, or their panic; with the call's context.
    Done(Outcome, Context),
    /// Its deadline passed first: the action was dropped.
    TimedOut(Duration),
    /// It asked its client what the request did not answer (2026-07-28): the round is over,
    /// the action dropped.
    InputRequired(InputRequests),
}

/// Admits a prepared call, then runs `target` inside the middleware under the deadline, its
/// panic caught and its progress sent (`progress`: the client's token and where notifications
/// go). `info` is what middleware sees; its arguments go to `target` (without a copy when no
/// middleware would keep them).
#[allow(clippy::too_many_arguments)] // each is one fact about the call, named at the call site
#[allow(clippy::manual_async_fn)] // an `async fn` keeps its arguments twice: rust#62958
pub(crate) fn steps(
    plan: &Plan<'_>,
    info: &mut CallInfo,
    action: Arc<str>,
    target: &dyn Run,
    progress: Option<(rmcp::model::ProgressToken, ProgressSink)>,
    trace: Option<(crate::tool::TraceContext, String)>,
    client: Option<ClientAccess>,
    round: Option<Arc<Round>>,
) -> impl Future<Output = Ran> {
    async move {
        // Boxed, and only under a limit: its future would otherwise make every call's larger.
        let _admitted = match plan.admission.is_free() {
            true => None,
            false => {
                let key = rate_key(plan.key, info);
                match boxed(|| plan.admission.admit(key.as_deref(), plan.deadline)).await {
                    Ok(admitted) => Some(admitted),
                    Err(refused) => return Ran::Refused(refused),
                }
            }
        };
        // A field only the user can give that the call left out is asked of them now: after the
        // limits (a caller held back by them does not reach the user), before the middleware (which
        // sees the arguments whole) and the deadline (the server's `ask_timeout` bounds the wait).
        // From 2026-07-28 the ask ends the round, and the retried call finds the answer.
        if let Some(completed) = target.complete(&mut info.arguments, client.as_ref()) {
            let completed = match &round {
                None => Some(completed.await),
                Some(round) => tokio::select! {
                    biased;
                    completed = completed => Some(completed),
                    () = round.ended() => None,
                },
            };
            match completed {
                None => return Ran::InputRequired(round.map(|r| r.asks()).unwrap_or_default()),
                Some(Err(answer)) => return Ran::Unfinished(answer),
                Some(Ok(())) => {}
            }
        }
        let args = match plan.middleware.is_empty() {
            true => std::mem::take(&mut info.arguments),
            false => info.arguments.clone(),
        };
        // Stopped when this future is dropped (the client cancelled the call) as when it ends.
        let (progress, forwarding) = match progress {
            Some((token, sink)) => {
                let progress = Arc::new(Progress::new(token, plan.progress_interval));
                let forwarding = progress::Forwarding::start(sink, Arc::clone(&progress));
                (Some(progress), Some(forwarding))
            }
            None => (None, None),
        };
        // Cancelled unless the handler finishes: its future dropped here (the deadline, the
        // round's end) or with this one (the client cancelled the call).
        let stopped = tokio_util::sync::CancellationToken::new();
        let unfinished = stopped.clone().drop_guard();
        let mut context = Context::of_call(action, progress.clone(), trace, info.caller().cloned())
            .with_cancellation(stopped);
        if let Some(handoffs) = plan.handoffs {
            context = context.with_handoffs(Arc::clone(handoffs));
        }
        if let Some(client) = client {
            context = context.with_client(client);
        }
        // The deadline stands still while the handler waits for its client.
        let deadline = plan.deadline.map(|d| (d, Deadline::after(d)));
        if let Some((_, deadline)) = &deadline {
            context = context.with_deadline(deadline.clone());
        }
        let handler_context = context.clone();
        let next = Next::new(
            plan.middleware,
            info,
            Box::new(move || target.run(args, handler_context)),
        );
        let heartbeat = plan.heartbeat.zip(progress.as_deref());
        let handled = watched(
            std::pin::pin!(catching(|| next.run())),
            deadline.as_ref(),
            round.as_deref(),
            heartbeat,
        )
        .await;
        match &handled {
            Some(Ok(_)) => drop(unfinished.disarm()),
            _ => drop(unfinished),
        }
        if let Some(forwarding) = forwarding {
            forwarding.finish().await;
        }
        match handled {
            Some(Ok(outcome)) => Ran::Done(outcome, context),
            Some(Err(deadline)) => Ran::TimedOut(deadline),
            None => Ran::InputRequired(round.map(|r| r.asks()).unwrap_or_default()),
        }
    }
}

/// Runs `action` until it ends (`Some(Ok)`), the deadline passes (`Some(Err)` with it) or the
/// round ends (`None`), its future then dropped, which cancels it; the heartbeat beats
/// meanwhile. One poll over the four, each watcher there only when it applies (nested
/// `select!`s held a copy of the action's future at each level). The action comes pinned by
/// the caller: taken by value, its future would be kept twice, as the argument and pinned.
async fn watched(
    mut action: Pin<&mut impl Future<Output = Outcome>>,
    deadline: Option<&(Duration, Deadline)>,
    round: Option<&Round>,
    heartbeat: Option<(Duration, &Progress)>,
) -> Option<Result<Outcome, Duration>> {
    let mut passed = std::pin::pin!(deadline.map(|(_, deadline)| deadline.passed()));
    let mut ended = std::pin::pin!(round.map(Round::ended));
    let mut beating =
        std::pin::pin!(heartbeat.map(|(every, progress)| progress::heartbeat(progress, every)));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(outcome) = action.as_mut().poll(cx) {
            return Poll::Ready(Some(Ok(outcome)));
        }
        if let Some(Poll::Ready(())) = passed.as_mut().as_pin_mut().map(|p| p.poll(cx)) {
            let after = deadline.map(|(after, _)| *after).unwrap_or_default();
            return Poll::Ready(Some(Err(after)));
        }
        if let Some(Poll::Ready(())) = ended.as_mut().as_pin_mut().map(|e| e.poll(cx)) {
            return Poll::Ready(None);
        }
        if let Some(Poll::Ready(never)) = beating.as_mut().as_pin_mut().map(|b| b.poll(cx)) {
            match never {}
        }
        Poll::Pending
    })
    .await
}

/// Arguments of more values than this are validated one call at a time: finding every problem
/// of wrong arguments costs the validator about 400 bytes per failing keyword, up to ~200 times
/// the arguments' size (`Schema::validate`), so that cost is paid by one call at a time.
const LARGE_ARGUMENTS: usize = 4096;

/// Whether `arguments` hold more than [`LARGE_ARGUMENTS`] values (counted up to that).
pub(crate) fn large(arguments: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
    let Some(arguments) = arguments else {
        return false;
    };
    let mut seen = arguments.len();
    let mut stack: Vec<&serde_json::Value> = arguments.values().take(LARGE_ARGUMENTS + 1).collect();
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Array(items) => {
                seen += items.len();
                stack.extend(items.iter().take(LARGE_ARGUMENTS + 1));
            }
            serde_json::Value::Object(map) => {
                seen += map.len();
                stack.extend(map.values().take(LARGE_ARGUMENTS + 1));
            }
            _ => {}
        }
        if seen > LARGE_ARGUMENTS {
            return true;
        }
    }
    seen > LARGE_ARGUMENTS
}

/// An action of one of the server's tools, as the steps run it.
struct Action<'a> {
    registered: &'a Registered,
    index: usize,
    action: &'a ActionDef,
}

impl Run for Action<'_> {
    fn complete<'a>(
        &'a self,
        args: &'a mut Value,
        client: Option<&'a ClientAccess>,
    ) -> Option<BoxFuture<'a, Result<(), Answer>>> {
        if self.action.user_fields().is_empty() && self.action.needs().is_empty() {
            return None;
        }
        let def = self.registered.tool.definition();
        Some(Box::pin(async move {
            (ask_user(def, self.action, args, client).await)
                .map_err(|rejection| self.registered.reject(rejection))
        }))
    }

    fn run(&self, args: Value, context: Context) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
        self.registered.tool.invoke(self.index, args, context)
    }
}

impl Server {
    /// Runs one `tools/call` in process, as the transports do: through the same pipeline
    /// (limits, middleware, deadline), a tool of a source (a gateway's upstream) included.
    /// `None` when no tool has this name (a JSON-RPC error on the wire, as MCP requires).
    pub async fn call(&self, params: CallToolRequestParams) -> Option<rmcp::model::CallToolResult> {
        let call = CallRequest::in_process(params.name.into_owned(), params.arguments);
        match self.run_call(call).await {
            Called::Answered(answer) => Some(answer.into_result()),
            Called::UnknownTool | Called::Cancelled { .. } | Called::InputRequired(_) => None,
        }
    }

    /// Runs one `tools/call` through the pipeline; once `call.cancelled` is cancelled, the call
    /// stops where it is.
    pub(crate) fn run_call(&self, call: CallRequest<'_>) -> impl Future<Output = Called> {
        // Taken apart before the future is made, which then holds each part once (an
        // `async fn` would keep the whole request besides its parts: rust-lang/rust#62958).
        let CallRequest {
            name,
            arguments,
            progress,
            mut trace,
            extensions,
            cancelled,
            client,
            round,
            spent,
        } = call;
        async move {
            let inner = &self.inner;
            if let Some((registered, route)) = inner.registry.find(&name) {
                let def = registered.tool.definition();
                if extensions.get::<Stopping>().is_some() {
                    return Called::Answered(ToolError::limits_unavailable(def.name(), 1).into());
                }
                #[cfg(feature = "otel")]
                let started = std::time::Instant::now();
                let span = super::span::open(def.name(), &extensions, &mut trace);
                // Pinned where it is made: instrumented by value, it would be copied whole twice.
                let call = std::pin::pin!(async {
                    let large = large(arguments.as_ref());
                    // Never closed.
                    let gate = match large {
                        true => inner.validating.acquire().await.ok(),
                        false => None,
                    };
                    let prepared = prepare(def, arguments, route);
                    drop(gate);
                    let prepared = match prepared {
                        Ok(prepared) => prepared,
                        Err(rejection) => {
                            return (Called::Answered(registered.reject(rejection)), None);
                        }
                    };
                    let action = prepared.action.qualified_shared();
                    tracing::Span::current().record("action", tracing::field::display(&action));
                    let mut info = CallInfo {
                        tool: def.shared_name().clone(),
                        action: Arc::clone(&action),
                        arguments: prepared.args,
                        extensions,
                    };
                    let mut admission = registered.limits.of_action(prepared.index, def.name());
                    if spent {
                        // A task's creation spent them, once for all its runs.
                        admission.rates = [None, None];
                    }
                    let plan = Plan {
                        admission,
                        key: inner.rates.key.as_ref(),
                        middleware: &registered.middleware,
                        deadline: prepared.action.timeout(),
                        heartbeat: prepared.action.heartbeat(),
                        progress_interval: inner.rates.progress_interval,
                        handoffs: inner.handoffs.as_ref(),
                    };
                    let target = Action {
                        registered,
                        index: prepared.index,
                        action: prepared.action,
                    };
                    let ran = steps(
                        &plan,
                        &mut info,
                        Arc::clone(&action),
                        &target,
                        progress,
                        trace,
                        client,
                        round,
                    );
                    let Some(ran) = unless_cancelled(&cancelled, ran).await else {
                        return (
                            Called::Cancelled {
                                action: Arc::clone(&action),
                            },
                            Some(action),
                        );
                    };
                    let answer = match ran {
                        Ran::InputRequired(asks) => {
                            return (Called::InputRequired(asks), Some(action));
                        }
                        Ran::Refused(refused) => refused.into(),
                        Ran::Unfinished(answer) => answer,
                        Ran::TimedOut(deadline) => {
                            ToolError::timeout(prepared.action.qualified(), deadline).into()
                        }
                        Ran::Done(outcome, context) => finish(
                            def,
                            prepared.action,
                            outcome,
                            prepared.deprecation,
                            &context,
                            registered.expose_causes,
                            registered.callable(),
                            |invalid| registered.refused(invalid),
                        ),
                    };
                    (Called::Answered(answer), Some(action))
                });
                let (called, _action) = call.instrument(span.clone()).await;
                #[cfg(feature = "otel")]
                if let Called::Answered(answer) = &called {
                    super::otel::finish(
                        &inner.instruments,
                        &span,
                        def.shared_name().clone(),
                        _action.as_ref(),
                        answer,
                        started.elapsed(),
                    );
                }
                return called;
            }
            let Some(source) = inner.sources.find(&name) else {
                return Called::UnknownTool;
            };
            if extensions.get::<Stopping>().is_some() {
                return Called::Answered(ToolError::limits_unavailable(&name, 1).into());
            }
            #[cfg(feature = "otel")]
            let started = std::time::Instant::now();
            let span = super::span::open(&name, &extensions, &mut trace);
            span.record("action", &*name);
            let action: Arc<str> = Arc::from(&*name);
            // A forwarded call reaches its client as a local one does: the upstream's asks are
            // relayed to it.
            let call = CallRequest {
                name: name.clone(),
                arguments,
                progress,
                trace,
                extensions,
                cancelled: cancelled.clone(),
                client,
                round,
                spent,
            };
            // Dropping the forwarded call tells the upstream.
            let answered =
                unless_cancelled(&cancelled, source.call(call).instrument(span.clone())).await;
            match answered {
                Some(Sourced::InputRequired(asks)) => Called::InputRequired(asks),
                Some(Sourced::Answered(answer)) => {
                    #[cfg(feature = "otel")]
                    super::otel::finish(
                        &inner.instruments,
                        &span,
                        std::borrow::Cow::Owned(name.to_string()),
                        Some(&action),
                        &answer,
                        started.elapsed(),
                    );
                    Called::Answered(answer)
                }
                None => Called::Cancelled { action },
            }
        }
    }
}
