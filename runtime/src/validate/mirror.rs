//! A validation error's mirror (ERRORS.md §9): one `{path, problem, text}` per `<field>` line
//! (with `elements` for a line of several elements of one array, §11.6), the strings plain, a
//! sent value cut in `text` as the line shows it.

use serde_json::Value;

use super::ValidationError;
use crate::envelope::{Envelope, FieldLines, FieldsMirror, Mirror};

impl ValidationError {
    /// This envelope's mirror object (ERRORS.md §9): `kind`, `code`, `severity`, `action`, one
    /// `{path, problem, text}` per `<field>` line (`elements` too for a line of several elements
    /// of one array), `recovery`, and `more` when a `(more)` line is written.
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
        let mut fields = FieldLines::with_capacity(self.fields().len());
        for field in self.fields() {
            let plain = fields.buffer();
            let start = plain.len();
            field.write_name(plain);
            let split = plain.len();
            field.problem().write_line(plain);
            fields.mark(start, split, field.problem().kind().row(), field.elements());
        }
        Mirror::Validation(self.mirror_of(self.action().into(), fields)).to_value(None)
    }

    /// The mirror around its field objects.
    fn mirror_of(&self, action: Box<str>, fields: FieldLines) -> FieldsMirror {
        FieldsMirror {
            action,
            fields,
            more: self.more(),
        }
    }

    /// This error on its way out: its text, its mirror, `isError` set; each field's path and
    /// line are laid out once for both.
    pub(crate) fn envelope(&self) -> Envelope {
        let mut fields = FieldLines::with_capacity(self.fields().len());
        let text = self.write(Some(&mut fields));
        Envelope::validation(text, self.mirror_of(self.action().into(), fields))
    }

    /// [`envelope`](Self::envelope), for an error not needed after it: its action moves into
    /// the mirror.
    pub(crate) fn into_envelope(mut self) -> Envelope {
        let mut fields = FieldLines::with_capacity(self.fields().len());
        let text = self.write(Some(&mut fields));
        let action = std::mem::take(&mut self.action).into_boxed_str();
        Envelope::validation(text, self.mirror_of(action, fields))
    }
}
