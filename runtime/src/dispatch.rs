//! One call of a tool, in process: routing → validation → deprecation warning → handler, with
//! every failure turned into its envelope (ERRORS.md §4). The server adds limits around it.

use std::any::Any;
use std::error::Error as StdError;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, Extensions};
use serde_json::{Map, Value};

use crate::envelope::inject_removed_action;
use crate::mcp::envelope;
use crate::server::{CallInfo, Next, Pipeline};
use crate::tool::{BoxFuture, Context, ToolDef};
use crate::validate::ValidationError;
use crate::{ToolError, inject_contract_awareness, new_incident_id, with_warning};

/// Why a handler did not produce a result.
#[derive(Debug)]
pub enum Failure {
    /// A tool error: sent intact.
    Tool(ToolError),
    /// Arguments that passed the schema but not the handler's own decoding.
    Invalid(ValidationError),
    /// Anything else: sent as INTERNAL_ERROR, the cause kept for the log.
    Internal(Box<dyn StdError + Send + Sync>),
}

impl From<ToolError> for Failure {
    fn from(err: ToolError) -> Self {
        Failure::Tool(err)
    }
}

/// A successful result other than serialized data: text, or a whole `CallToolResult`.
///
/// ```
/// let plain = mcp_fusion::Response::text("3 invoices exported.");
/// assert_eq!(plain.into_result().is_error, Some(false));
/// ```
#[derive(Debug, Clone)]
pub struct Response(CallToolResult);

impl Response {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Response(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// The result as rmcp's type.
    pub fn into_result(self) -> CallToolResult {
        self.0
    }
}

impl From<CallToolResult> for Response {
    fn from(result: CallToolResult) -> Self {
        Response(result)
    }
}

/// What an action's success value becomes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the success value of an action",
    label = "returned as the action's success value",
    note = "an action's `Ok` value is serialized to JSON (it must implement `serde::Serialize`) or is a `mcp_fusion::Response`",
    note = "errors, `ToolError` included, are returned as `Err(..)`"
)]
pub trait IntoOutput {
    /// The result, or why it could not be made.
    fn into_output(self) -> Result<CallToolResult, Failure>;
}

impl<T: serde::Serialize> IntoOutput for T {
    fn into_output(self) -> Result<CallToolResult, Failure> {
        let json = serde_json::to_string(&self).map_err(|e| Failure::Internal(Box::new(e)))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(json)]))
    }
}

impl IntoOutput for Response {
    fn into_output(self) -> Result<CallToolResult, Failure> {
        Ok(self.0)
    }
}

/// One `tools/call` as a tool receives it: the arguments, and what the server puts around the
/// handler (limits, middleware), if it runs under one.
///
/// ```
/// let call = mcp_fusion::Call::new(serde_json::json!({"action": "list"}).as_object().cloned());
/// # let _ = call;
/// ```
#[derive(Debug, Default)]
pub struct Call {
    arguments: Option<Map<String, Value>>,
    pipeline: Option<Arc<Pipeline>>,
    extensions: Extensions,
}

impl Call {
    /// A call with these arguments and nothing around the handler.
    pub fn new(arguments: Option<Map<String, Value>>) -> Self {
        Call {
            arguments,
            pipeline: None,
            extensions: Extensions::new(),
        }
    }

    pub(crate) fn with_pipeline(mut self, pipeline: Arc<Pipeline>, extensions: Extensions) -> Self {
        self.pipeline = Some(pipeline);
        self.extensions = extensions;
        self
    }
}

/// Runs one call: routing → validation → deprecation warning → rate limit → concurrency →
/// middleware → handler, the last two under the action's deadline. `handler` gets the action's
/// index, its arguments (discriminator removed, validated) and its context.
pub async fn dispatch<'a, H>(def: &'a ToolDef, call: Call, handler: H) -> CallToolResult
where
    H: FnOnce(usize, Value, Context) -> BoxFuture<'a, Result<CallToolResult, Failure>> + Send + 'a,
{
    let Call {
        arguments,
        pipeline,
        extensions,
    } = call;
    let mut args = arguments.unwrap_or_default();
    let index = match def.discriminator() {
        None => 0,
        Some(field) => match def.router().route_or_render(discriminator(&args, field)) {
            Ok(index) => {
                // `shift_remove` keeps the order the other keys were sent in (ERRORS.md §5 orders by it).
                args.shift_remove(field);
                index
            }
            Err(text) => return envelope(removed_action(def, &args, field, text, &pipeline), true),
        },
    };
    let expose = pipeline.as_ref().is_some_and(|p| p.expose_causes);
    let Some(action) = def.actions().get(index) else {
        return internal(
            def.name(),
            "router",
            &"the router chose an action that does not exist",
            expose,
        );
    };
    let args = Value::Object(args);
    match action.compiled_schema() {
        Ok(schema) => {
            if let Err(invalid) = schema.validate(action.qualified(), &args) {
                return refused(invalid, pipeline.as_deref());
            }
        }
        Err(broken) => return internal(def.name(), action.qualified(), broken, expose),
    }
    let deprecation = action.deprecation().map(|d| {
        ToolError::deprecated(
            action.qualified(),
            d.note.as_deref(),
            d.replacement.as_deref(),
        )
    });

    let context = Context::new(action.qualified_shared());
    let warnings = context.clone();
    let outcome = match pipeline.as_deref() {
        None => CatchUnwind(handler(index, args, context)).await,
        Some(pipeline) => {
            let info = CallInfo {
                tool: def.name().to_owned(),
                action: action.qualified().to_owned(),
                arguments: if pipeline.middleware.is_empty() {
                    Value::Null
                } else {
                    args.clone()
                },
                extensions,
            };
            if let Some(Err(limited)) = pipeline.rate.as_ref().map(|rate| rate.check(&info)) {
                return limited.into();
            }
            // The tool's slot first, then the action's own; held until the handler is done.
            let limits = [
                pipeline.slots.as_ref(),
                pipeline.action_slots.get(index).and_then(Option::as_ref),
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
            let next = Next::new(
                &pipeline.middleware,
                &info,
                Box::new(move || handler(index, args, context)),
            );
            let run = next.run();
            match action.timeout_duration() {
                None => CatchUnwind(run).await,
                Some(deadline) => match tokio::time::timeout(deadline, CatchUnwind(run)).await {
                    Ok(outcome) => outcome,
                    // The handler's future is dropped here, cancelling it.
                    Err(_) => return ToolError::timeout(action.qualified(), deadline).into(),
                },
            }
        }
    };
    let result = match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(Failure::Tool(err))) => return err.into(),
        Ok(Err(Failure::Invalid(invalid))) => return refused(invalid, pipeline.as_deref()),
        Ok(Err(Failure::Internal(cause))) => {
            return internal(def.name(), action.qualified(), &CauseChain(&*cause), expose);
        }
        Err(panic) => {
            return internal(def.name(), action.qualified(), &PanicMessage(panic), expose);
        }
    };
    deprecation
        .into_iter()
        .chain(warnings.take_warnings())
        .fold(result, |result, w| with_warning(result, &w))
}

/// The discriminator's value. Arguments are mostly a few keys: comparing them is cheaper than
/// hashing the name.
fn discriminator<'a>(args: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    if args.len() <= 8 {
        args.iter()
            .find(|(key, _)| *key == field)
            .map(|(_, value)| value)
    } else {
        args.get(field)
    }
}

/// UNKNOWN_ACTION for an action the lockfile has and the running contract removed carries
/// that action's changes (ERRORS.md §4); every other routing failure stays as it is.
fn removed_action(
    def: &ToolDef,
    args: &Map<String, Value>,
    field: &str,
    text: String,
    pipeline: &Option<Arc<Pipeline>>,
) -> String {
    let notes = pipeline.as_ref().and_then(|p| p.contract.as_ref());
    let sent = discriminator(args, field).and_then(Value::as_str);
    let (Some(notes), Some(sent)) = (notes, sent) else {
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

/// A validation error, with what changed in the action's contract since the lockfile when
/// the server was started with one (ERRORS.md §7).
fn refused(invalid: ValidationError, pipeline: Option<&Pipeline>) -> CallToolResult {
    match pipeline.and_then(|p| p.contract.as_ref()) {
        None => invalid.into(),
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

/// INTERNAL_ERROR: the cause goes to the log under a fresh incident id, and to the model only
/// when the server is configured to expose causes.
fn internal(
    tool: &str,
    qualified_action: &str,
    cause: &dyn fmt::Display,
    expose: bool,
) -> CallToolResult {
    let incident = new_incident_id();
    tracing::error!(tool, action = qualified_action, incident = %incident, cause = %cause, "tool call failed unexpectedly");
    let cause = expose.then(|| cause.to_string());
    ToolError::internal(qualified_action, &incident, cause.as_deref()).into()
}

/// A boxed future whose panic comes back as an `Err` instead of unwinding further.
struct CatchUnwind<'a, T>(BoxFuture<'a, T>);

impl<T> Future for CatchUnwind<'_, T> {
    type Output = Result<T, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        // The future is not polled again after a panic: `Ready(Err)` ends it.
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// An error and its sources, outermost first: `query failed: connection refused`.
struct CauseChain<'a>(&'a (dyn StdError + 'static));

impl fmt::Display for CauseChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// A panic payload as text, for the log.
struct PanicMessage(Box<dyn Any + Send>);

impl fmt::Display for PanicMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self
            .0
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| self.0.downcast_ref::<String>().map(String::as_str));
        write!(f, "panic: {}", text.unwrap_or("(no message)"))
    }
}
