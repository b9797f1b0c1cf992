//! `tasks/get`, `tasks/update` and `tasks/cancel` (SEP-2663), answered from the task store for
//! the caller that created the task: an id that does not exist, has expired, or is another
//! caller's is unknown alike (-32602). rmcp refuses them before this for a server that does
//! not advertise tasks (-32601) and a request that did not declare the extension (-32021);
//! `tasks/result` and `tasks/list` are not methods of the extension (-32601).

use rmcp::model::{
    CancelTaskParams, DetailedTask, Extensions, GetTaskParams, GetTaskResult, UpdateTaskParams,
};
use rmcp::{ErrorData, RoleServer, service::RequestContext};

use super::core::Server;
use super::task_calls::owner;
use super::tasks::TaskStoreError;

impl Server {
    /// `tasks/get`: the task as it stands.
    pub(crate) async fn task_get(
        &self,
        request: GetTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = owner(&context.extensions);
        let store = &self.inner.tasks.store;
        match store.get(caller.as_deref(), &request.task_id).await {
            Ok(Some(task)) => Ok(GetTaskResult::new(shown(task))),
            Ok(None) => Err(unknown(&request.task_id)),
            Err(error) => Err(unavailable(error)),
        }
    }

    /// `tasks/update`: the answers to the task's questions; an answer to a question it does
    /// not ask is dropped (the acknowledgement is the same).
    pub(crate) async fn task_update(
        &self,
        request: UpdateTaskParams,
        extensions: &Extensions,
    ) -> Result<(), ErrorData> {
        let caller = owner(extensions);
        let store = &self.inner.tasks.store;
        let answers = request.input_responses;
        match store
            .answer(caller.as_deref(), &request.task_id, answers)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(unknown(&request.task_id)),
            Err(error) => Err(unavailable(error)),
        }
    }

    /// `tasks/cancel`: the task stops (a terminal task stays as it is; the acknowledgement is
    /// the same).
    pub(crate) async fn task_cancel(
        &self,
        request: CancelTaskParams,
        extensions: &Extensions,
    ) -> Result<(), ErrorData> {
        let caller = owner(extensions);
        let store = &self.inner.tasks.store;
        match store.cancel(caller.as_deref(), &request.task_id).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(unknown(&request.task_id)),
            Err(error) => Err(unavailable(error)),
        }
    }
}

/// A task as `tasks/get` shows it: the result of a completed one without the v1
/// `related-task` key (the id is at the root).
fn shown(mut task: DetailedTask) -> DetailedTask {
    if let rmcp::model::TaskPayload::Completed { result } = &mut task.payload
        && let Some(serde_json::Value::Object(meta)) = result.get_mut("_meta")
    {
        meta.remove("io.modelcontextprotocol/related-task");
    }
    task
}

/// The answer for an id the caller has no task under.
fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "Unknown task {:?}: no task of yours has this id (it may have expired after its ttlMs). Start it again with tools/call.",
            super::methods::cut(id)
        ),
        None,
    )
}

/// The answer when the task store cannot answer.
fn unavailable(error: TaskStoreError) -> ErrorData {
    tracing::error!(%error, "the task store did not answer");
    ErrorData::internal_error("The task store is unavailable: retry in a moment.", None)
}
