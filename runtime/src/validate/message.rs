//! The §5 message table: each problem's headline and expectation, its `<field>` line, and the
//! whole `<validation_error>`. All message text of validation lives here.

use serde_json::Value;

use super::{Format, JsonType, MAX_FIELDS, Problem, ProblemKind, ValidationError};
use crate::envelope::{
    FieldLines, VALIDATION_RECOVERY as RECOVERY, escape_attr, escape_text, itoa, text,
};

impl JsonType {
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

impl ProblemKind {
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
            ProblemKind::Pattern { .. } => "Invalid format",
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
            ProblemKind::Format(format) => out.push_str(match format {
                Format::Email => "Expected a valid email address",
                Format::Uri => "Expected a valid URL (e.g. https://example.com)",
                Format::Uuid => "Expected a valid UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
                Format::DateTime => "Expected an ISO 8601 date-time (e.g. 2024-01-15T10:30:00Z)",
                Format::Date => "Expected an ISO 8601 date (e.g. 2024-01-15)",
                Format::Ipv4 => "Expected a valid IPv4 address",
                Format::Ipv6 => "Expected a valid IPv6 address",
            }),
            ProblemKind::Pattern { pattern, example } => write_pattern(
                out,
                "Expected a string matching the pattern ",
                pattern,
                example.as_deref(),
            ),
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
            ProblemKind::TooFewItems { min, each } => {
                write_count(out, "Expected at least ", *min, "item");
                out.push_str(each);
            }
            ProblemKind::TooManyItems { max, each } => {
                write_count(out, "Expected at most ", *max, "item");
                out.push_str(each);
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

/// `a string or null`; `a value` when nothing is declared.
pub(super) fn write_types(out: &mut String, expected: impl Iterator<Item = JsonType>) {
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

/// `{lead}{pattern}`, then ` (e.g. '{example}')` when the pattern has an example (ERRORS.md
/// §11.5): escaped as a sent string inside its quotes, never cut.
pub(super) fn write_pattern(out: &mut String, lead: &str, pattern: &str, example: Option<&str>) {
    out.push_str(lead);
    out.push_str(pattern);
    if let Some(example) = example {
        out.push_str(" (e.g. ");
        text::push_quoted(out, example);
        out.push(')');
    }
}

/// `Expected at least 1 character` / `... 3 characters`.
pub(super) fn write_count(out: &mut String, lead: &str, n: u64, noun: &str) {
    out.push_str(lead);
    out.push_str(itoa(n, &mut [0; 20]));
    out.push(' ');
    out.push_str(noun);
    if n != 1 {
        out.push('s');
    }
}

/// At most 20 entries joined by `, `, then `, ...` when there are more.
pub(super) fn write_list<T>(
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
pub(super) fn write_literal(out: &mut String, value: &Value) {
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

pub(super) fn write_list_all<T>(
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

impl Problem {
    pub(super) fn write_line(&self, out: &mut String) {
        self.kind.write_headline(out);
        out.push_str(". You sent: ");
        out.push_str(self.sent.as_str());
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

impl ValidationError {
    /// The envelope's text. `isError` is always true.
    pub fn render(&self) -> String {
        self.write(None)
    }

    /// The text; with `mirrored`, each field's mirror object too, from the same path and line
    /// (each laid out once for both).
    pub(super) fn write(&self, mut mirrored: Option<&mut FieldLines>) -> String {
        let shown = &self.fields;
        let mut out = String::with_capacity(200 + shown.len() * 120);
        out.push_str("<validation_error action=\"");
        escape_attr(&mut out, &self.action);
        out.push_str("\">\n");
        // Each name and line is laid out once, in the mirror's buffer or else a scratch buffer,
        // then escaped into place.
        let mut scratch = match mirrored {
            Some(_) => String::new(),
            None => String::with_capacity(256),
        };
        for field in shown {
            let problem = &field.problem;
            let plain = match mirrored.as_deref_mut() {
                Some(lines) => lines.buffer(),
                None => {
                    scratch.clear();
                    &mut scratch
                }
            };
            let start = plain.len();
            out.push_str("<field name=\"");
            field.write_name(plain);
            let split = plain.len();
            escape_attr(&mut out, &plain[start..]);
            out.push_str("\">");
            problem.write_line(plain);
            escape_text(&mut out, &plain[split..]);
            out.push_str("</field>\n");
            if let Some(lines) = mirrored.as_deref_mut() {
                lines.mark(start, split, problem.kind().row(), &field.elements);
            }
        }
        if self.more > 0 {
            out.push_str("<field name=\"(more)\">");
            write_count(&mut out, "", self.more as u64, "more problem");
            out.push_str(" not shown. Fix the fields above first.</field>\n");
        }
        out.push_str("<recovery>");
        out.push_str(RECOVERY);
        out.push_str("</recovery>\n</validation_error>");
        out
    }
}
