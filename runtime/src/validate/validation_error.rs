//! [`ValidationError`]: every problem of a call's arguments, as one `<validation_error>`.

use std::fmt;

use super::Problem;
use super::group::{Field, in_order};

/// Bad arguments: every problem found, as one `<validation_error>` for a qualified action.
///
/// ```
/// use mcp_fusion::validate::Schema;
/// use serde_json::json;
///
/// let schema = Schema::new(&json!({
///     "type": "object",
///     "properties": {"quantity": {"type": "integer", "minimum": 1}},
///     "required": ["quantity"],
///     "additionalProperties": false
/// })).unwrap();
/// let err = schema.validate("billing.add_line", &json!({"quantity": 0, "quantty": 2})).unwrap_err();
/// assert_eq!(err.render(), "\
/// <validation_error action=\"billing.add_line\">
/// <field name=\"quantity\">Too small. You sent: 0. Expected a number >= 1.</field>
/// <field name=\"quantty\">Unrecognized field. You sent: 2. Remove it or rename it: did you mean \"quantity\"?</field>
/// <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
/// </validation_error>");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationError {
    pub(super) action: String,
    /// The fields shown, at most [`MAX_FIELDS`](super::MAX_FIELDS).
    pub(super) fields: Vec<Field>,
    /// How many problems no field shown reports (the `(more)` line).
    pub(super) more: usize,
}
impl ValidationError {
    /// Problems of a call to the qualified action `action`, in the order they are to be shown:
    /// the same problem in several elements of one array becomes one field at the place of
    /// the first (ERRORS.md §11.6), the first 20 fields are kept, the problems of the others
    /// counted.
    ///
    /// ```
    /// use mcp_fusion::validate::{FieldPath, Problem, ValidationError};
    /// let lines = (0..25).map(|i| {
    ///     Problem::custom(FieldPath::root().key("lines").index(i), "Out of stock", None, None)
    /// });
    /// let err = ValidationError::new("shop.order", lines.collect());
    /// assert_eq!((err.fields().len(), err.fields()[0].name(), err.more()), (1, "lines[0-24]".to_owned(), 0));
    /// ```
    pub fn new(action: impl Into<String>, problems: Vec<Problem>) -> Self {
        let (fields, more) = in_order(problems, super::MAX_FIELDS);
        ValidationError::of_fields(action.into(), fields, more)
    }

    /// The fields shown and how many problems none of them reports.
    pub(super) fn of_fields(action: String, fields: Vec<Field>, more: usize) -> Self {
        ValidationError {
            action,
            fields,
            more,
        }
    }

    /// The qualified action.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The `<field>` lines shown, in order: at most 20.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The problem of each `<field>` line shown, in order (of a line for several elements,
    /// the first element's).
    pub fn problems(&self) -> impl ExactSizeIterator<Item = &Problem> {
        self.fields.iter().map(Field::problem)
    }

    /// How many problems no line shown reports (the `(more)` line's count).
    pub fn more(&self) -> usize {
        self.more
    }

    /// How many problems were found: those the lines shown report, and the others.
    pub fn count(&self) -> usize {
        self.fields.iter().map(Field::count).sum::<usize>() + self.more
    }
}

impl fmt::Display for ValidationError {
    /// A one-line summary for logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid arguments for {}: {} problem(s)",
            self.action,
            self.count()
        )
    }
}

impl std::error::Error for ValidationError {}
