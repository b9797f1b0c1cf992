//! What a `tools/call` answers: a result its action made, or one envelope kept in its parts (its
//! text and what its mirror is made of) until it is written, so that an error costs what its
//! text costs. It serialises as the `CallToolResult` it converts into, byte for byte.

use rmcp::model::CallToolResult;
use serde::{Serialize, Serializer};

use crate::ToolError;
use crate::envelope::Envelope;
use crate::validate::ValidationError;

/// The answer to one `tools/call` (MCP `CallToolResult`), as [`Tool::call`](super::Tool::call)
/// and [`Server::call`](crate::Server::call) give it: convert it with
/// [`Answer::into_result`] (or `CallToolResult::from`) for rmcp, or serialise it as it is.
///
/// ```
/// use mcp_fusion::tools::Answer;
/// use mcp_fusion::{ErrorCode, ToolError};
/// use mcp_fusion::rmcp::model::CallToolResult;
///
/// let answer = Answer::from(ToolError::new(ErrorCode::NOT_FOUND, "No invoice inv_9."));
/// assert!(answer.is_error());
/// assert!(answer.text().starts_with("<tool_error code=\"NOT_FOUND\""));
/// let json = serde_json::to_string(&answer).unwrap();
/// assert_eq!(json, serde_json::to_string(&CallToolResult::from(answer)).unwrap());
/// ```
#[derive(Debug)]
pub struct Answer(Inner);

#[derive(Debug)]
enum Inner {
    Result(CallToolResult),
    Envelope(Envelope),
    /// The handler answered with a JSON-RPC error (rmcp's `ErrorData`): no result.
    Protocol(rmcp::ErrorData),
}

impl Answer {
    pub(crate) fn envelope(envelope: Envelope) -> Self {
        Answer(Inner::Envelope(envelope))
    }

    pub(crate) fn protocol(error: rmcp::ErrorData) -> Self {
        Answer(Inner::Protocol(error))
    }

    /// The JSON-RPC error the call answers instead of a result, when its handler returned
    /// rmcp's `ErrorData` (`Err(ErrorData::invalid_params(..))`): a protocol error, not a
    /// tool error.
    ///
    /// ```
    /// use mcp_fusion::tools::Answer;
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// assert!(Answer::from(ToolError::new(ErrorCode::NOT_FOUND, "No.")).protocol_error().is_none());
    /// ```
    pub fn protocol_error(&self) -> Option<&rmcp::ErrorData> {
        match &self.0 {
            Inner::Protocol(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the call failed (`isError`).
    pub fn is_error(&self) -> bool {
        match &self.0 {
            Inner::Result(result) => result.is_error == Some(true),
            Inner::Envelope(envelope) => envelope.is_error,
            Inner::Protocol(_) => true,
        }
    }

    /// The text blocks, joined by newlines: the data of a success (and its warnings), or the
    /// envelope of a failure.
    pub fn text(&self) -> String {
        match &self.0 {
            Inner::Result(result) => result
                .content
                .iter()
                .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
            Inner::Envelope(envelope) => envelope.text().into_owned(),
            Inner::Protocol(error) => protocol_text(error),
        }
    }

    /// The answer as rmcp's type (the mirror made a JSON value in `_meta`); a protocol error
    /// as an error result of its text (a transport answers it as the JSON-RPC error it is).
    pub fn into_result(self) -> CallToolResult {
        match self.0 {
            Inner::Result(result) => result,
            Inner::Envelope(envelope) => envelope.into_result(),
            Inner::Protocol(error) => {
                CallToolResult::error(vec![rmcp::model::ContentBlock::text(protocol_text(&error))])
            }
        }
    }

    /// Appends the JSON of the `CallToolResult` it converts into, the bytes
    /// `serde_json::to_vec(&answer)` writes, as the server's transports write it: an envelope
    /// from its parts, its strings escaped eight bytes at a time where nothing needs escaping
    /// (serde_json looks at every byte), a routing failure's action list escaped once per tool.
    ///
    /// ```
    /// use mcp_fusion::tools::Answer;
    /// use mcp_fusion::{ErrorCode, ToolError};
    ///
    /// let answer = Answer::from(ToolError::new(ErrorCode::NOT_FOUND, "No invoice \"inv_9\"."));
    /// let mut out = Vec::new();
    /// answer.write_json(&mut out);
    /// assert_eq!(out, serde_json::to_vec(&answer).unwrap());
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Inner::Envelope(envelope) => envelope.write_json(out, true),
            Inner::Result(result) => {
                out.reserve(128); // as `serde_json::to_vec` starts
                if let Err(e) = serde_json::to_writer(out, result) {
                    // Only a non-string map key could fail, and rmcp's result has none.
                    tracing::error!("an answer could not be written as JSON: {e}");
                }
            }
            Inner::Protocol(error) => {
                let result = Answer::protocol(error.clone()).into_result();
                if let Err(e) = serde_json::to_writer(out, &result) {
                    tracing::error!("an answer could not be written as JSON: {e}");
                }
            }
        }
    }

    /// The code of the envelope that tells how the call went, and whether it is a warning: a
    /// failure's one envelope, or a success's last warning; `None` for a plain success.
    #[cfg(feature = "otel")]
    pub(crate) fn code(&self) -> Option<(&str, bool)> {
        match &self.0 {
            Inner::Envelope(envelope) => Some(envelope.code()),
            Inner::Protocol(_) => Some(("PROTOCOL_ERROR", false)),
            Inner::Result(result) => {
                let entries = crate::envelope::mirror_entries(result);
                let entry = match result.is_error {
                    Some(true) => entries.first()?,
                    _ => entries.last()?,
                };
                let code = entry.get("code")?.as_str()?;
                let warning = entry.get("severity").and_then(|s| s.as_str()) == Some("warning");
                Some((code, warning))
            }
        }
    }

    /// The envelope, when the answer is one kept in its parts.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn as_envelope(&self) -> Option<&Envelope> {
        match &self.0 {
            Inner::Envelope(envelope) => Some(envelope),
            Inner::Result(_) | Inner::Protocol(_) => None,
        }
    }
}

impl Serialize for Answer {
    /// The JSON of the `CallToolResult` it converts into.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Inner::Result(result) => result.serialize(serializer),
            Inner::Envelope(envelope) => envelope.serialize(serializer, true),
            Inner::Protocol(error) => Answer::protocol(error.clone())
                .into_result()
                .serialize(serializer),
        }
    }
}

/// A protocol error as text: `{message} (JSON-RPC error {code})`.
fn protocol_text(error: &rmcp::ErrorData) -> String {
    format!("{} (JSON-RPC error {})", error.message, error.code.0)
}

impl From<CallToolResult> for Answer {
    fn from(result: CallToolResult) -> Self {
        Answer(Inner::Result(result))
    }
}

impl From<Answer> for CallToolResult {
    fn from(answer: Answer) -> Self {
        answer.into_result()
    }
}

impl From<ToolError> for Answer {
    /// The answer carrying exactly this envelope (ERRORS.md §1, §9).
    fn from(err: ToolError) -> Self {
        Answer::envelope(Envelope::of(err))
    }
}

impl From<&ValidationError> for Answer {
    /// The answer carrying exactly this envelope (ERRORS.md §5, §9).
    fn from(err: &ValidationError) -> Self {
        Answer::envelope(err.envelope())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::envelope::Envelope;
    use crate::router::ActionRouter;
    use crate::validate::Schema;
    use crate::{ErrorCode, Severity};

    /// Written from its parts, an envelope is the JSON of the `CallToolResult` it converts into.
    #[test]
    fn envelopes_serialise_as_their_results() {
        let schema = Schema::new(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"enum": ["a", "b"]}},
            "required": ["n"],
            "additionalProperties": false,
        }))
        .unwrap();
        let invalid = schema
            .validate("demo.count", &json!({"n": 0, "s": "<c>", "x": "\u{1b}\"'"}))
            .unwrap_err();
        let errors = [
            ToolError::new(ErrorCode::NOT_FOUND, "No invoice \"inv_9\" <here>.")
                .suggest("List them & retry.")
                .actions(["billing.list_invoices", "billing.get_invoice"])
                .detail("requestedId", "inv_9\u{0}")
                .retry_after(5),
            ToolError::new(ErrorCode::DEPRECATED, "Old.").severity(Severity::Warning),
            ToolError::new(ErrorCode::custom("MY_CODE").unwrap(), "Custom é ✓."),
        ];
        let mut answers: Vec<(Answer, Answer)> = errors
            .iter()
            .map(|err| (err.clone().into(), err.clone().into()))
            .collect();
        answers.push(((&invalid).into(), (&invalid).into()));
        let awareness = |e: Envelope| {
            let text = format!("{}\n<contract_awareness/>", e.text());
            Answer::envelope(e.with_contract_changes(text, 2))
        };
        answers.push((awareness(invalid.envelope()), awareness(invalid.envelope())));
        answers.push((
            awareness(Envelope::of(errors[0].clone())),
            awareness(Envelope::of(errors[0].clone())),
        ));
        // Routing failures, made from their parts, for a router with hostile names (and fields
        // that some of its actions take, ERRORS.md §11.1) and for one without actions.
        let schemas = [
            json!({"properties": {"<f>": {}, "x": {}}}),
            json!({"properties": {"x": {}}}),
            json!({}),
        ];
        let hostile =
            ActionRouter::new("t<&>", ["a\"b", "c]]>d\u{1}", "\u{fffe}"]).schemas(schemas.iter());
        let empty = ActionRouter::new("t", std::iter::empty::<String>());
        let sent = [
            json!(null),
            json!(""),
            json!(7),
            json!({"x": "<y>"}),
            json!("a\"c"),
            json!("t<&>.zz"),
            json!("</tool_error>\u{0}"),
            json!("x".repeat(300)),
        ];
        let others = [
            json!({}),
            json!({"<f>": 1}),
            json!({"x": 1}),
            json!({"zz": 0}),
        ];
        for router in [&hostile, &empty] {
            for (value, others) in sent.iter().flat_map(|v| others.iter().map(move |o| (v, o))) {
                let mut args = others.as_object().cloned().unwrap_or_default();
                args.insert("action".into(), value.clone());
                let routed = router.route_or_render(&args).unwrap_err();
                let args = Value::Object(args);
                let made = Envelope::of(router.error(&router.route(Some(&args)).unwrap_err()));
                assert_eq!(routed.text(), made.text());
                assert_eq!(routed.len(), made.len());
                let json = |e: &Envelope| {
                    let mut out = Vec::new();
                    e.serialize(&mut serde_json::Serializer::new(&mut out), true)
                        .unwrap();
                    String::from_utf8(out).unwrap()
                };
                assert_eq!(json(&routed), json(&made));
                answers.push((Answer::envelope(routed), Answer::envelope(made)));
            }
        }
        for (answer, twin) in answers {
            assert!(answer.as_envelope().is_some());
            let direct = serde_json::to_string(&answer).unwrap();
            let mut written = Vec::new();
            answer.write_json(&mut written);
            assert_eq!(String::from_utf8(written).unwrap(), direct);
            let result = twin.into_result();
            assert_eq!(direct, serde_json::to_string(&result).unwrap());
            // Without `resultType`, as for a session of an earlier revision.
            let mut legacy = Vec::new();
            let envelope = answer.as_envelope().unwrap();
            envelope
                .serialize(&mut serde_json::Serializer::new(&mut legacy), false)
                .unwrap();
            let mut expected = serde_json::to_value(&result).unwrap();
            expected.as_object_mut().unwrap().shift_remove("resultType");
            assert_eq!(String::from_utf8(legacy).unwrap(), expected.to_string());
            // Written by hand, the same bytes.
            for (result_type, expected) in [(true, direct.clone()), (false, expected.to_string())] {
                let mut by_hand = Vec::new();
                envelope.write_json(&mut by_hand, result_type);
                assert_eq!(String::from_utf8(by_hand).unwrap(), expected);
            }
        }
        // A result an action made is written by serde_json.
        let content = vec![rmcp::model::ContentBlock::text("a\"b <c>\u{1}")];
        let result = Answer::from(CallToolResult::success(content));
        let mut written = Vec::new();
        result.write_json(&mut written);
        assert_eq!(written, serde_json::to_vec(&result).unwrap());
    }
}
