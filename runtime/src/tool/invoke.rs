//! Running one call of a tool: the shared `prepare` step (routing → validation → deprecation
//! warning, ERRORS.md §4), then the action, its panic caught, every failure turned into its
//! envelope. [`Tool::call`] runs exactly this in process; a server inserts its limits and
//! middleware between `prepare` and the action.

use std::any::Any;
use std::error::Error as StdError;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use super::failure::Failure;
use super::future::BoxFuture;
use super::{ActionDef, Answer, ClientAccess, Context, ToolDef};
use crate::ToolError;
use crate::call_result::with_warning;
use crate::envelope::{Envelope, new_incident_id};
use crate::validate::ValidationError;

/// A successful result other than serialized data: text, or a whole `CallToolResult`.
///
/// ```
/// let plain = mcp_fusion::tools::Response::text("3 invoices exported.");
/// assert_eq!(plain.into_result().is_error, Some(false));
/// ```
#[derive(Debug, Clone)]
pub struct Response(CallToolResult);

impl Response {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Response(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// A JSON result for an action that declares its output
    /// ([`ActionDefBuilder::output`](crate::tool::ActionDefBuilder::output)): the value as a text block, and as
    /// `structuredContent` (MCP 2026-07-28: any JSON value, described by the tool's
    /// `outputSchema`). A value whose JSON is a string is its text as it is, not JSON-encoded.
    ///
    /// ```
    /// let result = mcp_fusion::tools::Response::structured(&serde_json::json!({"id": "inv_1"})).unwrap().into_result();
    /// assert_eq!(result.structured_content, Some(serde_json::json!({"id": "inv_1"})));
    /// assert_eq!(result.content[0].as_text().unwrap().text, r#"{"id":"inv_1"}"#);
    /// let text = mcp_fusion::tools::Response::structured("Deleted note_1").unwrap().into_result();
    /// assert_eq!(text.content[0].as_text().unwrap().text, "Deleted note_1");
    /// ```
    pub fn structured<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        let value = serde_json::to_value(value)?;
        let text = match &value {
            Value::String(text) => text.clone(),
            other => serde_json::to_string(other)?,
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(value);
        Ok(Response(result))
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

/// What an action's success value becomes: its JSON as one text block, except that a value
/// whose JSON is a string (`String`, `&str`, `Cow<str>`, ...) is that string's text, as it is.
///
/// ```
/// use mcp_fusion::tools::IntoOutput;
/// let text = |result: mcp_fusion::rmcp::model::CallToolResult| result.content[0].as_text().unwrap().text.clone();
/// assert_eq!(text(String::from("Deleted note_1").into_output().unwrap()), "Deleted note_1");
/// assert_eq!(text(vec!["a", "b"].into_output().unwrap()), r#"["a","b"]"#);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the success value of an action",
    label = "returned as the action's success value",
    note = "an action's `Ok` value is serialized to JSON (it must implement `serde::Serialize`) or is a `mcp_fusion::tools::Response`",
    note = "errors, `ToolError` included, are returned as `Err(..)`"
)]
pub trait IntoOutput {
    /// The result, or why it could not be made.
    fn into_output(self) -> Result<CallToolResult, Failure>;
}

impl<T: serde::Serialize> IntoOutput for T {
    fn into_output(self) -> Result<CallToolResult, Failure> {
        let text = match super::as_text::as_text(&self) {
            Some(text) => text,
            None => serde_json::to_string(&self).map_err(|e| Failure::Internal(Box::new(e)))?,
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

impl IntoOutput for Response {
    fn into_output(self) -> Result<CallToolResult, Failure> {
        Ok(self.0)
    }
}

/// A call that passed routing, validation and the deprecation check: what runs the action.
pub(crate) struct Prepared<'d> {
    /// The action's index in its tool's definition.
    pub(crate) index: usize,
    pub(crate) action: &'d ActionDef,
    /// The arguments, discriminator removed, validated.
    pub(crate) args: Value,
    /// DEPRECATED, appended to a successful result.
    pub(crate) deprecation: Option<ToolError>,
}

/// Why a call never reached its action.
pub(crate) enum Rejection {
    /// MISSING_DISCRIMINATOR or UNKNOWN_ACTION; the arguments as sent.
    Route {
        envelope: Box<Envelope>,
        arguments: Map<String, Value>,
    },
    /// The arguments do not satisfy the action's schema.
    Invalid(ValidationError),
    /// The definition itself is broken (a schema that does not compile): INTERNAL_ERROR.
    Broken(Box<Answer>),
    /// A field only the user can give was left out, and they did not give it (or could not be
    /// asked): MISSING_REQUIRED_FIELD, or what the user or client did instead.
    Unanswered(ToolError),
}

/// How a call names its action: by the discriminator of a grouped tool (or a single-action
/// tool's only action), or by the MCP tool name of one action of a flat tool.
#[derive(Clone, Copy)]
pub(crate) enum Route {
    Discriminator,
    Flat(usize),
}

/// Routing → validation → deprecation (ERRORS.md §4, the checks before any limit). Absent
/// arguments are `{}`.
pub(crate) fn prepare(
    def: &ToolDef,
    arguments: Option<Map<String, Value>>,
    route: Route,
) -> Result<Prepared<'_>, Rejection> {
    let mut args = arguments.unwrap_or_default();
    let index = match (route, def.discriminator()) {
        (Route::Flat(index), _) => index,
        (Route::Discriminator, None) => 0,
        (Route::Discriminator, Some(field)) => {
            match def.router().route_or_render(&args) {
                Ok(index) => {
                    // The other keys keep the order they were sent in (ERRORS.md §5 orders by
                    // it). A few keys are compared rather than the name hashed, as above.
                    if args.len() <= 8 {
                        args.retain(|key, _| key != field);
                    } else {
                        args.shift_remove(field);
                    }
                    index
                }
                Err(envelope) => {
                    return Err(Rejection::Route {
                        envelope: Box::new(envelope),
                        arguments: args,
                    });
                }
            }
        }
    };
    let Some(action) = def.actions().get(index) else {
        let broken = "the router chose an action that does not exist";
        let result = internal(def.name(), "router", &broken, false, None);
        return Err(Rejection::Broken(Box::new(result)));
    };
    let args = Value::Object(args);
    if let Some(field) = super::ask_user::given_by_model(action, &args) {
        return Err(Rejection::Unanswered(ToolError::user_only_field(field)));
    }
    match action.compiled_schema() {
        Ok(schema) => schema
            .validate(action.qualified(), &args)
            .map_err(Rejection::Invalid)?,
        Err(broken) => {
            let result = internal(def.name(), action.qualified(), broken, false, None);
            return Err(Rejection::Broken(Box::new(result)));
        }
    }
    let deprecation = action.deprecation().map(|d| {
        let replacement = match route {
            Route::Flat(_) => d
                .replacement
                .as_deref()
                .map(|r| Callable::Flat(def).name(r)),
            Route::Discriminator => d.replacement.clone(),
        };
        ToolError::deprecated(
            action.qualified(),
            d.note.as_deref(),
            replacement.as_deref(),
        )
    });
    Ok(Prepared {
        index,
        action,
        args,
        deprecation,
    })
}

/// Asks the user for the fields only they can give that a call of `action` left out of its
/// validated `args` (`ask_user`), through `client`, then validates the arguments again with
/// their answers: what the user gives is checked as the model's arguments are. Nothing is
/// asked of a call that gave them all.
pub(crate) async fn ask_user(
    def: &ToolDef,
    action: &ActionDef,
    args: &mut Value,
    client: Option<&ClientAccess>,
) -> Result<(), Rejection> {
    for &ask in action.needs() {
        if !client.is_some_and(|client| client.can(ask)) {
            let refused = super::AskError::NotSupported { ask };
            return Err(Rejection::Unanswered(refused.into()));
        }
    }
    let missing = super::ask_user::missing(action, args);
    if missing.is_empty() {
        return Ok(());
    }
    // Boxed: the asking (a form, its answer) is rare, and its future would otherwise make
    // every call's larger (a call's future past 1 KiB leaves glibc's per-thread cache).
    Box::pin(super::ask_user::ask(action, &missing, args, client))
        .await
        .map_err(Rejection::Unanswered)?;
    match action.compiled_schema() {
        Ok(schema) => schema
            .validate(action.qualified(), args)
            .map_err(Rejection::Invalid),
        Err(broken) => {
            let result = internal(def.name(), action.qualified(), broken, false, None);
            Err(Rejection::Broken(Box::new(result)))
        }
    }
}

/// What running an action gave: its result, its failure, or its panic.
pub(crate) type Outcome = Result<Result<CallToolResult, Failure>, Box<dyn Any + Send>>;

/// Makes the action's future and runs it, catching a panic in either: a hand-written
/// [`Tool::invoke`] may panic before it returns its future.
pub(crate) async fn catching<'a>(
    make: impl FnOnce() -> BoxFuture<'a, Result<CallToolResult, Failure>>,
) -> Outcome {
    match catch_unwind(AssertUnwindSafe(make)) {
        Ok(future) => CatchUnwind(future).await,
        Err(panic) => Err(panic),
    }
}

/// The result of a call whose action ran: failures become their envelopes (INTERNAL_ERROR with
/// an incident id, the cause exposed only when `expose`), arguments the action's type refused
/// go through `invalid`, and a success carries the deprecation and the handler's warnings.
#[allow(clippy::too_many_arguments)] // each is one fact about the call, named at the call site
pub(crate) fn finish(
    def: &ToolDef,
    action: &ActionDef,
    outcome: Outcome,
    deprecation: Option<ToolError>,
    context: &Context,
    expose: bool,
    callable: Callable<'_>,
    invalid: impl FnOnce(ValidationError) -> Answer,
) -> Answer {
    let qualified = action.qualified();
    let result = match outcome {
        Ok(Ok(mut result)) => {
            // Structured content goes with the output schema a tool lists: a flat tool's, or a
            // single action's; a grouped tool lists none.
            let listed = matches!(callable, Callable::Flat(_)) || def.discriminator().is_none();
            if action.output.is_some() && !listed {
                result.structured_content = None;
            }
            result
        }
        Ok(Err(Failure::Tool(err))) => match err.unexpected_cause() {
            Some(cause) => {
                let incident = context.incident();
                return internal(def.name(), qualified, &CauseChain(cause), expose, incident);
            }
            None => return callable.apply(err).into(),
        },
        Ok(Err(Failure::Invalid(refused))) => return invalid(refused),
        // A handler that answers with a JSON-RPC error (rmcp's `ErrorData`) answers a protocol
        // error, as an rmcp handler would.
        Ok(Err(Failure::Internal(cause))) => {
            if let Some(error) = cause.downcast_ref::<rmcp::ErrorData>() {
                return Answer::protocol(error.clone());
            }
            let incident = context.incident();
            return internal(
                def.name(),
                qualified,
                &CauseChain(&*cause),
                expose,
                incident,
            );
        }
        Err(panic) => {
            let incident = context.incident();
            return internal(
                def.name(),
                qualified,
                &PanicMessage(panic),
                expose,
                incident,
            );
        }
    };
    deprecation
        .into_iter()
        .chain(
            context
                .take_warnings()
                .into_iter()
                .map(|w| callable.apply(w)),
        )
        .fold(result, |result, w| with_warning(result, &w))
        .into()
}

/// The answer of a call the server forwards (a gateway's) once the middleware around it ran:
/// its result, or its failure as an envelope naming the call by `name`.
#[cfg(feature = "gateway")]
pub(crate) fn settle(name: &str, outcome: Outcome, expose: bool) -> Answer {
    match outcome {
        Ok(Ok(result)) => result.into(),
        Ok(Err(Failure::Tool(err))) => match err.unexpected_cause() {
            Some(cause) => internal(name, name, &CauseChain(cause), expose, None),
            None => err.into(),
        },
        Ok(Err(Failure::Invalid(refused))) => (&refused).into(),
        Ok(Err(Failure::Internal(cause))) => {
            internal(name, name, &CauseChain(&*cause), expose, None)
        }
        Err(panic) => internal(name, name, &PanicMessage(panic), expose, None),
    }
}

/// What envelopes call the tool's actions: their qualified names, or (flat exposition) the MCP
/// tool names the model calls them by.
#[derive(Clone, Copy)]
pub(crate) enum Callable<'a> {
    Qualified,
    Flat(&'a ToolDef),
}

impl Callable<'_> {
    /// The callable name of a qualified action of this tool; other names as they are.
    pub(crate) fn name(self, qualified: &str) -> String {
        match self {
            Callable::Flat(def) => def
                .actions()
                .iter()
                .find(|a| a.qualified() == qualified)
                .map_or_else(|| qualified.to_owned(), |a| def.flat_name(a)),
            Callable::Qualified => qualified.to_owned(),
        }
    }

    fn apply(self, err: ToolError) -> ToolError {
        match self {
            Callable::Qualified => err,
            Callable::Flat(def) => err.rename_actions(|name| {
                def.actions()
                    .iter()
                    .find(|a| a.qualified() == name)
                    .map(|a| def.flat_name(a))
            }),
        }
    }
}

/// A rejected call's envelope, as in process (no lockfile).
pub(crate) fn reject(rejection: Rejection) -> Answer {
    match rejection {
        Rejection::Route { envelope, .. } => Answer::envelope(*envelope),
        Rejection::Invalid(invalid) => Answer::envelope(invalid.into_envelope()),
        Rejection::Broken(result) => *result,
        Rejection::Unanswered(refused) => refused.into(),
    }
}

/// [`Tool::call`]: prepare → the action → panic catch → envelope, nothing around the action.
pub(crate) async fn in_process<T: Tool + ?Sized>(
    tool: &T,
    arguments: Option<Map<String, Value>>,
) -> Answer {
    let def = tool.definition();
    let problems = def.own_problems();
    assert!(
        problems.is_empty(),
        "tool \"{}\" cannot be served as it describes itself:\n- {}",
        def.name(),
        problems.join("\n- ")
    );
    let mut prepared = match prepare(def, arguments, Route::Discriminator) {
        Ok(prepared) => prepared,
        Err(rejection) => return reject(rejection),
    };
    // No client to ask: a field only the user can give that the call left out is missing.
    if let Err(rejection) = ask_user(def, prepared.action, &mut prepared.args, None).await {
        return reject(rejection);
    }
    let context = Context::new(prepared.action.qualified_shared());
    let (index, args, handler_context) = (prepared.index, prepared.args, context.clone());
    let outcome = catching(|| tool.invoke(index, args, handler_context)).await;
    finish(
        def,
        prepared.action,
        outcome,
        prepared.deprecation,
        &context,
        false,
        Callable::Qualified,
        |invalid| Answer::envelope(invalid.into_envelope()),
    )
}

/// INTERNAL_ERROR: the cause goes to the log under a fresh incident id, and to the model only
/// when the server is configured to expose causes.
fn internal(
    tool: &str,
    qualified_action: &str,
    cause: &dyn fmt::Display,
    expose: bool,
    incident: Option<String>,
) -> Answer {
    let incident = incident.unwrap_or_else(new_incident_id);
    tracing::error!(tool, action = qualified_action, incident = %incident, cause = %cause, "tool call failed unexpectedly");
    let cause = expose.then(|| cause.to_string());
    ToolError::internal(qualified_action, &incident, cause.as_deref()).into()
}

/// A boxed future whose panic comes back as an `Err` instead of unwinding further.
pub(crate) struct CatchUnwind<'a, T>(pub(crate) BoxFuture<'a, T>);

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
pub(crate) struct PanicMessage(pub(crate) Box<dyn Any + Send>);

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

/// A tool an MCP server can list and call: its definition, and a way to run each action.
/// `#[tool]` implements it; it can be written by hand too. Routing, validation, the deprecation
/// warning, panic catching and the envelopes are not the tool's job: [`Tool::call`] does them
/// in process, and a [`Server`](crate::Server) does them with its limits and middleware around
/// [`Tool::invoke`], for every registered tool alike.
///
/// ```
/// use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
/// use mcp_fusion::{Context, Tool};
/// use mcp_fusion::tools::{ActionDef, BoxFuture, Failure, ToolDef};
/// use serde_json::Value;
///
/// struct Ping(ToolDef);
///
/// impl Tool for Ping {
///     fn definition(&self) -> &ToolDef {
///         &self.0
///     }
///
///     fn invoke(&self, _action: usize, _args: Value, _cx: Context) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
///         Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("pong")])) })
///     }
/// }
///
/// let ping = Ping(ToolDef::single(ActionDef::without_arguments("ping").description("Pings.")).build());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let result = ping.call(None).await;
/// assert_eq!(result.text(), "pong");
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an MCP tool",
    label = "not a tool",
    note = "put `#[mcp_fusion::tool]` on an `impl {Self}` block of async actions, or on an async fn"
)]
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition: name, actions, schemas. Built once.
    fn definition(&self) -> &ToolDef;

    /// Runs the action at `index` of [`Tool::definition`]'s actions with its arguments
    /// (discriminator removed, already validated against the action's schema) and the call's
    /// context. Decoding the arguments into the action's type is the tool's, where the types
    /// are ([`ActionDef::decode`]).
    fn invoke(
        &self,
        index: usize,
        args: Value,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResult, Failure>>;

    /// Runs one call in process: routing, validation, the deprecation warning, the action with
    /// its panic caught, and every failure as its envelope; no limits or middleware.
    ///
    /// # Panics
    ///
    /// When the tool cannot be served as it describes itself (no description, a field named
    /// like the discriminator, arguments that are no object, a schema that does not compile):
    /// the message names each problem and its fix, as
    /// [`ServerBuilder::build`](crate::server::ServerBuilder::build) reports them.
    fn call(&self, arguments: Option<Map<String, Value>>) -> BoxFuture<'_, Answer> {
        Box::pin(in_process(self, arguments))
    }
}

/// A tool shared with the rest of the program: the server calls it through the `Arc`, and the
/// program keeps its own handle on the same value, its state included (a store, a counter, a
/// cache the user's own `ServerHandler` reads too). Works for `Arc<dyn Tool>` as well.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use mcp_fusion::{Server, ToolError, tool};
///
/// #[derive(Default)]
/// struct Notes {
///     written: AtomicUsize,
/// }
///
/// /// Notes.
/// #[tool]
/// impl Notes {
///     /// Writes a note.
///     async fn write(&self) -> Result<&'static str, ToolError> {
///         self.written.fetch_add(1, Ordering::Relaxed);
///         Ok("written")
///     }
/// }
///
/// let notes = Arc::new(Notes::default());
/// let server = Server::builder("notes", "1").tool(Arc::clone(&notes)).build()?;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = mcp_fusion::rmcp::model::CallToolRequestParams::new("notes")
///     .with_arguments(serde_json::json!({"action": "write"}).as_object().unwrap().clone());
/// server.call(call).await;
/// # });
/// assert_eq!(notes.written.load(Ordering::Relaxed), 1);
/// # Ok::<(), mcp_fusion::server::BuildError>(())
/// ```
impl<T: Tool + ?Sized> Tool for std::sync::Arc<T> {
    fn definition(&self) -> &ToolDef {
        (**self).definition()
    }

    fn invoke(
        &self,
        index: usize,
        args: Value,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
        (**self).invoke(index, args, context)
    }

    fn call(&self, arguments: Option<Map<String, Value>>) -> BoxFuture<'_, Answer> {
        (**self).call(arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ActionDef;
    use rmcp::model::ContentBlock;

    struct Ping(ToolDef);

    impl Tool for Ping {
        fn definition(&self) -> &ToolDef {
            &self.0
        }

        fn invoke(
            &self,
            _: usize,
            _: Value,
            _: Context,
        ) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
            Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("pong")])) })
        }
    }

    /// A call in process is one box (`Tool::call`) no larger than glibc keeps in its
    /// per-thread cache of small blocks (1,032 bytes): past it, every call's box takes
    /// `malloc`'s slow path. The asking of the user, inline, made it 1,176 bytes.
    #[test]
    fn a_call_in_process_is_a_small_future() {
        let ping = Ping(ToolDef::single(ActionDef::without_arguments("ping")).build());
        let size = std::mem::size_of_val(&in_process(&ping, None));
        assert!(size <= 1032, "{size} bytes");
    }
}
