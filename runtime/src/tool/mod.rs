//! What a tool is: its definition (name, actions, schemas, annotations, limits) and the trait
//! that `#[tool]` implements. Everything here can also be written by hand.

mod action;
mod answer;
mod as_text;
mod ask_user;
mod call;
mod caller;
mod check;
mod client;
mod context;
mod deadline;
mod decode;
mod definition;
pub(crate) mod form;
mod invoke;
mod listing;
mod schema;
mod user_field;

pub use action::{
    ActionDef, ActionDefBuilder, ActionRef, Annotations, Concurrency, Deprecation, RateLimit,
};
pub use answer::Answer;
pub use call::TraceContext;
pub(crate) use call::{Progress, Reporter, new_span_id};
pub use caller::Caller;
pub use client::{Ask, ClientError, ElicitForm, Elicited, LogLevel, Root, Sampled, Sampling};
pub(crate) use client::{ClientAccess, ClientLink, ClientRequestKind};
pub use context::Context;
pub(crate) use context::Handoffs;
pub(crate) use deadline::Deadline;
pub use definition::{Exposition, SingleToolDefBuilder, ToolDef, ToolDefBuilder};
pub use form::{Choice, ElicitChoice};
#[cfg(feature = "gateway")]
pub(crate) use invoke::settle;
pub(crate) use invoke::{
    Callable, CatchUnwind, Outcome, PanicMessage, Rejection, Route, ask_user, catching, finish,
    prepare,
};
pub use invoke::{Failure, IntoOutput, Response};
pub use listing::SCOPES_KEY;
pub(crate) use listing::unknown_tool;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

/// A boxed, sendable future, as [`Tool::call`] returns.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
        Box::pin(invoke::in_process(self, arguments))
    }
}
