//! Middleware: async code around each call, after the limits and before the handler, under
//! the same error rule as handlers. Two ship with the crate: [`AuthCheck`] and [`Audit`].

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolResult, Extensions};
use serde_json::Value;

use crate::ToolError;
use crate::tool::BoxFuture;
use crate::tool::Failure;

/// What a middleware knows of a call.
#[derive(Debug)]
pub struct CallInfo {
    /// Shared with the tool's definition (a static name as it is) and the call's action: a call
    /// copies neither.
    pub(crate) tool: Cow<'static, str>,
    pub(crate) action: Arc<str>,
    pub(crate) arguments: Value,
    pub(crate) extensions: Extensions,
}

impl CallInfo {
    /// A call of `qualified_action` on `tool`, for tests of middleware.
    ///
    /// ```
    /// let info = mcp_fusion::middleware::CallInfo::new("billing", "billing.get_invoice", serde_json::json!({}));
    /// assert_eq!(info.action(), "billing.get_invoice");
    /// ```
    pub fn new(
        tool: impl Into<String>,
        qualified_action: impl Into<String>,
        arguments: Value,
    ) -> Self {
        CallInfo {
            tool: Cow::Owned(tool.into()),
            action: qualified_action.into().into(),
            arguments,
            extensions: Extensions::new(),
        }
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The qualified action (`billing.get_invoice`).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The verified caller (over streamable HTTP with an OAuth resource server); `None` where
    /// no caller is verified.
    pub fn caller(&self) -> Option<&crate::tool::Caller> {
        crate::tool::Caller::of(&self.extensions)
    }

    /// The validated arguments, discriminator removed.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// What the transport attached to the request (over streamable HTTP, the request's
    /// `http::request::Parts`, headers included).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// Attaches a value, as a transport would (for tests of middleware).
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }
}

/// The rest of the pipeline: the next middleware, or the handler.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    info: &'a CallInfo,
    handler: Box<dyn FnOnce() -> BoxFuture<'a, Result<CallToolResult, Failure>> + Send + 'a>,
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("info", self.info)
            .field("middleware_left", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    pub(crate) fn new(
        rest: &'a [Arc<dyn Middleware>],
        info: &'a CallInfo,
        handler: Box<dyn FnOnce() -> BoxFuture<'a, Result<CallToolResult, Failure>> + Send + 'a>,
    ) -> Self {
        Next {
            rest,
            info,
            handler,
        }
    }

    /// Runs the rest of the pipeline.
    pub fn run(self) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
        match self.rest.split_first() {
            Some((first, rest)) => first.handle(
                self.info,
                Next {
                    rest,
                    info: self.info,
                    handler: self.handler,
                },
            ),
            None => (self.handler)(),
        }
    }
}

/// Code around each call. Return the result of `next.run()`, or your own: a tool error
/// travels intact, any other [`Failure::Internal`] becomes INTERNAL_ERROR, a panic too.
///
/// ```
/// use mcp_fusion::middleware::{CallInfo, Middleware, Next};
/// use mcp_fusion::tools::{BoxFuture, Failure};
/// use mcp_fusion::rmcp::model::CallToolResult;
///
/// /// Refuses every call on weekends.
/// struct Weekdays;
///
/// impl Middleware for Weekdays {
///     fn handle<'a>(&'a self, _info: &'a CallInfo, next: Next<'a>) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
///         Box::pin(async move { next.run().await })
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles one call.
    fn handle<'a>(
        &'a self,
        info: &'a CallInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<CallToolResult, Failure>>;
}

/// What an authentication check decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthDecision {
    /// The call goes on.
    Allow,
    /// No credentials were presented: AUTH_REQUIRED.
    Required,
    /// The credentials were refused: UNAUTHORIZED, with the reason the model may see.
    Refused(String),
}

/// Authentication from a caller-supplied check: AUTH_REQUIRED or UNAUTHORIZED before the
/// handler runs. As middleware it runs where ERRORS.md §4 puts middleware, after the rate and
/// concurrency limits, so a refused call has spent its budget: over streamable HTTP, verify
/// callers before any of that with an OAuth resource server (`HttpOptions::oauth`, feature
/// `oauth`), whose refusals cost nothing.
///
/// ```
/// use mcp_fusion::middleware::{AuthCheck, AuthDecision};
/// let auth = AuthCheck::new(|info| match info.extensions().get::<String>() {
///     Some(token) if token == "let-me-in" => AuthDecision::Allow,
///     Some(_) => AuthDecision::Refused("The token has expired.".into()),
///     None => AuthDecision::Required,
/// });
/// # let _ = auth;
/// ```
pub struct AuthCheck {
    check: Box<dyn Fn(&CallInfo) -> AuthDecision + Send + Sync>,
}

impl std::fmt::Debug for AuthCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthCheck").finish_non_exhaustive()
    }
}

impl AuthCheck {
    /// Authentication with `check`.
    pub fn new(check: impl Fn(&CallInfo) -> AuthDecision + Send + Sync + 'static) -> Self {
        AuthCheck {
            check: Box::new(check),
        }
    }
}

impl Middleware for AuthCheck {
    fn handle<'a>(
        &'a self,
        info: &'a CallInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
        let refusal = match (self.check)(info) {
            AuthDecision::Allow => None,
            AuthDecision::Required => Some(ToolError::auth_required(&info.action)),
            AuthDecision::Refused(reason) => Some(ToolError::unauthorized(reason)),
        };
        match refusal {
            None => next.run(),
            Some(refusal) => Box::pin(std::future::ready(Err(Failure::Tool(refusal)))),
        }
    }
}

/// Audit logging: one `tracing` event per call with the action, the verified caller's subject
/// (when there is one), the outcome and the duration (target `mcp_fusion::audit`). Arguments
/// and tokens are not logged.
#[derive(Debug, Default, Clone, Copy)]
pub struct Audit;

impl Middleware for Audit {
    fn handle<'a>(
        &'a self,
        info: &'a CallInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
        Box::pin(async move {
            let started = Instant::now();
            let outcome = next.run().await;
            let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            let result = match &outcome {
                Ok(result) if result.is_error == Some(true) => "error",
                Ok(_) => "ok",
                Err(Failure::Tool(err)) => err.code().as_str(),
                Err(Failure::Invalid(_)) => "VALIDATION_ERROR",
                Err(Failure::Internal(_)) => "INTERNAL_ERROR",
            };
            let subject = info.caller().map(crate::tool::Caller::subject);
            tracing::info!(target: "mcp_fusion::audit", tool = %info.tool, action = %info.action, subject, result, micros, "tool call");
            outcome
        })
    }
}
