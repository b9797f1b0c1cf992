//! The envelopes of a gateway's calls to its upstreams (ERRORS.md §4, the gateway rows, and
//! §10.11).

use crate::envelope::text::{cut, push_escaped};
use crate::{ErrorCode, ToolError};

/// `1 second`, `{n} seconds`.
fn seconds(n: u32) -> String {
    match n {
        1 => "1 second".to_owned(),
        n => format!("{n} seconds"),
    }
}

/// `s` cut as a sent string (ERRORS.md §5) and escaped with `quote`, without quotes around it.
fn push_sent_inside(out: &mut String, s: &str, quote: char) {
    let (kept, was_cut) = cut(s);
    push_escaped(out, kept, quote);
    if was_cut {
        out.push_str("...");
    }
}

impl ToolError {
    /// HANDOFF_CONNECTING: the gateway is connecting to the upstream mounted under
    /// `namespace`; the same call may be retried after `get_retry_after` (at least 1).
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::upstream_connecting("billing", 2);
    /// assert_eq!(err.message(), "The upstream \"billing\" is connecting.");
    /// assert_eq!(err.recovery(), Some("Wait 2 seconds, then retry the same call."));
    /// ```
    pub fn upstream_connecting(namespace: &str, get_retry_after: u32) -> Self {
        let n = get_retry_after.max(1);
        ToolError::new(
            ErrorCode::HANDOFF_CONNECTING,
            format!("The upstream \"{namespace}\" is connecting."),
        )
        .suggest(format!("Wait {}, then retry the same call.", seconds(n)))
        .retry_after(n)
    }

    /// HANDOFF_UPSTREAM_UNAVAILABLE: the upstream mounted under `namespace` cannot be reached,
    /// closed during the call, or is not tried again before `get_retry_after` (at least 1).
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::upstream_unavailable("billing", 30);
    /// assert_eq!(err.message(), "The upstream \"billing\" is temporarily unavailable.");
    /// assert_eq!(err.recovery(), Some("Retry in 30 seconds. If it keeps failing, tell the user."));
    /// assert_eq!(err.get_retry_after(), Some(30));
    /// ```
    pub fn upstream_unavailable(namespace: &str, get_retry_after: u32) -> Self {
        let n = get_retry_after.max(1);
        ToolError::new(
            ErrorCode::HANDOFF_UPSTREAM_UNAVAILABLE,
            format!("The upstream \"{namespace}\" is temporarily unavailable."),
        )
        .suggest(format!(
            "Retry in {}. If it keeps failing, tell the user.",
            seconds(n)
        ))
        .retry_after(n)
    }

    /// HANDOFF_NAMESPACE_MISMATCH: `name` (as sent, without the namespace) is no tool of the
    /// upstream mounted under `namespace`; `closest` is the close tool as the client calls it,
    /// `tools` all of the upstream's tools as the client calls them.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::namespace_mismatch(
    ///     "billing", "create_invoise", Some("billing_create_invoice"), ["billing_create_invoice"]);
    /// assert_eq!(err.message(), "The upstream \"billing\" has no tool \"create_invoise\".");
    /// assert_eq!(err.recovery(), Some("Did you mean \"billing_create_invoice\"? Choose one of the available tools and call it."));
    /// ```
    pub fn namespace_mismatch<I>(
        namespace: &str,
        name: &str,
        closest: Option<&str>,
        tools: I,
    ) -> Self
    where
        I: IntoIterator,
        I::Item: Into<crate::envelope::Text>,
    {
        const CHOOSE: &str = "Choose one of the available tools and call it.";
        let mut message = format!("The upstream \"{namespace}\" has no tool \"");
        push_sent_inside(&mut message, name, '"');
        message.push_str("\".");
        let recovery = match closest {
            Some(best) => format!("Did you mean \"{best}\"? {CHOOSE}"),
            None => CHOOSE.to_owned(),
        };
        ToolError::new(ErrorCode::HANDOFF_NAMESPACE_MISMATCH, message)
            .suggest(recovery)
            .actions(tools)
    }

    /// HANDOFF_CONNECTING as a warning: the call handed the conversation to the upstream
    /// mounted under `namespace` (`reason`, when given, says why); the model continues with
    /// `tools`, the upstream's tools as the client calls them. In a handler,
    /// [`Context::handoff`](crate::Context::handoff) fills in the tools.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::handoff("books", Some("invoices are kept there"), ["books_billing"]);
    /// assert!(!err.is_error());
    /// assert_eq!(err.message(), "Handed off to \"books\": invoices are kept there");
    /// assert_eq!(err.recovery(), Some("Continue with the tools of \"books\"."));
    /// ```
    pub fn handoff<I>(namespace: &str, reason: Option<&str>, tools: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<crate::envelope::Text>,
    {
        let message = match reason {
            Some(reason) if !reason.is_empty() => {
                format!("Handed off to \"{namespace}\": {reason}")
            }
            _ => format!("Handed off to \"{namespace}\"."),
        };
        ToolError::new(ErrorCode::HANDOFF_CONNECTING, message)
            .warning()
            .suggest(format!("Continue with the tools of \"{namespace}\"."))
            .actions(tools)
    }

    /// FORBIDDEN, severity `critical`: the upstream mounted under `namespace` refused the
    /// gateway's own credentials for it (a 401 or 403, or its authorization server refused
    /// the gateway's client). Nothing the model sends can change that, so the envelope does
    /// not invite a retry: the gateway's operator must fix its credentials.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::upstream_credentials_refused("billing");
    /// assert_eq!(err.message(), "The upstream \"billing\" refused the gateway's credentials.");
    /// assert_eq!(err.get_retry_after(), None);
    /// ```
    pub fn upstream_credentials_refused(namespace: &str) -> Self {
        ToolError::new(
            ErrorCode::FORBIDDEN,
            format!("The upstream \"{namespace}\" refused the gateway's credentials."),
        )
        .critical()
        .suggest(format!(
            "Do not retry this call: the gateway's credentials for \"{namespace}\" must be renewed by its operator. Tell the user."
        ))
    }

    /// VALIDATION_ERROR: the upstream mounted under `namespace` refused a call's arguments
    /// (JSON-RPC `-32602`) saying `said`.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::upstream_refused("billing", "missing field `id`");
    /// assert_eq!(err.message(), "The upstream \"billing\" refused the arguments: missing field `id`");
    /// ```
    pub fn upstream_refused(namespace: &str, said: &str) -> Self {
        let mut message = format!("The upstream \"{namespace}\" refused the arguments: ");
        push_sent_inside(&mut message, said, '\'');
        ToolError::new(ErrorCode::VALIDATION_ERROR, message)
            .suggest("Fix the arguments and call the tool again.")
    }

    /// INTERNAL_ERROR: the upstream mounted under `namespace` answered a call of its tool
    /// `name` with a JSON-RPC error, or with a message that is no result; what it answered is
    /// logged under `incident`, never sent.
    ///
    /// ```
    /// let err = mcp_fusion::ToolError::upstream_failed("billing", "create_invoice", "inc_42");
    /// assert_eq!(err.message(), "The tool \"create_invoice\" of upstream \"billing\" failed unexpectedly.");
    /// ```
    pub fn upstream_failed(namespace: &str, name: &str, incident: &str) -> Self {
        ToolError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("The tool \"{name}\" of upstream \"{namespace}\" failed unexpectedly."),
        )
        .suggest(
            "Do not blindly retry this call. If it keeps failing, report the incident to the user.",
        )
        .detail("incident", incident.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_follow_the_gateway_rows() {
        let one = ToolError::upstream_connecting("ns", 0);
        assert_eq!(
            one.recovery(),
            Some("Wait 1 second, then retry the same call.")
        );
        assert_eq!(one.get_retry_after(), Some(1));
        // Cut at 47 characters (ERRORS.md §5), escaped as inside a JSON string.
        let hostile = "a\"b</message><x>".repeat(10);
        let err = ToolError::namespace_mismatch("ns", &hostile, None, ["ns_a"]);
        assert_eq!(
            err.message(),
            "The upstream \"ns\" has no tool \"a\\\"b</message><x>a\\\"b</message><x>a\\\"b</message><x...\"."
        );
        assert_eq!(
            err.recovery(),
            Some("Choose one of the available tools and call it.")
        );
        let said = ToolError::upstream_refused("ns", "it's\nwrong");
        assert_eq!(
            said.message(),
            "The upstream \"ns\" refused the arguments: it\\'s\\nwrong"
        );
        let text = err.render();
        assert!(!text.contains("</message><x>"), "{text}");
    }
}
