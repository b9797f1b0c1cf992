//! What the code `#[tool]` and `#[derive(ToolErrors)]` generate calls. Not public API: it can
//! change in any release, and nothing here is meant to be written by hand.

use std::cell::Cell;
use std::error::Error as StdError;
use std::fmt::Display;

pub use std::boxed::Box;
pub use std::string::{String, ToString};
pub use std::sync::OnceLock;
pub use std::time::Duration;
pub use std::vec::Vec;
pub use std::{concat, format, stringify};

pub use core;
pub use rmcp::model::{CallToolResult, ElicitationSchema};
pub use serde_json::{Map, Value};

pub use crate::client::{FromEnvelope, ParsedError};
pub use crate::tool::TaskSupport;
pub use crate::tool::{
    ActionDef, ActionDefBuilder, ActionRef, Ask, BoxFuture, Choice, Context, ElicitChoice,
    ElicitForm, Exposition, Failure, IntoOutput, Tool, ToolDef,
};
pub use crate::{ErrorCode, Severity, ToolError};

/// Starts an error of a `ToolErrors` variant.
pub fn error(code: ErrorCode, message: impl Into<crate::envelope::Text>) -> ToolError {
    ToolError::new(code, message)
}

/// What `#[derive(ElicitForm)]` and `#[derive(ElicitChoice)]` lay a form out with: each field's
/// type is required to be a [`FormField`](form::FormField) by [`form::field`], where it is
/// written.
pub mod form {
    pub use crate::tool::form::{
        Answer, ChoicesField, Field, FloatField, Form, FormField, Format, NumberField, Preset,
        Shape, TextField, choice_preset, choice_shape, field,
    };
}

/// What `#[tool_error(from_envelope)]` reads an envelope with.
pub mod reverse {
    pub use crate::client::reverse::{Piece, detail, is, matching, read};
}

/// The arguments of an action: decoded from JSON, described by a JSON Schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the arguments of an action",
    label = "the arguments of this action",
    note = "derive `serde::Deserialize` and `schemars::JsonSchema` on it"
)]
pub trait ActionArgs: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static {}

impl<T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static> ActionArgs for T {}

/// The success type of an action that declares its output (`output_schema`): its schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no JSON Schema to list as the action's output",
    label = "`output_schema` lists this type's JSON Schema",
    note = "derive `schemars::JsonSchema` on it, or leave `output_schema` off (a `Response` is text, not data)"
)]
pub trait OutputSchema: schemars::JsonSchema {}

impl<T: schemars::JsonSchema> OutputSchema for T {}

/// The success value of an action that declares its output: sent as structured content.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as the action's structured content",
    label = "returned as the action's success value",
    note = "derive `serde::Serialize` on it, or leave `output_schema` off (a `Response` is text, not data)"
)]
pub trait StructuredOutput: serde::Serialize {}

impl<T: serde::Serialize> StructuredOutput for T {}

/// The definition of an action whose success value is `T`, declared as its output.
pub fn with_output<T: OutputSchema>(action: ActionDefBuilder) -> ActionDefBuilder {
    action.output::<T>()
}

/// The result of an action that declares its output: its value as text and as structured
/// content.
pub fn structured_output<T: StructuredOutput>(value: T) -> Result<CallToolResult, Failure> {
    crate::tool::Response::structured(&value)
        .map(crate::tool::Response::into_result)
        .map_err(|e| Failure::Internal(Box::new(e)))
}

/// The definition of an action whose arguments are `T`: the one place the arguments' traits
/// are required, spanned at the user's type, so that a type that lacks them is reported once.
pub fn action_def<T: ActionArgs>(name: &'static str) -> ActionDefBuilder {
    ActionDef::new::<T>(name)
}

/// Decodes the arguments of the tool's action `index` into its type, through the definition's
/// own decoder (no trait bound here: see [`action_def`]).
pub fn decode_args<T: 'static>(def: &ToolDef, index: usize, args: &Value) -> Result<T, Failure> {
    match def.actions().get(index) {
        Some(action) => action.decode(args),
        None => Err(Failure::Internal("no action has this index".into())),
    }
}

/// The context parameter of an action.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the context of an action",
    label = "the second parameter of an action is its context",
    note = "take `f: mcp_fusion::Context`, or leave the parameter out"
)]
pub trait FromContext {
    /// Makes the parameter from the call's context.
    fn from_context(context: Context) -> Self;
}

impl FromContext for Context {
    fn from_context(context: Context) -> Self {
        context
    }
}

/// What an action returns.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid return type for an action",
    label = "an action returns `Result<T, E>`",
    note = "`T` is serialized to JSON; `E` is a `ToolError`, a `#[derive(ToolErrors)]` enum, or any other error (sent as INTERNAL_ERROR)"
)]
pub trait ActionReturn {
    /// The success value.
    type Ok;
    /// The error.
    type Err;
    /// As a `Result`.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> ActionReturn for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// An error on its way to becoming a [`Failure`]: the generated code calls
/// `(&&Wrap::new(e)).mcp_fusion_failure()`, which picks [`ViaToolError`] when the error converts
/// into a `ToolError` (sent intact), [`ViaOtherError`] when it is any other sendable error
/// (INTERNAL_ERROR), and [`ViaUnsupported`] otherwise, whose bound says what an action's error
/// can be in the compiler's error.
pub struct Wrap<E>(Unsupported<E>);

/// The error of a [`Wrap`], which the last choice sees through `Deref`.
pub struct Unsupported<E>(Cell<Option<E>>);

// The error is taken out once (a `Cell`), so neither shows it.
impl<E> std::fmt::Debug for Wrap<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wrap").finish_non_exhaustive()
    }
}

impl<E> std::fmt::Debug for Unsupported<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unsupported").finish_non_exhaustive()
    }
}

impl<E> Wrap<E> {
    /// Wraps an error.
    pub fn new(err: E) -> Self {
        Wrap(Unsupported(Cell::new(Some(err))))
    }

    fn take(&self) -> E {
        (self.0)
            .0
            .take()
            .expect("the generated code converts each error once")
    }
}

impl<E> std::ops::Deref for Wrap<E> {
    type Target = Unsupported<E>;

    fn deref(&self) -> &Unsupported<E> {
        &self.0
    }
}

/// Errors that are tool errors travel intact.
pub trait ViaToolError {
    /// The failure.
    fn mcp_fusion_failure(&self) -> Failure;
}

impl<E: Into<crate::ToolError>> ViaToolError for &Wrap<E> {
    fn mcp_fusion_failure(&self) -> Failure {
        Failure::Tool(self.take().into())
    }
}

/// Any other error becomes INTERNAL_ERROR, its cause kept for the log.
pub trait ViaOtherError {
    /// The failure.
    fn mcp_fusion_failure(&self) -> Failure;
}

impl<E: Into<Box<dyn StdError + Send + Sync>>> ViaOtherError for Wrap<E> {
    fn mcp_fusion_failure(&self) -> Failure {
        Failure::Internal(self.take().into())
    }
}

/// What an action's error type must be; implemented by nothing, so that an error type that is
/// neither of the above is reported with this explanation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error of an action",
    label = "this action's error type",
    note = "an action returns `Err(..)` of a `ToolError`, of an enum with `#[derive(ToolErrors)]`, or of any error that is `Send + Sync + 'static` (`Box<dyn Error + Send + Sync>`, `anyhow::Error`, `String`), which the model sees as INTERNAL_ERROR",
    note = "`Box<dyn Error>` is not `Send + Sync`: write `Box<dyn std::error::Error + Send + Sync>`"
)]
pub trait ActionError {}

/// The last choice: no conversion, only the compiler's error from [`ActionError`].
pub trait ViaUnsupported<E> {
    /// Never runs: the bound cannot hold.
    fn mcp_fusion_failure(&self) -> Failure
    where
        E: ActionError;
}

impl<E> ViaUnsupported<E> for Unsupported<E> {
    fn mcp_fusion_failure(&self) -> Failure
    where
        E: ActionError,
    {
        Failure::Internal("an error type no conversion applies to".into())
    }
}

/// An error as `&dyn Error`, for `Error::source` of a `#[derive(ToolErrors)]` enum: a sized
/// error, or the `dyn Error` inside a `Box`.
pub trait AsDynError {
    /// The error as a trait object.
    fn as_dyn_error(&self) -> &(dyn StdError + 'static);
}

impl<T: StdError + 'static> AsDynError for T {
    fn as_dyn_error(&self) -> &(dyn StdError + 'static) {
        self
    }
}

impl AsDynError for dyn StdError + 'static {
    fn as_dyn_error(&self) -> &(dyn StdError + 'static) {
        self
    }
}

impl AsDynError for dyn StdError + Send + 'static {
    fn as_dyn_error(&self) -> &(dyn StdError + 'static) {
        self
    }
}

impl AsDynError for dyn StdError + Send + Sync + 'static {
    fn as_dyn_error(&self) -> &(dyn StdError + 'static) {
        self
    }
}

/// A detail's value, from a field.
pub fn detail_value<T: Display + ?Sized>(value: &T) -> String {
    value.to_string()
}

/// A description from doc comments: each line without the one space `///` leaves, the whole
/// trimmed.
pub fn docs(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    lines.join("\n").trim().to_owned()
}
