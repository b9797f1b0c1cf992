//! Calls that run as tasks (MCP tasks extension, SEP-2663), for a client that declared the
//! extension ([`Answers::tasks`](super::Answers::tasks)): start one, wait for it (polling at the
//! interval the server gives), answer its questions, cancel it.

use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, DetailedTask, GetTaskParams,
    InputResponses, Task, TaskStatus, UpdateTaskParams,
};
use serde_json::Value;

use super::{Client, ClientError};

/// How a call that may run as a task began.
#[derive(Debug)]
#[non_exhaustive]
pub enum Started {
    /// The server made it a task: wait for it with [`Client::wait_task`].
    Task(Task),
    /// The server answered at once (the action does not run as a task).
    Done(CallToolResult),
}

/// How long a wait polls when the server gives no interval.
const DEFAULT_POLL: Duration = Duration::from_secs(1);

impl Client {
    /// Calls `target` as [`Client::call_raw`] does, for a server that may answer with a task.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::client::{Answers, Started};
    /// use mcp_fusion::rmcp::model::TaskStatus;
    /// use mcp_fusion::{Server, ToolError, tool};
    ///
    /// /// Exports, slowly.
    /// #[tool(task)]
    /// async fn export() -> Result<&'static str, ToolError> {
    ///     Ok("exported")
    /// }
    ///
    /// let server = Server::builder("s", "1").tool(ExportTool).build()?;
    /// let (client, _connection) = Answers::new().tasks().in_memory(server).await?;
    /// let Started::Task(task) = client.start_task("export", serde_json::json!({})).await? else {
    ///     panic!("a task");
    /// };
    /// let done = client.wait_task(&task).await?;
    /// assert_eq!(done.status(), TaskStatus::Completed);
    /// # Ok(()) }
    /// ```
    pub async fn start_task(&self, target: &str, arguments: Value) -> Result<Started, ClientError> {
        let params = self.params(target, arguments)?;
        let response = self.peer().call_tool_once(params).await;
        match response.map_err(ClientError::transport)? {
            CallToolResponse::Task(created) => Ok(Started::Task(created.task)),
            CallToolResponse::Complete(result) => Ok(Started::Done(result)),
            _ => Err(ClientError::transport(std::io::Error::other(
                "the server asked for input before making a task: drive its rounds with the rmcp peer (Client::peer)",
            ))),
        }
    }

    /// The task `id` as it stands (`tasks/get`).
    pub async fn get_task(&self, id: &str) -> Result<DetailedTask, ClientError> {
        let read = self.peer().get_task(GetTaskParams::new(id)).await;
        Ok(read.map_err(ClientError::transport)?.task)
    }

    /// Polls `task` at the interval the server gave until it is terminal (`completed`,
    /// `failed`, `cancelled`) or asks for input (`input_required`: answer it with
    /// [`Client::answer_task`], then wait again).
    pub async fn wait_task(&self, task: &Task) -> Result<DetailedTask, ClientError> {
        let every = task
            .poll_interval_ms
            .map_or(DEFAULT_POLL, Duration::from_millis);
        loop {
            let read = self.get_task(&task.task_id).await?;
            let status = read.status();
            if status.is_terminal() || status == TaskStatus::InputRequired {
                return Ok(read);
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Answers the questions of task `id` (`tasks/update`), keyed as its `inputRequests`.
    pub async fn answer_task(&self, id: &str, answers: InputResponses) -> Result<(), ClientError> {
        let answered = self
            .peer()
            .update_task(UpdateTaskParams::new(id, answers))
            .await;
        answered.map_err(ClientError::transport)
    }

    /// Asks the server to stop task `id` (`tasks/cancel`); a finished task stays as it is.
    pub async fn cancel_task(&self, id: &str) -> Result<(), ClientError> {
        let cancelled = self.peer().cancel_task(CancelTaskParams::new(id)).await;
        cancelled.map_err(ClientError::transport)
    }
}
