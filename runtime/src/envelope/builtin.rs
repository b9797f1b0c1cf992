//! The envelopes the runtime itself produces (ERRORS.md §4), and those of the middleware that
//! ships with it (AUTH_REQUIRED, UNAUTHORIZED). Each message and hint is written here and
//! nowhere else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::retry_after::seconds_up;
use super::route::RouteText;
use super::text::Text;
use super::text::push_cut;
use super::tool_error::ToolError;
use crate::ErrorCode;

impl ToolError {
    /// MISSING_DISCRIMINATOR: the discriminator is absent, `null` or `""`. `actions` are the
    /// tool's actions, qualified, in declaration order.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::missing_discriminator("action", ["billing.list_invoices"]);
    /// assert_eq!(err.message(), "The required field \"action\" is missing.");
    /// ```
    pub fn missing_discriminator<I>(discriminator: &str, actions: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Text>,
    {
        RouteText::missing(discriminator, None).into_error(actions)
    }

    /// MISSING_DISCRIMINATOR: the discriminator is there but is not a string.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::discriminator_not_string("action", &serde_json::json!(2), ["billing.list_invoices"]);
    /// assert_eq!(err.message(), "The field \"action\" must be a string naming an action; you sent 2.");
    /// ```
    pub fn discriminator_not_string<I>(discriminator: &str, sent: &Value, actions: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Text>,
    {
        RouteText::not_a_string(discriminator, sent, None).into_error(actions)
    }

    /// UNKNOWN_ACTION: `value` (as sent) names no action of `tool`; `closest` is the qualified
    /// name of the close action, if any.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::unknown_action("billing", "get_invoise", Some("billing.get_invoice"), ["billing.get_invoice"]);
    /// assert_eq!(err.recovery(), Some("Did you mean \"billing.get_invoice\"? Choose one of the available actions and call the tool again."));
    /// ```
    pub fn unknown_action<I>(tool: &str, value: &str, closest: Option<&str>, actions: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Text>,
    {
        RouteText::unknown(tool, value, closest).into_error(actions)
    }

    /// AUTH_REQUIRED: the call presented no credentials ([`crate::middleware::AuthCheck`]).
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::auth_required("billing.get_invoice");
    /// assert_eq!(err.message(), "The action \"billing.get_invoice\" requires authentication.");
    /// ```
    pub fn auth_required(qualified_action: &str) -> Self {
        ToolError::new(
            ErrorCode::AUTH_REQUIRED,
            format!("The action \"{qualified_action}\" requires authentication."),
        )
        .suggest("Ask the user to sign in or to provide credentials, then call the tool again.")
    }

    /// UNAUTHORIZED: the credentials were refused, for `reason` (which the model reads).
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::unauthorized("The token has expired.");
    /// assert_eq!(err.recovery(), Some("Do not retry with the same credentials; ask the user to check them."));
    /// ```
    pub fn unauthorized(reason: impl Into<Text>) -> Self {
        ToolError::new(ErrorCode::UNAUTHORIZED, reason)
            .suggest("Do not retry with the same credentials; ask the user to check them.")
    }

    /// FORBIDDEN: the caller is who it says, but may not do this (`reason`, which the model
    /// reads: say what is refused, never why the server knows). For a refusal the model can act
    /// on, decided by a handler or a middleware; a token that lacks a scope is refused by the
    /// HTTP front before the call (403 `insufficient_scope`), for the host to handle.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::forbidden("Only the invoice's owner may void it.");
    /// assert_eq!(err.code(), &mcp_fusion::ErrorCode::FORBIDDEN);
    /// assert_eq!(err.recovery(), Some("Do not retry this call as it is. Tell the user it was refused, or choose something this caller may do."));
    /// ```
    pub fn forbidden(reason: impl Into<Text>) -> Self {
        ToolError::new(ErrorCode::FORBIDDEN, reason).suggest(
            "Do not retry this call as it is. Tell the user it was refused, or choose something this caller may do.",
        )
    }

    /// INTERNAL_ERROR: the action failed in a way the model cannot fix. The cause stays in the
    /// server log under `incident`; pass `cause` only when the server is configured to expose it.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::internal("billing.get_invoice", "inc_42", None);
    /// assert_eq!(err.message(), "The action \"billing.get_invoice\" failed unexpectedly.");
    /// assert_eq!(err.get_details().collect::<Vec<_>>(), [("incident", "inc_42")]);
    /// ```
    pub fn internal(qualified_action: &str, incident: &str, cause: Option<&str>) -> Self {
        let err = ToolError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("The action \"{qualified_action}\" failed unexpectedly."),
        )
        .suggest(
            "Do not blindly retry this call. If it keeps failing, report the incident to the user.",
        )
        .detail("incident", incident.to_owned());
        match cause {
            Some(cause) => err.detail("cause", cause.to_owned()),
            None => err,
        }
    }

    /// SERVER_BUSY: the tool is at its concurrency limit.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::server_busy("billing", 2, 2, 1);
    /// assert_eq!(err.message(), "Tool \"billing\" is at capacity (2 active, 2 queued).");
    /// assert_eq!(err.get_retry_after(), Some(1));
    /// ```
    pub fn server_busy(tool: &str, active: usize, queued: usize, get_retry_after: u32) -> Self {
        ToolError::new(ErrorCode::SERVER_BUSY, format!("Tool \"{tool}\" is at capacity ({active} active, {queued} queued)."))
            .suggest("Send fewer calls at once: wait for pending calls to finish, then retry sequentially or in smaller batches.")
            .retry_after(get_retry_after.max(1))
    }

    /// SERVER_BUSY: the store that keeps the limits cannot answer and the server fails closed.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::limits_unavailable("billing", 1);
    /// assert_eq!(err.message(), "Tool \"billing\" cannot take calls right now.");
    /// assert_eq!(err.get_retry_after(), Some(1));
    /// ```
    pub fn limits_unavailable(tool: &str, get_retry_after: u32) -> Self {
        ToolError::new(
            ErrorCode::SERVER_BUSY,
            format!("Tool \"{tool}\" cannot take calls right now."),
        )
        .suggest("Wait, then call the tool again. If it keeps failing, tell the user.")
        .retry_after(get_retry_after.max(1))
    }

    /// RATE_LIMITED: at most `max` calls per `window`; the caller may retry after `wait`
    /// (rounded up to whole seconds, at least 1). The limiter's key is never echoed.
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = mcp_fusion::ToolError::rate_limited(10, Duration::from_secs(60), Duration::from_millis(1500));
    /// assert_eq!(err.message(), "Rate limit exceeded: at most 10 calls per 1 minute.");
    /// assert_eq!(err.recovery(), Some("Wait 2 seconds before calling this tool again."));
    /// ```
    pub fn rate_limited(max: u64, window: Duration, wait: Duration) -> Self {
        let secs = seconds_up(wait);
        let secs = u32::try_from(secs.max(1)).unwrap_or(u32::MAX);
        let seconds = if secs == 1 {
            "1 second".to_owned()
        } else {
            format!("{secs} seconds")
        };
        ToolError::new(
            ErrorCode::RATE_LIMITED,
            format!(
                "Rate limit exceeded: at most {max} calls per {}.",
                duration_text(window)
            ),
        )
        .suggest(format!("Wait {seconds} before calling this tool again."))
        .retry_after(secs)
    }

    /// RATE_LIMITED: the caller holds `max` tasks already (MCP tasks extension), running or
    /// kept until their ttl ends; a place comes back as one's ttl ends.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::too_many_tasks(100);
    /// assert_eq!(err.message(), "Too many tasks: a caller holds at most 100 at once.");
    /// assert_eq!(err.get_retry_after(), Some(1));
    /// ```
    pub fn too_many_tasks(max: usize) -> Self {
        ToolError::new(
            ErrorCode::RATE_LIMITED,
            format!("Too many tasks: a caller holds at most {max} at once."),
        )
        .suggest("A task holds its place until its ttlMs has passed, finished or not: read the results you need (tasks/get), wait for an earlier task to expire, then call again.")
        .retry_after(1u32)
    }

    /// TIMEOUT: the action's deadline passed and the call was cancelled.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::timeout("billing.export_invoices", std::time::Duration::from_secs(2));
    /// assert_eq!(err.message(), "The action \"billing.export_invoices\" did not finish within 2 seconds.");
    /// ```
    pub fn timeout(qualified_action: &str, deadline: Duration) -> Self {
        ToolError::new(
            ErrorCode::TIMEOUT,
            format!(
                "The action \"{qualified_action}\" did not finish within {}.",
                duration_text(deadline)
            ),
        )
        .suggest("The call was cancelled. Retry with a smaller request, or try again later.")
    }

    /// DEPRECATED, a warning: the call still runs. `note` replaces the default message;
    /// `replacement` is the qualified action to use instead.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::deprecated("billing.void_invoice", None, Some("billing.cancel_invoice"));
    /// assert!(!err.is_error());
    /// assert_eq!(err.recovery(), Some("Use billing.cancel_invoice instead."));
    /// ```
    pub fn deprecated(
        qualified_action: &str,
        note: Option<&str>,
        replacement: Option<&str>,
    ) -> Self {
        let message = match note {
            Some(note) if !note.is_empty() => note.to_owned(),
            _ => format!("The action \"{qualified_action}\" is deprecated."),
        };
        let err = ToolError::new(ErrorCode::DEPRECATED, message).warning();
        match replacement {
            Some(replacement) => err
                .suggest(format!("Use {replacement} instead."))
                .actions([replacement.to_owned()]),
            None => err,
        }
    }

    /// MISSING_REQUIRED_FIELD: a field the handler needs is missing.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::missing_required_field("workspace_id");
    /// assert_eq!(err.recovery(), Some("Provide the \"workspace_id\" parameter and retry."));
    /// ```
    pub fn missing_required_field(field: &str) -> Self {
        ToolError::new(
            ErrorCode::MISSING_REQUIRED_FIELD,
            format!("Required field \"{field}\" is missing."),
        )
        .suggest(format!("Provide the \"{field}\" parameter and retry."))
    }
}

/// The message of the JSON-RPC error (-32602) answering a `tools/call` of a name no tool is
/// listed under, not an envelope (MCP, ERRORS.md §1): `unknown tool: {name}` (cut as a sent
/// string), then what to call instead. For an action of a grouped tool called by its qualified
/// name (or as `{tool}_{action}`), the one sentence that fixes the call; else the closest
/// listed name, when one is close.
pub(crate) fn unknown_tool(name: &str, instead: Instead<'_>) -> String {
    let mut message = String::from("unknown tool: ");
    push_cut(&mut message, name);
    match instead {
        Instead::Action {
            tool,
            discriminator,
            action,
        } => {
            message.push_str("; call the tool \"");
            message.push_str(tool);
            message.push_str("\" with {");
            super::text::json_string(&mut message, discriminator);
            message.push_str(": ");
            super::text::json_string(&mut message, action);
            message.push_str("} in its arguments.");
        }
        Instead::Closest(best) => {
            message.push_str("; did you mean \"");
            message.push_str(best);
            message.push_str("\"?");
        }
        Instead::Nothing => {}
    }
    message
}

/// What [`unknown_tool`] tells the caller to call instead.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Instead<'a> {
    /// The name is `action` of the grouped tool `tool`, chosen by `discriminator`.
    Action {
        tool: &'a str,
        discriminator: &'a str,
        action: &'a str,
    },
    /// The listed name close to it.
    Closest(&'a str),
    Nothing,
}

/// `1 second`, `90 seconds`, `2 minutes`, `1 hour`: the largest unit that divides the duration
/// exactly; whole seconds (rounded up) otherwise.
pub(crate) fn duration_text(d: Duration) -> String {
    let secs = seconds_up(d);
    let (n, unit) = match secs {
        s if s > 0 && s % 3600 == 0 => (s / 3600, "hour"),
        s if s > 0 && s % 60 == 0 => (s / 60, "minute"),
        s => (s, "second"),
    };
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// A fresh incident id (`inc_` and 16 hex digits), unique within the process and unlikely to
/// repeat across processes.
pub(crate) fn new_incident_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("inc_{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tools_say_what_to_call() {
        let action = Instead::Action {
            tool: "billing",
            discriminator: "action",
            action: "get_invoice",
        };
        assert_eq!(
            unknown_tool("billing.get_invoice", action),
            "unknown tool: billing.get_invoice; call the tool \"billing\" with {\"action\": \"get_invoice\"} in its arguments."
        );
        assert_eq!(
            unknown_tool("billng", Instead::Closest("billing")),
            "unknown tool: billng; did you mean \"billing\"?"
        );
        let long = "x".repeat(60);
        assert_eq!(
            unknown_tool(&long, Instead::Nothing),
            format!("unknown tool: {}...", "x".repeat(47))
        );
    }

    #[test]
    fn incident_ids_are_fresh() {
        let a = new_incident_id();
        assert!(a.starts_with("inc_") && a.len() == 20);
        assert_ne!(a, new_incident_id());
    }

    #[test]
    fn durations() {
        let text = |s: u64| duration_text(Duration::from_secs(s));
        assert_eq!(text(1), "1 second");
        assert_eq!(text(0), "0 seconds");
        assert_eq!(text(90), "90 seconds");
        assert_eq!(text(60), "1 minute");
        assert_eq!(text(120), "2 minutes");
        assert_eq!(text(3600), "1 hour");
        assert_eq!(text(7200), "2 hours");
        assert_eq!(text(5400), "90 minutes");
        assert_eq!(duration_text(Duration::from_millis(1500)), "2 seconds");
        assert_eq!(duration_text(Duration::from_millis(500)), "1 second");
    }

    #[test]
    fn unknown_action_value_is_cut() {
        let long = "x".repeat(60);
        let err = ToolError::unknown_action("t", &long, None, ["t.a"]);
        assert_eq!(
            err.message(),
            format!(
                "The action \"{}...\" does not exist on tool \"t\".",
                "x".repeat(47)
            )
        );
    }

    #[test]
    fn rate_limit_never_below_one_second() {
        let err = ToolError::rate_limited(5, Duration::from_secs(1), Duration::ZERO);
        assert_eq!(
            err.recovery(),
            Some("Wait 1 second before calling this tool again.")
        );
        assert_eq!(err.get_retry_after(), Some(1));
    }
}
