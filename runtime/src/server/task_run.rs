//! A task's run, on the replica that created it: its handler goes through the call pipeline
//! (limits, middleware, deadline, panic catch) as a call does, once per round of questions;
//! what it asks of the user becomes the task's `input_required`, answered by `tasks/update`
//! (the handler then runs again with the answers, as a call's next round would); its progress
//! is the task's status message; its end is the task's (an envelope completes it with
//! `isError`, a protocol error fails it). Meanwhile the replica renews its lease on the task,
//! and stops the handler when a client cancelled it through any replica, or its ttl ends.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{InputResponses, JsonObject, NumberOrString, ProgressToken};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::tool::{CatchUnwind, ClientAccess};

use super::call::Called;
use super::client::RoundLink;
use super::core::Server;
use super::request::{CallRequest, ProgressSink};
use super::rounds::Given;
use super::task_calls::TaskCall;
use super::tasks::{Held, TaskStore, TaskUpdate};

/// How a task's run ended early.
enum Stop {
    /// A client cancelled it (the store says so already), or it is gone.
    Stopped,
    /// Its ttl ended while it ran.
    Expired,
}

impl Server {
    /// Runs the task `id` of `call` to its end, recording each step in the task store.
    pub(crate) async fn run_task(self, id: String, call: TaskCall) {
        let store = Arc::clone(&self.inner.tasks.store);
        let lease = self.inner.tasks.lease;
        // Stopped a little before its ttl ends, so that a reader sees why before it is gone.
        let ttl = self.inner.tasks.ttl;
        let margin = (self.inner.tasks.poll_interval * 2).min(ttl / 2);
        let ends = Instant::now() + (ttl - margin);
        let stop = CancellationToken::new();
        let keeper = keep(Arc::clone(&store), id.clone(), lease, stop.clone());
        let run = CatchUnwind(Box::pin(self.rounds(&store, &id, call, stop.clone())));
        let ended = tokio::select! {
            ended = run => ended,
            () = tokio::time::sleep_until(ends) => Ok(Err(Stop::Expired)),
            never = keeper => match never {},
        };
        stop.cancel();
        let update = match ended {
            Ok(Ok(update)) => update,
            Ok(Err(Stop::Stopped)) => return,
            Ok(Err(Stop::Expired)) => TaskUpdate::Failed(error_object(&ErrorData::internal_error(
                "The task ran past its ttl and was stopped: call the tool again, or ask the server operator for a longer task ttl.",
                None,
            ))),
            Err(panic) => TaskUpdate::Failed(error_object(&self.panicked(panic))),
        };
        if let Err(error) = store.record(&id, update).await {
            tracing::error!(task = %id, %error, "a task's end could not be recorded");
        }
    }

    /// The handler's runs, each with the answers so far, until one ends: the task's last
    /// update.
    async fn rounds(
        &self,
        store: &Arc<dyn TaskStore>,
        id: &str,
        call: TaskCall,
        stop: CancellationToken,
    ) -> Result<TaskUpdate, Stop> {
        let TaskCall {
            name,
            arguments,
            extensions,
            trace,
            mut answers,
            capabilities,
        } = call;
        loop {
            let link = RoundLink::new(answers.clone(), capabilities.clone(), None, None);
            let round = link.round();
            let request = CallRequest {
                name: name.as_str().into(),
                arguments: arguments.clone(),
                progress: Some((
                    ProgressToken(NumberOrString::Number(0)),
                    ProgressSink::Task(Arc::clone(store), Arc::from(id)),
                )),
                trace: trace.clone(),
                extensions: extensions.clone(),
                cancelled: stop.clone(),
                client: Some(ClientAccess {
                    link: Arc::new(link),
                    ask_timeout: self.inner.ask_timeout,
                }),
                round: Some(Arc::clone(&round)),
                spent: true,
            };
            let called = self.run_call(request).await;
            if let Some(missing) = round.missing() {
                let refused = ErrorData::missing_required_client_capability(missing);
                return Ok(TaskUpdate::Failed(error_object(&refused)));
            }
            let asks = match called {
                Called::InputRequired(asks) => asks,
                Called::Cancelled { .. } => return Err(Stop::Stopped),
                called => {
                    return Ok(
                        match self.answer_of(&rmcp::model::RequestId::Number(0), &name, called) {
                            Ok(result) => TaskUpdate::Completed(result_object(&result)),
                            Err(error) => TaskUpdate::Failed(error_object(&error)),
                        },
                    );
                }
            };
            if store_says(store.record(id, TaskUpdate::InputRequired(asks)).await) != Held::Running
            {
                return Err(Stop::Stopped);
            }
            let given = answered(store.as_ref(), id, &stop).await?;
            answers.extend((given.into_iter()).map(|(key, answer)| (key, Given::unbound(answer))));
        }
    }
}

/// The answers to every question the task asked, once a client gave the last of them.
async fn answered(
    store: &dyn TaskStore,
    id: &str,
    stop: &CancellationToken,
) -> Result<InputResponses, Stop> {
    loop {
        // Made before the store is read, so that a change after the read is not missed.
        let changed = store.changed(id);
        match store.take_answers(id).await {
            Ok(Some(answers)) => return Ok(answers),
            Ok(None) => {}
            Err(error) => tracing::warn!(task = %id, %error, "a task's answers could not be read"),
        }
        tokio::select! {
            () = stop.cancelled() => return Err(Stop::Stopped),
            () = changed => {}
        }
    }
}

/// Renews the lease on task `id` every third of `lease` and watches for a cancel; cancels
/// `stop` once the task should not go on. Never ends.
async fn keep(
    store: Arc<dyn TaskStore>,
    id: String,
    lease: Duration,
    stop: CancellationToken,
) -> std::convert::Infallible {
    let every = (lease / 3).max(Duration::from_millis(10));
    let mut next = Instant::now() + every;
    loop {
        let changed = store.changed(&id);
        tokio::select! {
            () = tokio::time::sleep_until(next) => next = Instant::now() + every,
            () = changed => {}
        }
        if store_says(store.renew(&id, lease).await) != Held::Running {
            stop.cancel();
            return std::future::pending().await;
        }
    }
}

/// What a store's answer means for the run: a store that cannot answer does not stop it (its
/// lease may lapse, which readers then see).
fn store_says(held: Result<Held, super::tasks::TaskStoreError>) -> Held {
    match held {
        Ok(held) => held,
        Err(error) => {
            tracing::warn!(%error, "the task store did not answer");
            Held::Running
        }
    }
}

/// A JSON-RPC error as a task's `error`.
fn error_object(error: &ErrorData) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// A tool's result as a task's `result`.
fn result_object(result: &rmcp::model::CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}
