//! [`ToolError`]: one `<tool_error>` envelope, its own fluent builder.

use std::fmt;
use std::sync::Arc;

use super::actions::{ActionList, Actions};
use super::retry_after::RetryAfter;
use super::text::Text;
use crate::{ErrorCode, Severity};

/// A failed (or, as a warning, guided) tool call: one `<tool_error>` envelope.
///
/// `ToolError` is its own builder: start with [`ToolError::new`], chain what applies, and return it.
/// There is no `.build()`. A handler returns it as its error value (`Err(..)`, `?`, or
/// `.into()` straight into a `Result`); it has no `Serialize` impl, so it can never be sent as
/// success data by mistake.
///
/// Each part is read back by a getter named for its element: [`code`](ToolError::code),
/// [`message`](ToolError::message), [`recovery`](ToolError::recovery),
/// [`available_actions`](ToolError::available_actions). Where a builder word already holds
/// the name (`.severity(..)`, `.details(..)`, `.retry_after(..)`), the getter takes the `get_`
/// form, as `std::process::Command` does beside its own builder methods:
/// [`get_severity`](ToolError::get_severity), [`get_details`](ToolError::get_details),
/// [`get_retry_after`](ToolError::get_retry_after).
///
/// ```
/// use mcp_fusion::{ErrorCode, ToolError};
///
/// fn get_project(id: &str) -> Result<String, mcp_fusion::ToolError> {
///     if id != "proj_1" {
///         return ToolError::new(ErrorCode::NOT_FOUND, format!("Project '{id}' does not exist."))
///             .suggest("Call projects.list first to get valid IDs, then retry.")
///             .actions(["projects.list"])
///             .detail("project_id", id.to_owned())
///             .into();
///     }
///     Ok("Project 1".into())
/// }
///
/// let err = get_project("proj_8f3a2c").unwrap_err();
/// assert_eq!(err.render(), "\
/// <tool_error code=\"NOT_FOUND\" severity=\"error\">
/// <message>Project 'proj_8f3a2c' does not exist.</message>
/// <recovery>Call projects.list first to get valid IDs, then retry.</recovery>
/// <available_actions>
///   <action>projects.list</action>
/// </available_actions>
/// <details>
///   <detail key=\"project_id\">proj_8f3a2c</detail>
/// </details>
/// </tool_error>");
/// assert!(err.is_error());
/// assert_eq!(err.get_details().collect::<Vec<_>>(), [("project_id", "proj_8f3a2c")]);
/// ```
#[derive(Clone, PartialEq, Eq)]
#[must_use = "a ToolError does nothing until it is returned"]
pub struct ToolError(pub(super) Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
pub(super) struct Inner {
    pub(super) code: ErrorCode,
    pub(super) severity: Severity,
    pub(super) message: Text,
    pub(super) recovery: Option<Text>,
    pub(super) actions: Actions,
    pub(super) details: Vec<(Text, Text)>,
    pub(super) retry_after: Option<u32>,
    /// For an unexpected failure: its cause, for the log only.
    pub(super) cause: Option<Cause>,
}

/// The cause of an unexpected failure, compared by identity.
#[derive(Clone)]
pub(super) struct Cause(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl PartialEq for Cause {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cause {}

impl ToolError {
    /// Starts a `<tool_error>` with its code and message; severity `error` until told
    /// otherwise. In a handler, `f.error(..)` does the same.
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// let err = ToolError::new(ErrorCode::NOT_FOUND, "Project not found.");
    /// assert_eq!(err.render(), "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>Project not found.</message>\n</tool_error>");
    /// ```
    pub fn new(code: ErrorCode, message: impl Into<Text>) -> ToolError {
        ToolError(Box::new(Inner {
            code,
            severity: Severity::Error,
            message: message.into(),
            recovery: None,
            actions: Actions::Listed(Vec::new()),
            details: Vec::new(),
            retry_after: None,
            cause: None,
        }))
    }

    /// Sets the recovery hint: what the model should do next. An empty hint is not written.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::CONFLICT, "Already paid.").suggest("Check the status first.");
    /// assert_eq!(err.recovery(), Some("Check the status first."));
    /// ```
    pub fn suggest(mut self, recovery: impl Into<Text>) -> Self {
        let recovery = recovery.into();
        self.0.recovery = (!recovery.is_empty()).then_some(recovery);
        self
    }

    /// Adds available actions, qualified (`billing.list_invoices`), in order. Empty names are
    /// dropped and exact duplicates keep their first place.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::NOT_FOUND, "No invoice.")
    ///     .actions(["billing.list_invoices", "", "billing.list_invoices"]);
    /// assert_eq!(err.available_actions().collect::<Vec<_>>(), ["billing.list_invoices"]);
    /// ```
    pub fn actions<I>(mut self, actions: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Text>,
    {
        let list = self.0.actions.to_mut();
        for action in actions {
            let action = action.into();
            if !action.is_empty() && !list.contains(&action) {
                list.push(action);
            }
        }
        self
    }

    /// Adds one detail. Setting a key again keeps its first position and takes the new value.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::CONFLICT, "Busy.")
    ///     .detail("a", "1").detail("b", "2").detail("a", "3");
    /// assert_eq!(err.get_details().collect::<Vec<_>>(), [("a", "3"), ("b", "2")]);
    /// ```
    pub fn detail(mut self, key: impl Into<Text>, value: impl Into<Text>) -> Self {
        let (key, value) = (key.into(), value.into());
        match self.0.details.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.details.push((key, value)),
        }
        self
    }

    /// Adds several details, in order, with the same rule as [`ToolError::detail`].
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::CONFLICT, "Busy.")
    ///     .details([("invoice_id", "inv_1"), ("status", "paid")]);
    /// assert_eq!(err.get_details().count(), 2);
    /// ```
    pub fn details<I, K, V>(self, details: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<Text>,
        V: Into<Text>,
    {
        details
            .into_iter()
            .fold(self, |err, (k, v)| err.detail(k, v))
    }

    /// Tells the model when to retry. Fractions round up; zero or less writes nothing; the
    /// most is 4294967295 seconds. Takes whole seconds, fractional seconds or a `Duration`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// assert_eq!(ToolError::new(ErrorCode::RATE_LIMITED, "Slow down.").retry_after(1.2).get_retry_after(), Some(2));
    /// assert_eq!(ToolError::new(ErrorCode::RATE_LIMITED, "Slow down.").retry_after(Duration::from_millis(1500)).get_retry_after(), Some(2));
    /// assert_eq!(ToolError::new(ErrorCode::RATE_LIMITED, "Slow down.").retry_after(0).get_retry_after(), None);
    /// ```
    pub fn retry_after(mut self, after: impl RetryAfter) -> Self {
        self.0.retry_after = after.whole_seconds();
        self
    }

    /// Sets the severity.
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, Severity, ToolError};
    /// assert_eq!(ToolError::new(ErrorCode::CONFLICT, "x").severity(Severity::Critical).get_severity(), Severity::Critical);
    /// ```
    pub fn severity(mut self, severity: Severity) -> Self {
        self.0.severity = severity;
        self
    }

    /// Makes this a warning: the call stays successful (`isError` false) and still guides the model.
    ///
    /// ```
    /// assert!(!mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::DEPRECATED, "Old.").warning().is_error());
    /// ```
    pub fn warning(self) -> Self {
        self.severity(Severity::Warning)
    }

    /// Makes this critical: do not retry blindly, escalate.
    ///
    /// ```
    /// assert!(mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::CONFLICT, "Ledger mismatch.").critical().is_error());
    /// ```
    pub fn critical(self) -> Self {
        self.severity(Severity::Critical)
    }

    /// The code.
    pub fn code(&self) -> &ErrorCode {
        &self.0.code
    }

    /// The severity.
    pub fn get_severity(&self) -> Severity {
        self.0.severity
    }

    /// `isError` of the result this envelope travels in: true unless it is a warning.
    pub fn is_error(&self) -> bool {
        self.0.severity.is_error()
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The recovery hint, if one is set.
    pub fn recovery(&self) -> Option<&str> {
        self.0.recovery.as_deref()
    }

    /// The available actions, in order.
    pub fn available_actions(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.actions.names().iter().map(|a| &**a)
    }

    /// Renames the available actions `rename` knows (a flat tool's actions by their MCP tool
    /// names), keeping the others.
    pub(crate) fn rename_actions(mut self, rename: impl Fn(&str) -> Option<String>) -> Self {
        let names = self.0.actions.to_mut();
        for name in names.iter_mut() {
            if let Some(renamed) = rename(name) {
                *name = Text::Owned(renamed);
            }
        }
        self
    }

    /// Lists a shared, already checked set of actions (a router's), rendered once.
    pub(crate) fn shared_actions(mut self, actions: Arc<ActionList>) -> Self {
        self.0.actions = Actions::Shared(actions);
        self
    }

    /// The details, in insertion order.
    pub fn get_details(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.0.details.iter().map(|(k, v)| (&**k, &**v))
    }

    /// The retry delay in whole seconds, if one is set.
    pub fn get_retry_after(&self) -> Option<u32> {
        self.0.retry_after
    }
}

impl ToolError {
    /// An unexpected failure: answered INTERNAL_ERROR by the action that returns it, as any
    /// error that is not a tool error is (an incident id for the model; `cause` written to the
    /// server's log under it, never sent). `#[tool_error(internal)]` variants of a
    /// `#[derive(ToolErrors)]` enum become this.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::unexpected("the ledger is unreachable");
    /// assert_eq!(*err.code(), mcp_fusion::ErrorCode::INTERNAL_ERROR);
    /// assert_eq!(err.unexpected_cause().map(|c| c.to_string()).as_deref(), Some("the ledger is unreachable"));
    /// ```
    pub fn unexpected(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        let cause: Box<dyn std::error::Error + Send + Sync> = cause.into();
        let mut err = ToolError::new(ErrorCode::INTERNAL_ERROR, "The action failed unexpectedly.");
        err.0.cause = Some(Cause(std::sync::Arc::from(cause)));
        err
    }

    /// The cause of an [`unexpected`](Self::unexpected) failure.
    pub fn unexpected_cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.0.cause.as_ref().map(|c| &*c.0)
    }
}

impl<T> From<ToolError> for Result<T, ToolError> {
    /// Lets a handler write `return error(..).suggest(..).into();`.
    fn from(err: ToolError) -> Self {
        Err(err)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("code", &self.0.code)
            .field("severity", &self.0.severity)
            .field("message", &self.0.message)
            .field("recovery", &self.0.recovery)
            .field("actions", &self.0.actions.names())
            .field("details", &self.0.details)
            .field("retry_after", &self.0.retry_after)
            .finish()
    }
}

impl fmt::Display for ToolError {
    /// `CODE: message`, for logs; the model receives [`ToolError::render`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

impl std::error::Error for ToolError {}
