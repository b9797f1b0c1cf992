//! The everything example's tools that run as tasks (MCP tasks extension, SEP-2663), under the
//! names the official MCP conformance suite asks for (`tasks-*` scenarios). A client that
//! declared the extension is answered with a task it polls (`tasks/get`), answers
//! (`tasks/update`) and cancels (`tasks/cancel`); any other runs them inline, except those that
//! run only as tasks (`task = "required"`), which it is refused (-32021).

use std::time::Duration;

use mcp_fusion::rmcp::ErrorData;
use mcp_fusion::tools::{ElicitForm, Response};
use mcp_fusion::{Context, ToolError, ToolErrors, tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Whom to greet.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Whom {
    /// Their name.
    name: String,
}

/// Greets someone, at once: never a task.
#[tool(name = "greet", read_only)]
pub(crate) async fn greet(whom: Whom) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", whom.name))
}

/// How long to compute.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Compute {
    /// Seconds to work (0: done at once).
    #[schemars(range(min = 0, max = 3600))]
    seconds: u64,
    /// A label the result repeats.
    #[serde(default)]
    label: String,
}

/// Works for `seconds`, reporting progress each second, then answers: a task for a client
/// that declared tasks (cancelled mid-run, it ends `cancelled`).
#[tool(name = "slow_compute", read_only, task)]
pub(crate) async fn slow_compute(compute: Compute, f: Context) -> Result<String, ToolError> {
    for done in 0..compute.seconds {
        f.progress(
            done as f64,
            Some(compute.seconds as f64),
            Some(&compute.label),
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(format!(
        "computed {:?} in {} seconds",
        compute.label, compute.seconds
    ))
}

#[derive(Debug, ToolErrors)]
pub(crate) enum JobError {
    #[tool_error(
        code = "JOB_FAILED",
        "The job failed, as it always does: it shows how a tool error reads in a task.",
        recovery = "Nothing to fix: call another tool."
    )]
    Failed,
}

/// Fails after about a second with a tool error: runs only as a task.
#[tool(name = "failing_job", task = "required")]
pub(crate) async fn failing_job() -> Result<String, JobError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(JobError::Failed)
}

/// Fails with a JSON-RPC error (not a tool error): its task reads `failed`.
#[tool(name = "protocol_error_job", task)]
pub(crate) async fn protocol_error_job() -> Result<String, ErrorData> {
    Err(ErrorData::internal_error(
        "protocol_error_job always fails with a JSON-RPC error",
        None,
    ))
}

/// The file to delete.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Deletion {
    /// Its name.
    filename: String,
}

/// Please confirm.
#[derive(Deserialize, ElicitForm)]
struct Confirm {
    /// Whether you confirm.
    confirm: bool,
}

/// Your name.
#[derive(Deserialize, ElicitForm)]
struct Name {
    /// What you are called.
    name: String,
}

/// Asks the user to confirm, then "deletes" the file: as a task, it waits `input_required`
/// for the answer (`tasks/update`).
#[tool(name = "confirm_delete", destructive, task)]
pub(crate) async fn confirm_delete(deletion: Deletion, f: Context) -> Result<String, ToolError> {
    let asked = f.elicit::<Confirm>(format!("Delete {}?", deletion.filename));
    match asked.await?.accepted()? {
        Confirm { confirm: true } => Ok(format!("Deleted {}.", deletion.filename)),
        Confirm { confirm: false } => Ok(format!("Kept {}.", deletion.filename)),
    }
}

/// Asks two questions at once (a name, a confirmation): as a task, both wait in
/// `inputRequests` and may be answered one at a time.
#[tool(name = "multi_input", task)]
pub(crate) async fn multi_input(f: Context) -> Result<String, ToolError> {
    let (name, confirm) = tokio::join!(
        f.input("name").elicit::<Name>("What is your name?"),
        f.input("confirm").elicit::<Confirm>("Go ahead?"),
    );
    let (Name { name }, Confirm { confirm }) = (name?.accepted()?, confirm?.accepted()?);
    Ok(format!(
        "{name} said {}",
        if confirm { "yes" } else { "no" }
    ))
}

/// Asks the user's name in an input round (`user_name`), then runs as a task with it: the
/// task's result greets them.
#[tool(
    name = "test_tool_with_task",
    task = "required",
    task_after = "user_name"
)]
pub(crate) async fn test_tool_with_task(f: Context) -> Result<Response, ToolError> {
    let asked = f.input("user_name").elicit::<Name>("What is your name?");
    let Name { name } = asked.await?.accepted()?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(Response::text(format!("Hello, {name}! (from a task)")))
}
