//! What an action's handler gets besides its arguments.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::call::{Progress, Reporter, TraceContext};
use super::caller::Caller;
use crate::ToolError;
use crate::envelope::Text;

/// What an action's handler gets besides its arguments: the action it runs as, and helpers
/// that build its errors and warnings.
///
/// ```
/// use mcp_fusion::{Context, ErrorCode};
/// let f = Context::detached("billing.get_invoice");
/// let err = f.error(ErrorCode::NOT_FOUND, "No invoice with that ID");
/// assert_eq!(err.code(), &ErrorCode::NOT_FOUND);
/// f.warn(f.error(ErrorCode::DEPRECATED, "Old field used."));
/// assert_eq!(f.take_warnings().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    action: Arc<str>,
    warnings: Arc<std::sync::Mutex<Vec<ToolError>>>,
    progress: Option<Arc<Progress>>,
    trace: Option<Arc<(TraceContext, String)>>,
    caller: Option<Caller>,
    /// How the call reaches its client (`Context::elicit`, `sample`, `roots`, `log`).
    client: Option<super::client::ClientAccess>,
    /// The action's deadline, which stands still while the client is asked.
    deadline: Option<super::deadline::Deadline>,
    /// Where a handoff leads: the upstreams the server mounts (`Context::handoff`).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    handoffs: Option<Arc<dyn Handoffs>>,
    /// Cancelled once the call stops without its handler finishing; none for a context no one
    /// can stop (`Context::detached` without `with_cancellation`): a token is an allocation,
    /// and most calls are given the request's own.
    cancel: Option<CancellationToken>,
}

/// Where a handoff leads: the upstreams a server mounts (its gateway).
#[cfg_attr(not(feature = "gateway"), allow(dead_code))]
pub(crate) trait Handoffs: Send + Sync + std::fmt::Debug {
    /// The tools of the upstream mounted under `namespace`, as the client calls them, once the
    /// server is keeping it connected; `None` when no upstream is mounted there.
    fn tools_of(&self, namespace: &str) -> Option<Vec<String>>;
}

impl Context {
    pub(crate) fn new(action: Arc<str>) -> Self {
        Context {
            action,
            warnings: Arc::default(),
            progress: None,
            trace: None,
            caller: None,
            client: None,
            deadline: None,
            handoffs: None,
            cancel: None,
        }
    }

    /// The context with the way to its client.
    pub(crate) fn with_client(mut self, client: super::client::ClientAccess) -> Self {
        self.client = Some(client);
        self
    }

    /// The context with the action's deadline.
    pub(crate) fn with_deadline(mut self, deadline: super::deadline::Deadline) -> Self {
        self.deadline = Some(deadline);
        self
    }

    pub(super) fn client(&self) -> Option<&super::client::ClientAccess> {
        self.client.as_ref()
    }

    pub(super) fn deadline(&self) -> Option<&super::deadline::Deadline> {
        self.deadline.as_ref()
    }

    /// The context with where a handoff leads (the server's mounted upstreams).
    pub(crate) fn with_handoffs(mut self, handoffs: Arc<dyn Handoffs>) -> Self {
        self.handoffs = Some(handoffs);
        self
    }

    /// Where the call's progress goes, when the client asked for it.
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn progress_handle(&self) -> Option<&Arc<Progress>> {
        self.progress.as_ref()
    }

    /// The client's trace context and the server's span id for the call.
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn trace_and_span(&self) -> Option<&(TraceContext, String)> {
        self.trace.as_deref()
    }

    /// Hands the conversation to the upstream mounted under `namespace` (feature `gateway`):
    /// return it (`Err(f.handoff(..))`, a warning, so the call succeeds) and the model reads
    /// HANDOFF_CONNECTING naming the upstream's tools to continue with; the server keeps
    /// that upstream connected. A namespace the server does not mount is logged, and the
    /// model is told of no tools.
    ///
    /// ```
    /// use mcp_fusion::{Context, ToolError};
    ///
    /// fn route(f: &Context, question: &str) -> Result<String, ToolError> {
    ///     match question.contains("invoice") {
    ///         true => Err(f.handoff("books", Some("invoices are kept by the books team"))),
    ///         false => Ok("I can answer that myself.".into()),
    ///     }
    /// }
    ///
    /// let f = Context::detached("desk.ask");
    /// let handed = route(&f, "Where is my invoice?").unwrap_err();
    /// assert!(!handed.is_error());
    /// assert_eq!(handed.message(), "Handed off to \"books\": invoices are kept by the books team");
    /// ```
    #[cfg(feature = "gateway")]
    pub fn handoff(&self, namespace: &str, reason: Option<&str>) -> ToolError {
        let tools = self.handoffs.as_ref().and_then(|m| m.tools_of(namespace));
        let tools: Vec<String> = match tools {
            Some(tools) => tools,
            None => {
                tracing::warn!(
                    action = %self.action,
                    namespace,
                    "a handoff to a namespace this server does not mount"
                );
                Vec::new()
            }
        };
        ToolError::handoff(namespace, reason, tools)
    }

    /// A call's context with what its request carried: where its progress goes, and the
    /// client's trace with the server's own span id for the call.
    pub(crate) fn of_call(
        action: Arc<str>,
        progress: Option<Arc<Progress>>,
        trace: Option<(TraceContext, String)>,
        caller: Option<Caller>,
    ) -> Self {
        Context {
            progress,
            trace: trace.map(Arc::new),
            caller,
            ..Self::new(action)
        }
    }

    /// The verified caller: over streamable HTTP with an OAuth resource server
    /// ([`HttpOptions::oauth`](crate::server::HttpOptions)), the subject, scopes and claims of
    /// the caller's token; `None` where no caller is verified (stdio, HTTP without OAuth).
    ///
    /// ```
    /// use mcp_fusion::{Context, ErrorCode, ToolError};
    /// use mcp_fusion::tools::Caller;
    ///
    /// fn owner_only(f: &Context, owner: &str) -> Result<(), ToolError> {
    ///     match f.caller() {
    ///         Some(caller) if caller.subject() == owner => Ok(()),
    ///         _ => Err(ToolError::forbidden("Only the invoice's owner may void it.")),
    ///     }
    /// }
    ///
    /// let f = Context::detached("billing.void_invoice").with_caller(Caller::new("user_42", ["invoices:write"]));
    /// assert!(owner_only(&f, "user_42").is_ok());
    /// assert_eq!(owner_only(&f, "user_7").unwrap_err().code(), &ErrorCode::FORBIDDEN);
    /// ```
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_ref()
    }

    /// This context with `caller` as its verified caller, for tests of handlers.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = Some(caller);
        self
    }

    /// Completes once the call is stopped before its handler finished: the client cancelled it
    /// (`notifications/cancelled`, or over HTTP it went away), its deadline passed, the server's
    /// drain ended, or (from 2026-07-28) its round ended to ask the client. Never completes
    /// when the handler finishes.
    ///
    /// A stopped call's future is **dropped** where it waits: code after that `.await` never
    /// runs, and values it holds are dropped (put cleanup in their `Drop`). So the handler
    /// itself needs nothing to stop; what it started outside its future does: a task it
    /// spawned, a thread, a process. Give those [`cancellation`](Context::cancellation), or a
    /// clone of the context to wait on this.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use mcp_fusion::Context;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let stop = CancellationToken::new();
    /// let f = Context::detached("notes.reindex").with_cancellation(stop.clone());
    /// let watcher = f.clone();
    /// let work = tokio::spawn(async move {
    ///     tokio::select! {
    ///         () = watcher.cancelled() => "stopped",
    ///         () = std::future::pending::<()>() => "finished",
    ///     }
    /// });
    /// stop.cancel(); // as the server does when the client cancels the call
    /// assert_eq!(work.await.unwrap(), "stopped");
    /// # }
    /// ```
    pub async fn cancelled(&self) {
        match &self.cancel {
            Some(cancel) => cancel.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Whether the call was stopped before its handler finished (see
    /// [`cancelled`](Context::cancelled)).
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// A token cancelled when the call is stopped before its handler finished (see
    /// [`cancelled`](Context::cancelled)), for work the handler spawns: a child of the call's
    /// own, so cancelling it stops only that work (a token never cancelled, for a context no one
    /// can stop).
    ///
    /// ```
    /// use mcp_fusion::{Context, ToolError};
    ///
    /// async fn export(f: Context) -> Result<String, ToolError> {
    ///     let stop = f.cancellation();
    ///     let job = tokio::spawn(async move {
    ///         tokio::select! {
    ///             () = stop.cancelled() => None, // the client gave up: stop writing
    ///             () = tokio::time::sleep(std::time::Duration::from_secs(5)) => Some("export.csv"),
    ///         }
    ///     });
    ///     // Dropped here if the call is cancelled; the spawned job sees the token instead.
    ///     let file = job.await.ok().flatten().unwrap_or("nothing");
    ///     Ok(file.to_owned())
    /// }
    /// # let _ = export;
    /// ```
    pub fn cancellation(&self) -> CancellationToken {
        match &self.cancel {
            Some(cancel) => cancel.child_token(),
            None => CancellationToken::new(),
        }
    }

    /// This context stopped by `cancel` (tokio-util's token), for tests of handlers: the
    /// server gives each call's context its own.
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Reports progress to the client (MCP `notifications/progress`) when its request asked
    /// for it (a `progressToken`); a no-op otherwise. `done` must grow from call to call (a
    /// report that does not is dropped, as MCP requires), and reports closer together than the
    /// server's interval are dropped too, except the last (`done == total`). Whether it was sent.
    ///
    /// ```
    /// let f = mcp_fusion::Context::detached("billing.export_invoices");
    /// // No client asked: nothing is sent.
    /// assert!(!f.progress(10.0, Some(100.0), Some("10 of 100 invoices")));
    /// ```
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.progress
            .as_ref()
            .is_some_and(|p| p.report(done, total, message, Reporter::Handler))
    }

    /// The client's trace context, when its request carried a valid `traceparent`.
    pub fn trace(&self) -> Option<&TraceContext> {
        self.trace.as_deref().map(|(trace, _)| trace)
    }

    /// The incident id of an unexpected failure of this call: the trace id and the server's
    /// own span id when the client sent a trace, so the incident is found in its trace.
    pub(crate) fn incident(&self) -> Option<String> {
        self.trace
            .as_deref()
            .map(|(trace, span)| format!("{}-{span}", trace.trace_id()))
    }

    /// A context outside any server, for tests of handlers.
    pub fn detached(qualified_action: impl Into<Arc<str>>) -> Self {
        Self::new(qualified_action.into())
    }

    /// The qualified action this call runs (`billing.get_invoice`).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Starts an error of this action: [`ToolError::new`](crate::ToolError::new), ready to return.
    pub fn error(&self, code: crate::ErrorCode, message: impl Into<Text>) -> ToolError {
        ToolError::new(code, message)
    }

    /// MISSING_REQUIRED_FIELD for `field`.
    pub fn required(&self, field: &str) -> ToolError {
        ToolError::missing_required_field(field)
    }

    /// Adds a warning to this call's successful result (its severity becomes `warning`).
    pub fn warn(&self, warning: ToolError) {
        let mut warnings = self
            .warnings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        warnings.push(warning.warning());
    }

    /// The warnings added so far, in order, leaving none.
    pub fn take_warnings(&self) -> Vec<ToolError> {
        std::mem::take(
            &mut *self
                .warnings
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}
