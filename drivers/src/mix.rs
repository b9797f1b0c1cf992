//! The mixed workload the soak and HTTP load drivers send the billing example: calls planned by
//! index (each driver has its own mix), each answer judged by its kind and by what it must echo
//! of its own call, so that a lost, duplicated or crossed answer is caught.

use std::time::{Duration, Instant};

use mcp_fusion::client::{Client, ToolCallError};
use mcp_fusion::rmcp::model::CallToolResult;
use serde_json::Value;

/// How long a call may wait for its answer before it counts as lost.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What an answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A result that is no error.
    Success,
    /// A `<validation_error>` envelope.
    ValidationError,
    /// An UNKNOWN_ACTION envelope.
    UnknownAction,
    /// A NOT_FOUND envelope.
    NotFound,
    /// A SERVER_BUSY envelope.
    ServerBusy,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 5] = [
        Kind::Success,
        Kind::ValidationError,
        Kind::UnknownAction,
        Kind::NotFound,
        Kind::ServerBusy,
    ];

    /// Its name in a report (the error code, or `success`, `validation_error`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Success => "success",
            Kind::ValidationError => "validation_error",
            Kind::UnknownAction => "UNKNOWN_ACTION",
            Kind::NotFound => "NOT_FOUND",
            Kind::ServerBusy => "SERVER_BUSY",
        }
    }

    /// The kind of an error result's envelope; `None` for any other code.
    fn of_error(error: &ToolCallError) -> Option<Kind> {
        match error.code() {
            "VALIDATION_ERROR" => Some(Kind::ValidationError),
            "UNKNOWN_ACTION" => Some(Kind::UnknownAction),
            "NOT_FOUND" => Some(Kind::NotFound),
            "SERVER_BUSY" => Some(Kind::ServerBusy),
            _ => None,
        }
    }
}

/// One call of a mix: what is sent, and what may come back.
#[derive(Debug)]
pub struct Planned {
    /// The tool called.
    pub target: String,
    /// Its arguments.
    pub arguments: Value,
    /// The kinds the answer may be.
    pub expect: &'static [Kind],
    /// Text the answer must contain: something of this very call, echoed back.
    pub echo: Option<String>,
}

impl Planned {
    /// A call of `target` with `arguments`, whose answer may be any of `expect`.
    pub fn new(target: impl Into<String>, arguments: Value, expect: &'static [Kind]) -> Self {
        Planned {
            target: target.into(),
            arguments,
            expect,
            echo: None,
        }
    }

    /// The answer must also contain `echo`.
    pub fn echoing(mut self, echo: String) -> Self {
        self.echo = Some(echo);
        self
    }
}

/// The answer to one call.
#[derive(Debug)]
pub struct Record {
    /// The call's place in the mix.
    pub index: usize,
    /// How long its answer took.
    pub latency: Duration,
    /// What it was, when it was one of the [`Kind`]s.
    pub kind: Option<Kind>,
    /// Why it was not what the plan allows.
    pub problem: Option<String>,
}

/// Makes call `index` as planned with the typed client, and judges its answer.
pub async fn call(client: &Client, index: usize, planned: Planned) -> Record {
    let Planned {
        target,
        arguments,
        expect,
        echo,
    } = planned;
    let started = Instant::now();
    let answer = tokio::time::timeout(CALL_TIMEOUT, client.call_raw(&target, arguments)).await;
    let latency = started.elapsed();
    let (kind, problem) = match answer {
        Ok(Ok(result)) => judge(expect, echo.as_deref(), result),
        Ok(Err(e)) => (None, Some(e.to_string())),
        Err(_) => (None, Some(format!("no answer within {CALL_TIMEOUT:?}"))),
    };
    Record {
        index,
        latency,
        kind,
        problem,
    }
}

/// Judges an answer: its kind, whether the plan allows it, and whether it echoes this call.
fn judge(
    expect: &[Kind],
    echo: Option<&str>,
    result: CallToolResult,
) -> (Option<Kind>, Option<String>) {
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    let kind = if result.is_error == Some(true) {
        let error = ToolCallError::from_result(result);
        match Kind::of_error(&error) {
            Some(kind) => kind,
            None => return (None, Some(format!("unexpected error {error}"))),
        }
    } else {
        Kind::Success
    };
    let problem = if !expect.contains(&kind) {
        Some(format!("expected {expect:?}, got {kind:?}: {text}"))
    } else {
        echo.filter(|echo| !text.contains(echo))
            .map(|echo| format!("the answer does not echo {echo}: {text}"))
    };
    (Some(kind), problem)
}
