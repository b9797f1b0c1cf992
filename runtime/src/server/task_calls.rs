//! A `tools/call` that becomes a task (MCP tasks extension, SEP-2663): whether it does (the
//! action says it may or must, and the client declared the extension), its creation in the
//! task store (readable at once), and the answer that says so (`resultType: "task"`). The run
//! itself is `task_run`'s.

use std::time::SystemTime;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateTaskResult, Extensions, Task, TaskStatus,
};
use serde_json::{Map, Value};

use crate::middleware::CallInfo;
use crate::tool::{Caller, TaskSupport, TraceContext, prepare};

use super::admission::rate_key;
use super::core::Server;
use super::rounds::Answers;
use super::tasks::{NewTask, TaskStoreError, timestamp};

/// What a call of a tool becomes, as to tasks.
pub(crate) enum Tasked {
    /// It runs as a call does.
    Inline,
    /// It is refused: the action runs only as a task, and the client did not declare tasks.
    Refused(ErrorData),
    /// It runs as a task.
    Task,
}

/// What a task's run needs of the call that created it.
pub(crate) struct TaskCall {
    pub(crate) name: String,
    pub(crate) arguments: Option<Map<String, Value>>,
    pub(crate) extensions: Extensions,
    pub(crate) trace: Option<(TraceContext, String)>,
    /// The answers the creating request carried (a call that gathered its input in rounds).
    pub(crate) answers: Answers,
    /// What the client declared it can be asked.
    pub(crate) capabilities: ClientCapabilities,
}

/// The key a task is bound to: the verified caller's subject (length-prefixed, as its rate
/// limit key is), `None` for a caller nobody verified.
pub(crate) fn owner(extensions: &Extensions) -> Option<String> {
    let subject = Caller::of(extensions)?.subject();
    Some(format!("sub:{}:{subject}", subject.len()))
}

impl Server {
    /// Whether the server has an action that runs as a task: then it advertises the tasks
    /// extension.
    pub(crate) fn has_tasks(&self) -> bool {
        self.inner.tasks.used
    }

    /// What a call of `name` with `arguments` becomes, for a client that declared the tasks
    /// extension (`declared`) or not, its request carrying `answers`.
    pub(crate) fn tasked(
        &self,
        name: &str,
        arguments: Option<&Map<String, Value>>,
        declared: bool,
        answers: &Answers,
    ) -> Tasked {
        if !self.has_tasks() {
            return Tasked::Inline;
        }
        let Some(support) = self.inner.registry.task_of(name, arguments) else {
            return Tasked::Inline;
        };
        if !declared {
            return match support.required() {
                true => Tasked::Refused(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                )),
                false => Tasked::Inline,
            };
        }
        match support {
            TaskSupport::AfterInputs { keys, .. }
                if !keys.iter().all(|k| answers.contains_key(k)) =>
            {
                Tasked::Inline
            }
            _ => Tasked::Task,
        }
    }

    /// Creates the task of `call` (readable by `tasks/get` once this returns), starts its
    /// run, and answers with it; a caller past its cap is told so with an envelope.
    async fn create_task(&self, call: TaskCall) -> Result<CreateTaskResult, Refusal> {
        let config = &self.inner.tasks;
        let spent = self.spend_for_task(&call).await?;
        let id = new_task_id();
        let owner = owner(&call.extensions);
        let created = SystemTime::now();
        let new = NewTask::new(&id, owner.as_deref(), config.ttl)
            .poll_interval(config.poll_interval)
            .lease(config.lease)
            .max_per_caller(config.max_per_caller)
            .created(created);
        let made = config.store.create(new).await;
        if made.is_err() {
            // No task: the call spends nothing.
            spent.refund().await;
        }
        match made {
            Ok(()) => {}
            Err(TaskStoreError::TooMany { max }) => {
                return Err(Refusal::Envelope(crate::ToolError::too_many_tasks(max)));
            }
            Err(TaskStoreError::Unavailable { reason }) => {
                tracing::error!(%reason, tool = %call.name, "a task could not be created");
                return Err(Refusal::Protocol(ErrorData::internal_error(
                    "The task could not be created: the task store is unavailable. Retry in a moment.",
                    None,
                )));
            }
        }
        let at = timestamp(created);
        let millis = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let task = Task::new(&id, TaskStatus::Working, at.clone(), at)
            .with_ttl_ms(millis(config.ttl))
            .with_poll_interval_ms(millis(config.poll_interval).max(1));
        tokio::spawn(self.clone().run_task(id, call));
        Ok(CreateTaskResult::new(task))
    }
}

impl Server {
    /// Checks the call as a direct call is checked before it is admitted (routing,
    /// validation: a mistake is answered at once, no task made) and spends its rate limits:
    /// a task spends them once, as it is created, for all its runs.
    async fn spend_for_task(&self, call: &TaskCall) -> Result<Spent<'_>, Refusal> {
        let Some((registered, route)) = self.inner.registry.find(&call.name) else {
            return Ok(Spent::nothing());
        };
        let def = registered.tool.definition();
        let prepared = match prepare(def, call.arguments.clone(), route) {
            Ok(prepared) => prepared,
            Err(rejection) => return Err(Refusal::Answer(registered.reject(rejection))),
        };
        let info = CallInfo {
            tool: def.shared_name().clone(),
            action: prepared.action.qualified_shared(),
            arguments: prepared.args,
            extensions: call.extensions.clone(),
        };
        let key = rate_key(self.inner.rates.key.as_ref(), &info);
        let admission = registered.limits.of_action(prepared.index, def.name());
        match admission.spend(key.as_deref()).await {
            Ok(()) => Ok(Spent {
                admission: Some(admission),
                key,
            }),
            Err(refusal) => Err(Refusal::Envelope(refusal.into_error(def.name()))),
        }
    }

    /// `create_task`'s answer to the call: the task, the envelope of a
    /// caller past its cap, or the store's failure.
    pub(crate) async fn start_task(&self, call: TaskCall) -> Result<CallToolResponse, ErrorData> {
        match self.create_task(call).await {
            Ok(task) => Ok(CallToolResponse::Task(task)),
            Err(Refusal::Envelope(envelope)) => Ok(CallToolResponse::Complete(
                crate::tool::Answer::from(envelope).into_result(),
            )),
            Err(Refusal::Answer(answer)) => Ok(CallToolResponse::Complete(answer.into_result())),
            Err(Refusal::Protocol(error)) => Err(error),
        }
    }
}

/// The rate limits a task's creation spent, and under which key.
struct Spent<'a> {
    admission: Option<super::admission::Admission<'a>>,
    key: Option<String>,
}

impl Spent<'_> {
    fn nothing() -> Self {
        Spent {
            admission: None,
            key: None,
        }
    }

    /// Gives them back: no task was made.
    async fn refund(self) {
        if let Some(admission) = self.admission {
            admission.refund(self.key.as_deref(), 2).await;
        }
    }
}

/// Why a call that would have become a task did not.
enum Refusal {
    /// The call is answered with this (a routing or validation error).
    Answer(crate::tool::Answer),
    /// The caller holds too many tasks, or spent its rate limit: the call is answered with
    /// this envelope.
    Envelope(crate::ToolError),
    /// The store failed: a JSON-RPC error.
    Protocol(ErrorData),
}

/// A task id: 128 bits of the operating system's random source, in hex.
fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    crate::hex::lower(&bytes)
}
