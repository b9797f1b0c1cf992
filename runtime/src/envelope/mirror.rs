//! The machine-readable mirror of an envelope (ERRORS.md §9): the same facts as JSON in the
//! result's `_meta`, for hosts and typed clients. Values are the plain strings, before the text's
//! escaping. (A validation error's mirror is written by `validate`, which knows its problems.)

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::ToolError;

/// The key of the mirror in a result's `_meta`: an array with one object per envelope, in the
/// order of the text blocks.
///
/// ```
/// use mcp_fusion::{ErrorCode, ToolError};
/// use mcp_fusion::client::MIRROR_KEY;
/// use mcp_fusion::rmcp::model::CallToolResult;
///
/// let result = CallToolResult::from(ToolError::new(ErrorCode::NOT_FOUND, "No invoice inv_9.").detail("requestedId", "inv_9"));
/// let mirror = &result.meta.as_ref().unwrap().0[MIRROR_KEY][0];
/// assert_eq!(mirror["code"], "NOT_FOUND");
/// assert_eq!(mirror["details"], serde_json::json!([["requestedId", "inv_9"]]));
/// ```
pub const MIRROR_KEY: &str = "dev.mcp-fusion/errors";

impl ToolError {
    /// This envelope's mirror object (ERRORS.md §9): `kind`, `code`, `severity`, `message`,
    /// and `recovery`, `actions`, `details`, `retry_after` when the envelope has them.
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// let mirror = ToolError::new(ErrorCode::RATE_LIMITED, "Slow down <now>.").retry_after(5).mirror();
    /// assert_eq!(mirror, serde_json::json!({"kind": "tool_error", "code": "RATE_LIMITED",
    ///     "severity": "error", "message": "Slow down <now>.", "retry_after": 5}));
    /// ```
    pub fn mirror(&self) -> Value {
        let mut out = Map::with_capacity(8);
        out.insert("kind".into(), "tool_error".into());
        out.insert("code".into(), self.code().as_str().into());
        out.insert("severity".into(), self.severity_level().as_str().into());
        out.insert("message".into(), self.message().into());
        if let Some(recovery) = self.recovery() {
            out.insert("recovery".into(), recovery.into());
        }
        if self.available_actions().len() > 0 {
            let actions = self.available_actions().map(Value::from).collect();
            out.insert("actions".into(), Value::Array(actions));
        }
        if self.detail_pairs().len() > 0 {
            let pairs = self
                .detail_pairs()
                .map(|(k, v)| Value::Array(vec![k.into(), v.into()]))
                .collect();
            out.insert("details".into(), Value::Array(pairs));
        }
        if let Some(secs) = self.retry_after_secs() {
            out.insert("retry_after".into(), secs.into());
        }
        Value::Object(out)
    }
}

/// One envelope on its way out: its text, its mirror and the result's `isError`.
pub(crate) struct Envelope {
    pub(crate) text: String,
    pub(crate) mirror: Value,
    pub(crate) is_error: bool,
}

impl Envelope {
    pub(crate) fn of(err: &ToolError) -> Self {
        Envelope {
            text: err.render(),
            mirror: err.mirror(),
            is_error: err.is_error(),
        }
    }

    /// Records that a `<contract_awareness>` block counting `changes` was written.
    pub(crate) fn with_contract_changes(mut self, text: String, changes: usize) -> Self {
        self.text = text;
        if let Value::Object(mirror) = &mut self.mirror {
            mirror.insert("contract_changes".into(), changes.into());
        }
        self
    }

    /// A result carrying exactly this envelope (ERRORS.md §1, §9).
    pub(crate) fn into_result(self) -> CallToolResult {
        let content = vec![ContentBlock::text(self.text)];
        let mut result = if self.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        push(&mut result, self.mirror);
        result
    }
}

/// Appends one object to a result's mirror, making the array when it is the first.
pub(crate) fn push(result: &mut CallToolResult, mirror: Value) {
    let meta = result.meta.get_or_insert_with(MetaObject::new);
    match meta.0.entry(MIRROR_KEY) {
        Entry::Occupied(mut at) => match at.get_mut() {
            Value::Array(entries) => entries.push(mirror),
            other => *other = Value::Array(vec![mirror]),
        },
        Entry::Vacant(at) => {
            at.insert(Value::Array(vec![mirror]));
        }
    }
}

/// The mirror objects of a result, in order; empty when it carries none.
#[cfg(any(feature = "client", feature = "otel"))]
pub(crate) fn entries(result: &CallToolResult) -> &[Value] {
    match result.meta.as_ref().and_then(|meta| meta.0.get(MIRROR_KEY)) {
        Some(Value::Array(entries)) => entries,
        _ => &[],
    }
}
