//! Argument validation: every problem in a call's arguments, found against the action's JSON
//! Schema and written as one `<validation_error>` (ERRORS.md §5). All message text lives here.

mod detect;
mod layout;

use std::fmt;
use std::sync::Arc;

use serde_json::{Number, Value};

use crate::envelope::{escape_attr, escape_text, itoa, text};

pub use detect::{Schema, SchemaError};

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

    fn write(&self, out: &mut String) {
        if self.0.is_empty() {
            return out.push_str("(root)");
        }
        let start = out.len();
        for segment in &self.0 {
            match segment {
                PathSegment::Key(key) => text::push_key(out, key, out.len() == start),
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(itoa(*i as u64, &mut [0; 20]));
                    out.push(']');
                }
            }
        }
    }
}

impl fmt::Display for FieldPath {
    /// The `name` attribute's text (before escaping).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out);
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
    /// A required field is absent.
    MissingRequired {
        /// `{desc}` of the field: everything a value needs (`an integer >= 1 or null`).
        desc: Arc<str>,
    },
    /// The value has the wrong type; it is the only problem reported for it.
    InvalidType {
        /// `{desc}` of the field.
        desc: Arc<str>,
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
    /// A key that the object's `propertyNames` schema refuses (the problem's path is the object's).
    InvalidKey {
        /// `{desc}` of the `propertyNames` schema (`a string` when it has no `type`).
        desc: Arc<str>,
    },
    /// A value the schema accepts but the action's argument type refuses. The decoder's own
    /// words go to the server log, never to the model.
    Decode {
        /// `{desc}` of the schema at the path.
        desc: Arc<str>,
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
    /// The position of this kind among the problems at one path (§5: type first, then the
    /// table's rows; other keywords by name; custom last).
    pub(crate) fn rank(&self) -> (u8, &str) {
        let rank = match self {
            ProblemKind::MissingRequired { .. } | ProblemKind::UnrecognizedField { .. } => 0,
            ProblemKind::InvalidType { .. } | ProblemKind::Decode { .. } => 0,
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
            ProblemKind::InvalidKey { .. } => 16,
            ProblemKind::Other { keyword } => {
                return match GENERIC_ORDER.iter().position(|k| k == keyword) {
                    Some(i) => (17 + i as u8, ""),
                    None => (17 + GENERIC_ORDER.len() as u8, keyword),
                };
            }
            ProblemKind::Custom { .. } => u8::MAX,
        };
        (rank, "")
    }

    /// The row of §5 this problem is written by, as §9's mirror names it: `missing`, `type`,
    /// `format`, `pattern`, `minLength`, ..., `enum`, `const`, `alternatives`,
    /// `propertyNames`, `unrecognized`, `decode`, `custom`, or the failing keyword.
    ///
    /// ```
    /// use mcp_fusion::validate::ProblemKind;
    /// assert_eq!(ProblemKind::TooShort { min: 1 }.name(), "minLength");
    /// ```
    pub fn name(&self) -> &str {
        match self {
            ProblemKind::MissingRequired { .. } => "missing",
            ProblemKind::InvalidType { .. } => "type",
            ProblemKind::Format(_) => "format",
            ProblemKind::Pattern { .. } => "pattern",
            ProblemKind::TooShort { .. } => "minLength",
            ProblemKind::TooLong { .. } => "maxLength",
            ProblemKind::TooSmall {
                exclusive: false, ..
            } => "minimum",
            ProblemKind::TooSmall {
                exclusive: true, ..
            } => "exclusiveMinimum",
            ProblemKind::TooLarge {
                exclusive: false, ..
            } => "maximum",
            ProblemKind::TooLarge {
                exclusive: true, ..
            } => "exclusiveMaximum",
            ProblemKind::TooFewItems { .. } => "minItems",
            ProblemKind::TooManyItems { .. } => "maxItems",
            ProblemKind::NotMultipleOf { .. } => "multipleOf",
            ProblemKind::InvalidOption { .. } => "enum",
            ProblemKind::ConstMismatch { .. } => "const",
            ProblemKind::NoAlternative { .. } => "alternatives",
            ProblemKind::InvalidKey { .. } => "propertyNames",
            ProblemKind::Decode { .. } => "decode",
            ProblemKind::UnrecognizedField { .. } => "unrecognized",
            ProblemKind::Other { keyword } => keyword,
            ProblemKind::Custom { .. } => "custom",
        }
    }

    /// Writes the headline (no final period).
    fn write_headline(&self, out: &mut String) {
        out.push_str(match self {
            ProblemKind::MissingRequired { .. } => "Required field is missing",
            ProblemKind::InvalidType { .. } => "Invalid type",
            ProblemKind::Format(Format::Email) => "Invalid email format",
            ProblemKind::Format(Format::Uri) => "Invalid URL format",
            ProblemKind::Format(Format::Uuid) => "Invalid UUID format",
            ProblemKind::Format(Format::DateTime) => "Invalid date-time format",
            ProblemKind::Format(Format::Date) => "Invalid date format",
            ProblemKind::Format(Format::Ipv4 | Format::Ipv6) => "Invalid IP address",
            ProblemKind::Format(Format::Other(_)) | ProblemKind::Pattern { .. } => "Invalid format",
            ProblemKind::TooShort { .. } => "Too short",
            ProblemKind::TooLong { .. } => "Too long",
            ProblemKind::TooSmall { .. } => "Too small",
            ProblemKind::TooLarge { .. } => "Too large",
            ProblemKind::TooFewItems { .. } => "Too few items",
            ProblemKind::TooManyItems { .. } => "Too many items",
            ProblemKind::NotMultipleOf { multiple_of } => {
                out.push_str("Not a multiple of ");
                text::write_number(out, multiple_of);
                return;
            }
            ProblemKind::InvalidOption { .. } => "Invalid option",
            ProblemKind::InvalidKey { .. } => "Invalid key",
            ProblemKind::ConstMismatch { .. }
            | ProblemKind::Decode { .. }
            | ProblemKind::NoAlternative { .. }
            | ProblemKind::Other { .. } => "Invalid value",
            ProblemKind::UnrecognizedField { .. } => "Unrecognized field",
            ProblemKind::Custom { headline, .. } => headline,
        });
    }

    /// Writes the expectation, without a final period; `false` when there is none.
    fn write_expected(&self, out: &mut String) -> bool {
        match self {
            ProblemKind::MissingRequired { desc }
            | ProblemKind::InvalidType { desc }
            | ProblemKind::Decode { desc } => {
                out.push_str("Expected ");
                out.push_str(desc);
            }
            ProblemKind::InvalidKey { desc } => {
                out.push_str("Expected a key that is ");
                out.push_str(desc);
            }
            ProblemKind::Format(Format::Other(name)) => {
                out.push_str("Expected a string in the \"");
                out.push_str(name);
                out.push_str("\" format");
            }
            ProblemKind::Format(format) => out.push_str(match format {
                Format::Email => "Expected a valid email address",
                Format::Uri => "Expected a valid URL (e.g. https://example.com)",
                Format::Uuid => "Expected a valid UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
                Format::DateTime => "Expected an ISO 8601 date-time (e.g. 2024-01-15T10:30:00Z)",
                Format::Date => "Expected an ISO 8601 date (e.g. 2024-01-15)",
                Format::Ipv4 => "Expected a valid IPv4 address",
                Format::Ipv6 | Format::Other(_) => "Expected a valid IPv6 address",
            }),
            ProblemKind::Pattern { pattern } => {
                out.push_str("Expected a string matching the pattern ");
                out.push_str(pattern);
            }
            ProblemKind::TooShort { min } => {
                write_count(out, "Expected at least ", *min, "character")
            }
            ProblemKind::TooLong { max } => {
                write_count(out, "Expected at most ", *max, "character")
            }
            ProblemKind::TooSmall { limit, exclusive } => {
                out.push_str(if *exclusive {
                    "Expected a number > "
                } else {
                    "Expected a number >= "
                });
                text::write_number(out, limit);
            }
            ProblemKind::TooLarge { limit, exclusive } => {
                out.push_str(if *exclusive {
                    "Expected a number < "
                } else {
                    "Expected a number <= "
                });
                text::write_number(out, limit);
            }
            ProblemKind::TooFewItems { min } => {
                write_count(out, "Expected at least ", *min, "item")
            }
            ProblemKind::TooManyItems { max } => {
                write_count(out, "Expected at most ", *max, "item")
            }
            ProblemKind::NotMultipleOf { multiple_of } => {
                out.push_str("Expected a multiple of ");
                text::write_number(out, multiple_of);
            }
            ProblemKind::InvalidOption { allowed } => {
                out.push_str("Expected one of: ");
                write_list(out, allowed.iter(), write_literal);
            }
            ProblemKind::ConstMismatch { expected } => {
                out.push_str("Expected exactly ");
                write_literal(out, expected);
            }
            ProblemKind::NoAlternative { .. } => {
                out.push_str("Expected a value matching one of the allowed shapes")
            }
            ProblemKind::UnrecognizedField {
                did_you_mean: Some(best),
                ..
            } => {
                out.push_str("Remove it or rename it: did you mean \"");
                out.push_str(best);
                out.push_str("\"?");
            }
            ProblemKind::UnrecognizedField {
                did_you_mean: None,
                known,
            } if known.is_empty() => out.push_str("Remove it"),
            ProblemKind::UnrecognizedField {
                did_you_mean: None,
                known,
            } => {
                out.push_str("Remove it. Known fields: ");
                write_list(out, known.iter(), |out, name| out.push_str(name));
            }
            ProblemKind::Other { keyword } => {
                out.push_str("Expected a value that satisfies \"");
                out.push_str(keyword);
                out.push('"');
            }
            ProblemKind::Custom {
                expected: Some(expected),
                ..
            } => out.push_str(expected),
            ProblemKind::Custom { expected: None, .. } => return false,
        }
        true
    }
}

/// The keywords of the "any other failing keyword" row that §5 orders; the rest follow by name.
const GENERIC_ORDER: [&str; 8] = [
    "not",
    "patternProperties",
    "prefixItems",
    "dependentRequired",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
];

/// `a string or null`; `a value` when nothing is declared.
fn write_types(out: &mut String, expected: impl Iterator<Item = JsonType>) {
    let start = out.len();
    for (i, t) in expected.enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(t.phrase());
    }
    if out.len() == start {
        out.push_str("a value");
    }
}

/// `Expected at least 1 character` / `... 3 characters`.
fn write_count(out: &mut String, lead: &str, n: u64, noun: &str) {
    out.push_str(lead);
    out.push_str(itoa(n, &mut [0; 20]));
    out.push(' ');
    out.push_str(noun);
    if n != 1 {
        out.push('s');
    }
}

/// At most 20 entries joined by `, `, then `, ...` when there are more.
fn write_list<T>(
    out: &mut String,
    items: impl Iterator<Item = T>,
    mut write: impl FnMut(&mut String, T),
) {
    for (i, item) in items.enumerate() {
        if i == MAX_FIELDS {
            out.push_str(", ...");
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        write(out, item);
    }
}

/// An enum or const value: JSON with this contract's numbers, but a string single-quoted and
/// escaped like a sent string (not cut).
fn write_literal(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => text::push_quoted(out, s),
        other => write_json(out, other),
    }
}

fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => text::write_number(out, n),
        Value::String(s) => text::json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            write_list_all(out, items.iter(), write_json);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            write_list_all(out, map.iter(), |out, (key, item)| {
                text::json_string(out, key);
                out.push(':');
                write_json(out, item);
            });
            out.push('}');
        }
    }
}

fn write_list_all<T>(
    out: &mut String,
    items: impl Iterator<Item = T>,
    mut write: impl FnMut(&mut String, T),
) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(out, item);
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
        let mut line = String::with_capacity(96 + self.sent.len());
        self.write_line(&mut line);
        line
    }

    fn write_line(&self, out: &mut String) {
        self.kind.write_headline(out);
        out.push_str(". You sent: ");
        out.push_str(&self.sent);
        // After a value or list cut with `...`, or a question, the period is not written.
        let open = |out: &String| out.ends_with("...") || out.ends_with('?');
        let before = out.len();
        out.push_str(if open(out) { " " } else { ". " });
        if !self.kind.write_expected(out) {
            out.truncate(before);
        }
        if !open(out) {
            out.push('.');
        }
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
        // Each name and line is laid out once in a scratch buffer, then escaped into place.
        let mut scratch = String::with_capacity(256);
        for problem in shown {
            out.push_str("<field name=\"");
            scratch.clear();
            problem.path.write(&mut scratch);
            escape_attr(&mut out, &scratch);
            out.push_str("\">");
            scratch.clear();
            problem.write_line(&mut scratch);
            escape_text(&mut out, &scratch);
            out.push_str("</field>\n");
        }
        if let Some(more) = self
            .problems
            .len()
            .checked_sub(MAX_FIELDS)
            .filter(|&k| k > 0)
        {
            out.push_str("<field name=\"(more)\">");
            write_count(&mut out, "", more as u64, "more problem");
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
