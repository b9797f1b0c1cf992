//! A validation error's mirror (ERRORS.md §9): one `{path, problem, text}` per `<field>` line,
//! the strings plain, a sent value cut in `text` as the line shows it.

use serde_json::{Map, Value};

use super::{Problem, RECOVERY, ValidationError};
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
        let fields = self
            .problems()
            .iter()
            .map(|problem| field(problem.path().to_string(), problem, problem.line()))
            .collect();
        self.mirror_with(fields)
    }

    /// The mirror around its field objects.
    fn mirror_with(&self, fields: Vec<Value>) -> Value {
        let mut out = Map::with_capacity(8);
        out.insert("kind".into(), "validation_error".into());
        out.insert("code".into(), "VALIDATION_ERROR".into());
        out.insert("severity".into(), "error".into());
        out.insert("action".into(), self.action().into());
        out.insert("fields".into(), Value::Array(fields));
        out.insert("recovery".into(), RECOVERY.into());
        if self.more() > 0 {
            out.insert("more".into(), self.more().into());
        }
        Value::Object(out)
    }

    /// This error on its way out: its text, its mirror, `isError` set; each field's path and
    /// line are laid out once for both.
    pub(crate) fn envelope(&self) -> Envelope {
        let mut fields = Vec::with_capacity(self.problems().len());
        let text = self.write(Some(&mut fields));
        Envelope {
            text,
            mirror: self.mirror_with(fields),
            is_error: true,
        }
    }
}

/// One field's mirror object.
pub(super) fn field(path: String, problem: &Problem, line: String) -> Value {
    let mut field = Map::with_capacity(3);
    field.insert("path".into(), path.into());
    field.insert("problem".into(), problem.kind().name().into());
    field.insert("text".into(), line.into());
    Value::Object(field)
}
