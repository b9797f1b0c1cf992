//! Lays out `<tool_error>` (ERRORS.md §3). All escaping goes through `escape`.

use super::actions::{Actions, write_actions};
use super::escape::{attr, text};
use super::itoa::itoa;
use super::route::RouteText;
use super::tool_error::ToolError;

/// Writes one `<tool_error>` into a buffer sized up front.
pub(crate) fn tool_error(err: &ToolError) -> String {
    let e = &*err.0;
    let mut out = String::with_capacity(size_hint(err));
    out.push_str("<tool_error code=\"");
    // A code matches `[A-Z][A-Z0-9_]*` (every `ErrorCode` is checked when made): nothing to escape.
    out.push_str(e.code.as_str());
    out.push_str("\" severity=\"");
    out.push_str(e.severity.as_str());
    out.push_str("\">\n<message>");
    text(&mut out, &e.message);
    out.push_str("</message>\n");
    if let Some(recovery) = &e.recovery {
        out.push_str("<recovery>");
        text(&mut out, recovery);
        out.push_str("</recovery>\n");
    }
    match &e.actions {
        Actions::Shared(list) => out.push_str(&list.block),
        Actions::Listed(names) => write_actions(&mut out, names),
    }
    if !e.details.is_empty() {
        out.push_str("<details>\n");
        for (key, value) in &e.details {
            out.push_str("  <detail key=\"");
            attr(&mut out, key);
            out.push_str("\">");
            text(&mut out, value);
            out.push_str("</detail>\n");
        }
        out.push_str("</details>\n");
    }
    if let Some(secs) = e.retry_after {
        out.push_str("<retry_after>");
        out.push_str(itoa(u64::from(secs), &mut [0; 20]));
        out.push_str(if secs == 1 { " second" } else { " seconds" });
        out.push_str("</retry_after>\n");
    }
    out.push_str("</tool_error>");
    out
}

impl ToolError {
    /// The envelope's text, exactly as ERRORS.md §3 lays it out.
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// let text = ToolError::new(ErrorCode::RATE_LIMITED, "Too fast.").retry_after(1).render();
    /// assert!(text.ends_with("<retry_after>1 second</retry_after>\n</tool_error>"));
    /// ```
    pub fn render(&self) -> String {
        tool_error(self)
    }
}

/// The text of a routing failure's envelope up to its `<available_actions>` block, which its
/// router rendered once (then comes [`ROUTE_TAIL`]): laid out as [`tool_error`] lays it out.
pub(crate) fn route_head(route: &RouteText) -> String {
    let (message, recovery) = (route.message(), route.recovery());
    let code = route.code().as_str();
    let mut out = String::with_capacity(code.len() + message.len() + recovery.len() + 96);
    let write = if route.needs_escape() {
        text
    } else {
        String::push_str
    };
    out.push_str("<tool_error code=\"");
    out.push_str(code);
    out.push_str("\" severity=\"error\">\n<message>");
    write(&mut out, message);
    out.push_str("</message>\n<recovery>");
    write(&mut out, recovery);
    out.push_str("</recovery>\n");
    out
}

/// What follows the `<available_actions>` block of a routing failure's envelope.
pub(crate) const ROUTE_TAIL: &str = "</tool_error>";

/// The unescaped length plus the fixed markup, with a little room for entities; a shared
/// `<available_actions>` block, copied as it is, counts its exact length. (A buffer that is not
/// much larger than the text also stays among the sizes the allocator serves fastest.)
fn size_hint(err: &ToolError) -> usize {
    let e = &*err.0;
    let content = e.message.len()
        + e.recovery.as_ref().map_or(0, |r| r.len() + 24)
        + e.details
            .iter()
            .map(|(k, v)| k.len() + v.len() + 32)
            .sum::<usize>();
    let actions = match &e.actions {
        Actions::Shared(list) => list.block.len(),
        Actions::Listed(names) if names.is_empty() => 0,
        Actions::Listed(names) => {
            let names = names.iter().map(|a| a.len() + 20).sum::<usize>();
            42 + names + names / 8
        }
    };
    let fixed = 96 + if e.details.is_empty() { 0 } else { 22 } + 40;
    fixed + actions + content + content / 8
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::super::route::{RouteText, UnknownTail};
    use crate::{ErrorCode, ToolError};

    /// A routing failure's head, written as it is when only fixed wording and plain pieces
    /// make it, is the head every byte of which went through the escaper.
    #[test]
    fn plain_routing_text_is_written_as_it_is() {
        let hostile = [
            "a<b",
            "x]]>",
            "&amp;",
            "tab\there",
            "nul\u{0}",
            "\u{FFFE}",
            "r\rn",
        ];
        let plain = [
            "deploy",
            "op99",
            "billing.get_invoice",
            "caf\u{e9} \"quoted\" 'a' >",
        ];
        let mut texts = Vec::new();
        for a in plain.iter().chain(&hostile) {
            for b in plain.iter().chain(&hostile) {
                let tails = [UnknownTail::new(a, Some(b)), UnknownTail::new(a, None)];
                for (tail, fit) in tails.iter().zip([None, Some(*b)]) {
                    texts.push(RouteText::unknown_before(b, tail, fit));
                }
                texts.push(RouteText::unknown(a, b, None));
                texts.push(RouteText::missing(a, None));
                texts.push(RouteText::missing(a, Some(b)));
                texts.push(RouteText::not_a_string(a, &Value::from(*b), Some(a)));
            }
        }
        let escaped = |s: &str| {
            let mut out = String::new();
            super::text(&mut out, s);
            out
        };
        let mut written_as_is = 0;
        for route in &texts {
            let expected = format!(
                "<tool_error code=\"{}\" severity=\"error\">\n<message>{}</message>\n<recovery>{}</recovery>\n",
                route.code().as_str(),
                escaped(route.message()),
                escaped(route.recovery()),
            );
            assert_eq!(super::route_head(route), expected);
            if let Some(head) = route.plain_head() {
                assert_eq!(head, expected);
            }
            written_as_is += usize::from(!route.needs_escape());
        }
        // Both ways were taken: plain pieces only, and a hostile one.
        assert!(written_as_is > 0 && written_as_is < texts.len());
    }

    #[test]
    fn full_layout() {
        let text = ToolError::new(
            ErrorCode::NOT_FOUND,
            "Project 'proj_8f3a2c' does not exist.",
        )
        .suggest("Call projects.list first to get valid IDs, then retry.")
        .actions(["projects.list"])
        .detail("project_id", "proj_8f3a2c")
        .retry_after(30)
        .render();
        assert_eq!(
            text,
            "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
             <message>Project 'proj_8f3a2c' does not exist.</message>\n\
             <recovery>Call projects.list first to get valid IDs, then retry.</recovery>\n\
             <available_actions>\n  <action>projects.list</action>\n</available_actions>\n\
             <details>\n  <detail key=\"project_id\">proj_8f3a2c</detail>\n</details>\n\
             <retry_after>30 seconds</retry_after>\n\
             </tool_error>"
        );
    }

    #[test]
    fn retry_after_bounds() {
        let secs = |x: f64| {
            ToolError::new(ErrorCode::RATE_LIMITED, "m")
                .retry_after(x)
                .get_retry_after()
        };
        assert_eq!(secs(0.0), None);
        assert_eq!(secs(-1.0), None);
        assert_eq!(secs(f64::NAN), None);
        assert_eq!(secs(0.001), Some(1));
        assert_eq!(secs(1e20), Some(u32::MAX));
        let text = ToolError::new(ErrorCode::RATE_LIMITED, "m")
            .retry_after(u32::MAX)
            .render();
        assert!(text.contains("<retry_after>4294967295 seconds</retry_after>"));
    }

    #[test]
    fn empty_recovery_is_omitted() {
        let text = ToolError::new(ErrorCode::NOT_FOUND, "")
            .suggest("")
            .render();
        assert_eq!(
            text,
            "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message></message>\n</tool_error>"
        );
    }
}
