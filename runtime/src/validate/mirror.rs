//! A validation error's mirror (ERRORS.md §9): one `{path, problem, text}` per `<field>` line,
//! the strings plain, a sent value cut in `text` as the line shows it.

use serde_json::Value;

use super::ValidationError;
use crate::envelope::{Envelope, FieldMirror, FieldsMirror, Mirror};

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
            .map(|problem| FieldMirror {
                path: problem.path().to_string(),
                problem: problem.kind().row(),
                text: problem.line(),
            })
            .collect();
        self.mirror_of(fields).to_value(None)
    }

    /// The mirror around its field objects.
    fn mirror_of(&self, fields: Vec<FieldMirror>) -> Mirror {
        Mirror::Validation(FieldsMirror {
            action: self.action().to_owned(),
            fields,
            more: self.more(),
        })
    }

    /// This error on its way out: its text, its mirror, `isError` set; each field's path and
    /// line are laid out once for both.
    pub(crate) fn envelope(&self) -> Envelope {
        let mut fields = Vec::with_capacity(self.problems().len());
        let text = self.write(Some(&mut fields));
        Envelope {
            text,
            mirror: self.mirror_of(fields),
            is_error: true,
            contract_changes: None,
        }
    }
}
