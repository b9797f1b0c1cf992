//! The problems validation finds, as data: what is wrong where, and what was sent there.

use std::fmt;
use std::sync::Arc;

use serde_json::{Number, Value};

use super::FieldPath;
use crate::envelope::{itoa, text};

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
}

/// A `format` the contract asserts (ERRORS.md §5): every other format is an annotation.
///
/// ```
/// use mcp_fusion::validate::Format;
/// assert_eq!(Format::from_name("date-time"), Some(Format::DateTime));
/// assert_eq!(Format::from_name("hostname"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
}

impl Format {
    /// The asserted format a `format` keyword names; `None` for an annotation.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "email" => Format::Email,
            "uri" => Format::Uri,
            "uuid" => Format::Uuid,
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            _ => return None,
        })
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
        /// A string the pattern accepts, from the schema's `examples` (ERRORS.md §11.5).
        example: Option<Arc<str>>,
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
        /// What each item is (`, each an object with fields a, b`), or empty (ERRORS.md §11.3).
        each: Arc<str>,
    },
    /// More items than `maxItems`.
    TooManyItems {
        /// The bound.
        max: u64,
        /// What each item is, or empty, as for [`TooFewItems`](Self::TooFewItems).
        each: Arc<str>,
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
            ProblemKind::Other { keyword } => keyword,
            other => other.fixed_name().unwrap_or_default(),
        }
    }

    /// The name, owned only for a generic keyword.
    pub(crate) fn row(&self) -> crate::envelope::Text {
        match self.fixed_name() {
            Some(name) => name.into(),
            None => self.name().to_owned().into(),
        }
    }

    /// The name of a row other than the generic keyword's.
    fn fixed_name(&self) -> Option<&'static str> {
        Some(match self {
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
            ProblemKind::Other { .. } => return None,
            ProblemKind::Custom { .. } => "custom",
        })
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
    pub(super) path: FieldPath,
    pub(super) kind: ProblemKind,
    pub(super) sent: Sent,
}
impl Problem {
    /// A problem at `path`; `sent` is the value found there (`None`: absent).
    pub fn new(path: FieldPath, kind: ProblemKind, sent: Option<&Value>) -> Self {
        let sent = sent.map_or(Sent::MISSING, Sent::of);
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
        self.sent.as_str()
    }

    /// The `<field>` text: `{headline}. You sent: {sent}. {expected}.` (plain, not escaped).
    pub fn line(&self) -> String {
        let mut line = String::with_capacity(96 + self.sent().len());
        self.write_line(&mut line);
        line
    }
}

/// `{sent}` of a problem, as the line shows it; a literal, a number or a short plain string
/// kept in place, so that most problems take no allocation for it.
#[derive(Clone)]
pub(crate) enum Sent {
    Fixed(&'static str),
    Short(Inline),
    Long(String),
}

/// Whole strings one after another, in place (made only by `Sent::short`: its fields are this
/// module's alone).
#[derive(Clone)]
pub(crate) struct Inline {
    len: u8,
    bytes: [u8; Sent::SHORT],
}

impl Sent {
    /// Room for any integer with its sign, or a plain string of 20 bytes in its quotes.
    const SHORT: usize = 22;

    /// `{sent}` of an absent value.
    pub(crate) const MISSING: Sent = Sent::Fixed("(missing)");

    /// `{sent}` of `value` (ERRORS.md §5): what [`text::sent`] writes.
    pub(crate) fn of(value: &Value) -> Sent {
        match value {
            Value::Null => Sent::Fixed("null"),
            Value::Bool(true) => Sent::Fixed("true"),
            Value::Bool(false) => Sent::Fixed("false"),
            Value::Number(n) if !n.is_f64() => {
                let mut digits = [0; 20];
                match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => Sent::short(&["", itoa(u, &mut digits)]),
                    (None, Some(i)) => Sent::short(&["-", itoa(i.unsigned_abs(), &mut digits)]),
                    (None, None) => Sent::Long(text::sent(value)),
                }
            }
            // Quoted as it is: no byte that `push_quoted` escapes, too short to be cut.
            Value::String(s)
                if s.len() <= Sent::SHORT - 2
                    && s.bytes().all(|b| b >= b' ' && b != b'\\' && b != b'\'') =>
            {
                Sent::short(&["'", s, "'"])
            }
            _ => Sent::Long(text::sent(value)),
        }
    }

    /// The pieces one after another, which fit.
    fn short(pieces: &[&str]) -> Sent {
        let mut bytes = [0; Sent::SHORT];
        let mut len = 0;
        for piece in pieces {
            bytes[len..len + piece.len()].copy_from_slice(piece.as_bytes());
            len += piece.len();
        }
        Sent::Short(Inline {
            len: len as u8,
            bytes,
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Sent::Fixed(s) => s,
            // The bytes are whole strings one after another (`Sent::short`): checked, at most
            // 22 bytes, rather than taken on trust.
            Sent::Short(inline) => std::str::from_utf8(&inline.bytes[..usize::from(inline.len)])
                .expect("whole strings one after another"),
            Sent::Long(s) => s,
        }
    }
}

impl PartialEq for Sent {
    fn eq(&self, other: &Sent) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Sent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::Sent;
    use crate::envelope::text;

    fn same(value: &Value) {
        assert_eq!(Sent::of(value).as_str(), text::sent(value), "{value}");
    }

    #[test]
    fn sent_in_place_is_what_the_line_writes() {
        for value in [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-1),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(2.5),
            json!(-0.0),
            json!(1e300),
            json!([1, "a"]),
            json!({"a": 1}),
        ] {
            same(&value);
        }
        assert_eq!(Sent::MISSING.as_str(), "(missing)");
    }

    proptest::proptest! {
        /// Strings about the length kept in place, with and without what the quoting escapes.
        #[test]
        fn sent_strings_in_place_are_what_the_line_writes(
            s in r#"[a-zé😀 '\\"\x00\n\t]{0,24}"#,
        ) {
            same(&Value::String(s));
        }
    }
}
