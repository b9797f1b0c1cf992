//! A validation error's mirror (ERRORS.md §9): one `{path, problem, text}` per `<field>` line,
//! the strings plain, a sent value cut in `text` as the line shows it.

use serde_json::{Map, Value};

use super::{MAX_FIELDS, RECOVERY, ValidationError};
use crate::envelope::Envelope;

impl ValidationError {
    /// This envelope's mirror object (ERRORS.md §9): `kind`, `code`, `severity`, `action`, one
    /// `{path, problem, text}` per `<field>` line, `recovery`, and `more` when a `(more)` line is
    /// written.
    ///
    /// ```
    /// use mcp_fusion::validate::Schema;
    /// use serde_json::json;
    ///
    /// let schema = Schema::new(&json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}})).unwrap();
    /// let err = schema.validate("demo.count", &json!({"n": 0})).unwrap_err();
    /// assert_eq!(err.mirror()["fields"], json!([{"path": "n", "problem": "minimum",
    ///     "text": "Too small. You sent: 0. Expected a number >= 1."}]));
    /// ```
    pub fn mirror(&self) -> Value {
        let problems = self.problems();
        let fields = problems
            .iter()
            .take(MAX_FIELDS)
            .map(|problem| {
                let mut field = Map::new();
                field.insert("path".into(), problem.path().to_string().into());
                field.insert("problem".into(), problem.kind().name().into());
                field.insert("text".into(), problem.line().into());
                Value::Object(field)
            })
            .collect();
        let mut out = Map::new();
        out.insert("kind".into(), "validation_error".into());
        out.insert("code".into(), "VALIDATION_ERROR".into());
        out.insert("severity".into(), "error".into());
        out.insert("action".into(), self.action().into());
        out.insert("fields".into(), Value::Array(fields));
        out.insert("recovery".into(), RECOVERY.into());
        if let Some(more) = problems.len().checked_sub(MAX_FIELDS).filter(|&k| k > 0) {
            out.insert("more".into(), more.into());
        }
        Value::Object(out)
    }
}

impl ValidationError {
    /// This error on its way out: its text, its mirror, `isError` set.
    pub(crate) fn envelope(&self) -> Envelope {
        Envelope {
            text: self.render(),
            mirror: self.mirror(),
            is_error: true,
        }
    }
}
