//! Argument validation: every problem in a call's arguments, found against the action's JSON
//! Schema and written as one `<validation_error>` (ERRORS.md §5). All message text lives here.

mod detect;
mod text;

use std::fmt;
use std::sync::Arc;

use serde_json::{Number, Value};

use crate::envelope::{escape_attr, escape_text};

pub use detect::{Schema, SchemaError};
pub(crate) use text::{push_cut, sent as sent_text};

/// At most this many `<field>` lines; the rest are counted in a `(more)` line.
pub const MAX_FIELDS: usize = 20;

const RECOVERY: &str = "Fix the fields above and call the tool again. Do not explain the error.";

/// Where a problem is: object keys and array indices from the arguments' root.
///
/// ```
/// use mcp_fusion::validate::FieldPath;
/// let path = FieldPath::root().key("lines").index(0).key("quantity");
/// assert_eq!(path.to_string(), "lines[0].quantity");
/// assert_eq!(FieldPath::root().to_string(), "(root)");
/// assert_eq!(FieldPath::root().key("meta").key("sub key").to_string(), "meta[\"sub key\"]");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(Vec<PathSegment>);

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

impl FieldPath {
    /// The arguments as a whole.
    pub fn root() -> Self {
        Self::default()
    }

    /// This path, then an object key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.0.push(PathSegment::Key(key.into()));
        self
    }

    /// This path, then an array index.
    pub fn index(mut self, index: usize) -> Self {
        self.0.push(PathSegment::Index(index));
        self
    }

    /// The segments, from the root.
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    /// The `name` attribute's text (before escaping).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(root)");
        }
        let mut out = String::new();
        for segment in &self.0 {
            match segment {
                PathSegment::Key(key) => text::push_key(&mut out, key),
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        f.write_str(&out)
    }
}

impl<S: Into<String>> FromIterator<S> for FieldPath {
    /// A path of object keys.
    fn from_iter<I: IntoIterator<Item = S>>(keys: I) -> Self {
        FieldPath(
            keys.into_iter()
                .map(|k| PathSegment::Key(k.into()))
                .collect(),
        )
    }
}

/// A JSON type, as a schema's `type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `string`
    String,
    /// `number`
    Number,
    /// `integer`
    Integer,
    /// `boolean`
    Boolean,
    /// `array`
    Array,
    /// `object`
    Object,
    /// `null`
    Null,
}

impl JsonType {
    /// Reads a `type` keyword value.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            "null" => JsonType::Null,
            _ => return None,
        })
    }

    fn phrase(self) -> &'static str {
        match self {
            JsonType::String => "a string",
            JsonType::Number => "a number",
            JsonType::Integer => "an integer",
            JsonType::Boolean => "a boolean",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
            JsonType::Null => "null",
        }
    }
}

/// A `format` the contract asserts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Format {
    /// `email` (RFC 5321)
    Email,
    /// `uri` (RFC 3986, absolute)
    Uri,
    /// `uuid` (RFC 4122)
    Uuid,
    /// `date-time` (RFC 3339)
    DateTime,
    /// `date` (RFC 3339 full-date)
    Date,
    /// `ipv4`
    Ipv4,
    /// `ipv6`
    Ipv6,
    /// Any other format the validator asserts, by name.
    Other(String),
}

impl Format {
    /// Reads a `format` keyword value.
    pub fn from_name(name: &str) -> Self {
        match name {
            "email" => Format::Email,
            "uri" => Format::Uri,
            "uuid" => Format::Uuid,
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            other => Format::Other(other.to_owned()),
        }
    }
}

/// What is wrong at a path: one failing keyword, with what the line needs to say.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// A required field is absent. `expected` is its declared type (empty: any value).
    MissingRequired {
        /// The declared types, in order.
        expected: Vec<JsonType>,
    },
    /// The value has the wrong type.
    InvalidType {
        /// The declared types, in order.
        expected: Vec<JsonType>,
    },
    /// The string does not match its `format`.
    Format(Format),
    /// The string does not match its `pattern`.
    Pattern {
        /// The pattern as written in the schema.
        pattern: String,
    },
    /// Fewer characters than `minLength`.
    TooShort {
        /// The bound.
        min: u64,
    },
    /// More characters than `maxLength`.
    TooLong {
        /// The bound.
        max: u64,
    },
    /// Below `minimum` (or at or below `exclusiveMinimum`).
    TooSmall {
        /// The bound.
        limit: Number,
        /// Whether the bound is exclusive.
        exclusive: bool,
    },
    /// Above `maximum` (or at or above `exclusiveMaximum`).
    TooLarge {
        /// The bound.
        limit: Number,
        /// Whether the bound is exclusive.
        exclusive: bool,
    },
    /// Fewer items than `minItems`.
    TooFewItems {
        /// The bound.
        min: u64,
    },
    /// More items than `maxItems`.
    TooManyItems {
        /// The bound.
        max: u64,
    },
    /// Not a multiple of `multipleOf`.
    NotMultipleOf {
        /// The divisor.
        multiple_of: Number,
    },
    /// Not one of the `enum` values.
    InvalidOption {
        /// The allowed values, in order.
        allowed: Arc<[Value]>,
    },
    /// Not the `const` value.
    ConstMismatch {
        /// The one allowed value.
        expected: Value,
    },
    /// Matches none of the `anyOf` / `oneOf` alternatives (or several of `oneOf`).
    NoAlternative {
        /// `true` for `oneOf`, `false` for `anyOf`.
        one_of: bool,
    },
    /// A field the schema does not declare, where `additionalProperties` is `false`.
    UnrecognizedField {
        /// The closest declared field, if one is close.
        did_you_mean: Option<String>,
        /// The object's declared fields, in order.
        known: Arc<[String]>,
    },
    /// Any other failing keyword.
    Other {
        /// The keyword.
        keyword: String,
    },
    /// A domain rule of the handler's own.
    Custom {
        /// The headline (no final period).
        headline: String,
        /// The expectation, written after the sent value, if any.
        expected: Option<String>,
    },
}

impl ProblemKind {
    /// The position of this kind among the problems at one path (§5: type first, custom last).
    pub(crate) fn rank(&self) -> u8 {
        match self {
            ProblemKind::MissingRequired { .. } | ProblemKind::UnrecognizedField { .. } => 0,
            ProblemKind::InvalidType { .. } => 0,
            ProblemKind::Format(_) => 1,
            ProblemKind::Pattern { .. } => 2,
            ProblemKind::TooShort { .. } => 3,
            ProblemKind::TooLong { .. } => 4,
            ProblemKind::TooSmall {
                exclusive: false, ..
            } => 5,
            ProblemKind::TooSmall {
                exclusive: true, ..
            } => 6,
            ProblemKind::TooLarge {
                exclusive: false, ..
            } => 7,
            ProblemKind::TooLarge {
                exclusive: true, ..
            } => 8,
            ProblemKind::TooFewItems { .. } => 9,
            ProblemKind::TooManyItems { .. } => 10,
            ProblemKind::NotMultipleOf { .. } => 11,
            ProblemKind::InvalidOption { .. } => 12,
            ProblemKind::ConstMismatch { .. } => 13,
            ProblemKind::NoAlternative { one_of: false } => 14,
            ProblemKind::NoAlternative { one_of: true } => 15,
            ProblemKind::Other { .. } => 16,
            ProblemKind::Custom { .. } => 17,
        }
    }

    fn headline(&self) -> String {
        match self {
            ProblemKind::MissingRequired { .. } => "Required field is missing".into(),
            ProblemKind::InvalidType { .. } => "Invalid type".into(),
            ProblemKind::Format(format) => match format {
                Format::Email => "Invalid email format".into(),
                Format::Uri => "Invalid URL format".into(),
                Format::Uuid => "Invalid UUID format".into(),
                Format::DateTime => "Invalid date-time format".into(),
                Format::Date => "Invalid date format".into(),
                Format::Ipv4 | Format::Ipv6 => "Invalid IP address".into(),
                Format::Other(_) => "Invalid format".into(),
            },
            ProblemKind::Pattern { .. } => "Invalid format".into(),
            ProblemKind::TooShort { .. } => "Too short".into(),
            ProblemKind::TooLong { .. } => "Too long".into(),
            ProblemKind::TooSmall { .. } => "Too small".into(),
            ProblemKind::TooLarge { .. } => "Too large".into(),
            ProblemKind::TooFewItems { .. } => "Too few items".into(),
            ProblemKind::TooManyItems { .. } => "Too many items".into(),
            ProblemKind::NotMultipleOf { multiple_of } => {
                format!("Not a multiple of {}", text::number(multiple_of))
            }
            ProblemKind::InvalidOption { .. } => "Invalid option".into(),
            ProblemKind::ConstMismatch { .. }
            | ProblemKind::NoAlternative { .. }
            | ProblemKind::Other { .. } => "Invalid value".into(),
            ProblemKind::UnrecognizedField { .. } => "Unrecognized field".into(),
            ProblemKind::Custom { headline, .. } => headline.clone(),
        }
    }

    /// The expectation, without its final period (`None`: nothing to add).
    fn expected(&self) -> Option<String> {
        Some(match self {
            ProblemKind::MissingRequired { expected } | ProblemKind::InvalidType { expected } => {
                format!("Expected {}", types(expected))
            }
            ProblemKind::Format(format) => match format {
                Format::Email => "Expected a valid email address".into(),
                Format::Uri => "Expected a valid URL (e.g. https://example.com)".into(),
                Format::Uuid => {
                    "Expected a valid UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)".into()
                }
                Format::DateTime => {
                    "Expected an ISO 8601 date-time (e.g. 2024-01-15T10:30:00Z)".into()
                }
                Format::Date => "Expected an ISO 8601 date (e.g. 2024-01-15)".into(),
                Format::Ipv4 => "Expected a valid IPv4 address".into(),
                Format::Ipv6 => "Expected a valid IPv6 address".into(),
                Format::Other(name) => format!("Expected a string in the \"{name}\" format"),
            },
            ProblemKind::Pattern { pattern } => {
                format!("Expected a string matching the pattern {pattern}")
            }
            ProblemKind::TooShort { min } => format!(
                "Expected at least {}",
                text::count(*min, "character", "characters")
            ),
            ProblemKind::TooLong { max } => format!(
                "Expected at most {}",
                text::count(*max, "character", "characters")
            ),
            ProblemKind::TooSmall { limit, exclusive } => {
                format!(
                    "Expected a number {} {}",
                    if *exclusive { ">" } else { ">=" },
                    text::number(limit)
                )
            }
            ProblemKind::TooLarge { limit, exclusive } => {
                format!(
                    "Expected a number {} {}",
                    if *exclusive { "<" } else { "<=" },
                    text::number(limit)
                )
            }
            ProblemKind::TooFewItems { min } => {
                format!("Expected at least {}", text::count(*min, "item", "items"))
            }
            ProblemKind::TooManyItems { max } => {
                format!("Expected at most {}", text::count(*max, "item", "items"))
            }
            ProblemKind::NotMultipleOf { multiple_of } => {
                format!("Expected a multiple of {}", text::number(multiple_of))
            }
            ProblemKind::InvalidOption { allowed } => {
                let mut out = String::from("Expected one of: ");
                list(&mut out, allowed.iter().map(literal));
                out
            }
            ProblemKind::ConstMismatch { expected } => {
                format!("Expected exactly {}", literal(expected))
            }
            ProblemKind::NoAlternative { .. } => {
                "Expected a value matching one of the allowed shapes".into()
            }
            ProblemKind::UnrecognizedField {
                did_you_mean: Some(best),
                ..
            } => {
                format!("Remove it or rename it: did you mean \"{best}\"?")
            }
            ProblemKind::UnrecognizedField {
                did_you_mean: None,
                known,
            } if known.is_empty() => "Remove it".into(),
            ProblemKind::UnrecognizedField {
                did_you_mean: None,
                known,
            } => {
                let mut out = String::from("Remove it. Known fields: ");
                list(&mut out, known.iter().cloned());
                out
            }
            ProblemKind::Other { keyword } => {
                format!("Expected a value that satisfies \"{keyword}\"")
            }
            ProblemKind::Custom { expected, .. } => return expected.clone(),
        })
    }
}

/// `a string or null`; `a value` when nothing is declared.
fn types(expected: &[JsonType]) -> String {
    if expected.is_empty() {
        return "a value".into();
    }
    let phrases: Vec<&str> = expected.iter().map(|t| t.phrase()).collect();
    phrases.join(" or ")
}

/// Appends at most 20 entries joined by `, `, then `, ...` when there are more.
fn list(out: &mut String, items: impl Iterator<Item = String>) {
    for (i, item) in items.enumerate() {
        if i == MAX_FIELDS {
            out.push_str(", ...");
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&item);
    }
}

/// An enum or const value: JSON, but strings single-quoted (not escaped, not cut).
fn literal(value: &Value) -> String {
    match value {
        Value::String(s) => format!("'{s}'"),
        Value::Number(n) => text::number(n),
        Value::Null | Value::Bool(_) => value.to_string(),
        Value::Array(_) | Value::Object(_) => {
            // Containers are written as compact JSON with this contract's numbers.
            let mut out = String::new();
            compact(&mut out, value);
            out
        }
    }
}

fn compact(out: &mut String, value: &Value) {
    match value {
        Value::Number(n) => out.push_str(&text::number(n)),
        Value::String(s) => text::json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                compact(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                text::json_string(out, key);
                out.push(':');
                compact(out, item);
            }
            out.push('}');
        }
        Value::Null | Value::Bool(_) => out.push_str(&value.to_string()),
    }
}

/// One problem in the arguments: where, what, and what was sent there.
///
/// ```
/// use mcp_fusion::validate::{FieldPath, Problem, ProblemKind};
/// use serde_json::json;
///
/// let problem = Problem::new(
///     FieldPath::root().key("quantity"),
///     ProblemKind::TooSmall { limit: 1.into(), exclusive: false },
///     Some(&json!(0)),
/// );
/// assert_eq!(problem.line(), "Too small. You sent: 0. Expected a number >= 1.");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    path: FieldPath,
    kind: ProblemKind,
    sent: String,
}

impl Problem {
    /// A problem at `path`; `sent` is the value found there (`None`: absent).
    pub fn new(path: FieldPath, kind: ProblemKind, sent: Option<&Value>) -> Self {
        let sent = sent.map_or_else(|| "(missing)".to_owned(), text::sent);
        Problem { path, kind, sent }
    }

    /// A domain rule of the handler's own: its headline and, optionally, what was expected.
    ///
    /// ```
    /// use mcp_fusion::validate::{FieldPath, Problem};
    /// use serde_json::json;
    /// let p = Problem::custom(FieldPath::root().key("due_date"), "Due date is in the past", Some(&json!("2020-01-01")), Some("Expected a date from today on."));
    /// assert_eq!(p.line(), "Due date is in the past. You sent: '2020-01-01'. Expected a date from today on.");
    /// ```
    pub fn custom(
        path: FieldPath,
        headline: impl Into<String>,
        sent: Option<&Value>,
        expected: Option<&str>,
    ) -> Self {
        let trim = |s: &str| s.strip_suffix('.').unwrap_or(s).to_owned();
        let kind = ProblemKind::Custom {
            headline: trim(&headline.into()),
            expected: expected.map(trim),
        };
        Problem::new(path, kind, sent)
    }

    /// Where the problem is.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// What the problem is.
    pub fn kind(&self) -> &ProblemKind {
        &self.kind
    }

    /// The sent value as the line shows it (`(missing)`, `'text'`, `array(3)`, ...).
    pub fn sent(&self) -> &str {
        &self.sent
    }

    /// The `<field>` text: `{headline}. You sent: {sent}. {expected}.` (plain, not escaped).
    pub fn line(&self) -> String {
        let mut line = self.kind.headline();
        line.push_str(". You sent: ");
        line.push_str(&self.sent);
        let mut open = self.sent.ends_with("...");
        if let Some(expected) = self.kind.expected() {
            line.push_str(if open { " " } else { ". " });
            line.push_str(&expected);
            // A list cut with `...` or a question ends the line by itself.
            open = expected.ends_with("...") || expected.ends_with('?');
        }
        if !open {
            line.push('.');
        }
        line
    }
}

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
    action: String,
    problems: Vec<Problem>,
}

impl ValidationError {
    /// Problems of a call to the qualified action `action`, in the order they are to be shown.
    pub fn new(action: impl Into<String>, problems: Vec<Problem>) -> Self {
        ValidationError {
            action: action.into(),
            problems,
        }
    }

    /// The qualified action.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Every problem, in order (only the first 20 are written).
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The envelope's text. `isError` is always true.
    pub fn render(&self) -> String {
        let shown = &self.problems[..self.problems.len().min(MAX_FIELDS)];
        let mut out = String::with_capacity(200 + shown.len() * 120);
        out.push_str("<validation_error action=\"");
        escape_attr(&mut out, &self.action);
        out.push_str("\">\n");
        for problem in shown {
            out.push_str("<field name=\"");
            escape_attr(&mut out, &problem.path.to_string());
            out.push_str("\">");
            escape_text(&mut out, &problem.line());
            out.push_str("</field>\n");
        }
        if let Some(more) = self
            .problems
            .len()
            .checked_sub(MAX_FIELDS)
            .filter(|&k| k > 0)
        {
            out.push_str("<field name=\"(more)\">");
            out.push_str(&text::count(more as u64, "more problem", "more problems"));
            out.push_str(" not shown. Fix the fields above first.</field>\n");
        }
        out.push_str("<recovery>");
        out.push_str(RECOVERY);
        out.push_str("</recovery>\n</validation_error>");
        out
    }
}

impl fmt::Display for ValidationError {
    /// A one-line summary for logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid arguments for {}: {} problem(s)",
            self.action,
            self.problems.len()
        )
    }
}

impl std::error::Error for ValidationError {}
