//! How sent values, numbers and paths are written in envelope texts (ERRORS.md §4 and §5).
//! Plain text: the envelope writer escapes it afterwards.

use std::borrow::Cow;
use std::fmt::Write;

use serde_json::{Number, Value};

/// Text that is usually a literal: borrowed when it can be, owned when it must. Public because
/// the builder methods take `impl Into<Text>` (a `&'static str`, a `String`, an [`ActionRef`])
/// and helpers of your own may pass such values on.
///
/// [`ActionRef`]: crate::tool::ActionRef
///
/// ```
/// fn not_found(what: impl Into<mcp_fusion::errors::Text>) -> mcp_fusion::ToolError {
///     mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::NOT_FOUND, what)
/// }
/// assert_eq!(not_found("No such invoice.").message(), "No such invoice.");
/// ```
pub type Text = Cow<'static, str>;

/// Longest sent string (in Unicode scalar values) shown whole; longer ones keep 47 and `...`.
const CUT: usize = 50;
const KEEP: usize = 47;

/// A sent value: `null`, `true`, numbers, `'strings'` (cut), `array(n)`, or objects as compact
/// JSON (cut).
pub(crate) fn sent(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => (if *b { "true" } else { "false" }).to_owned(),
        Value::Number(n) => number(n),
        Value::String(s) => {
            let (kept, was_cut) = cut(s);
            let mut out = String::with_capacity(kept.len() + 5);
            push_quoted(&mut out, kept);
            if was_cut {
                out.insert_str(out.len() - 1, "...");
            }
            out
        }
        Value::Array(items) => format!("array({})", items.len()),
        Value::Object(_) => {
            let mut json = BoundedJson::default();
            json.value(value);
            json.finish()
        }
    }
}

/// Appends `s` single-quoted, with `\\`, `'` and control characters escaped inside the quotes
/// (`\\`, `\'`, and as serde_json writes them): a value can never look like the text around it.
pub(crate) fn push_quoted(out: &mut String, s: &str) {
    out.push('\'');
    push_escaped(out, s, '\'');
    out.push('\'');
}

/// Appends `s` with `\\`, `quote` (ASCII) and U+0000–U+001F escaped as in a JSON string. Runs
/// that need no escape are copied whole.
pub(crate) fn push_escaped(out: &mut String, s: &str, quote: char) {
    let quote = quote as u8;
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= b' ' && b != b'\\' && b != quote {
            continue;
        }
        // Every byte that needs an escape is ASCII, so `i` is a character boundary.
        out.push_str(&s[start..i]);
        start = i + 1;
        match b {
            b'\\' => out.push_str("\\\\"),
            b if b == quote => {
                out.push('\\');
                out.push(b as char);
            }
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
    }
    out.push_str(&s[start..]);
}

/// Appends `s`, cut to 47 characters plus `...` when longer than 50.
pub(crate) fn push_cut(out: &mut String, s: &str) {
    let (kept, was_cut) = cut(s);
    out.push_str(kept);
    if was_cut {
        out.push_str("...");
    }
}

/// What [`push_cut`] keeps of `s`, and whether it adds `...`.
pub(crate) fn cut(s: &str) -> (&str, bool) {
    // No more characters than bytes: a short string is not looked through.
    if s.len() <= CUT {
        return (s, false);
    }
    match s.char_indices().nth(CUT) {
        None => (s, false),
        Some(_) => {
            let end = s.char_indices().nth(KEEP).map_or(s.len(), |(i, _)| i);
            (&s[..end], true)
        }
    }
}

/// Compact JSON that stops writing once it is longer than the cut: a huge or deeply nested
/// object costs no more than a small one.
#[derive(Default)]
struct BoundedJson {
    out: String,
    chars: usize,
}

impl BoundedJson {
    fn full(&self) -> bool {
        self.chars > CUT
    }

    fn push(&mut self, s: &str) {
        if !self.full() {
            self.out.push_str(s);
            self.chars += s.chars().count();
        }
    }

    fn value(&mut self, value: &Value) {
        if self.full() {
            return;
        }
        match value {
            Value::Null => self.push("null"),
            Value::Bool(b) => self.push(if *b { "true" } else { "false" }),
            Value::Number(n) => self.push(&number(n)),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.push("[");
                for (i, item) in items.iter().enumerate() {
                    if self.full() {
                        return;
                    }
                    if i > 0 {
                        self.push(",");
                    }
                    self.value(item);
                }
                self.push("]");
            }
            Value::Object(map) => {
                self.push("{");
                for (i, (key, item)) in map.iter().enumerate() {
                    if self.full() {
                        return;
                    }
                    if i > 0 {
                        self.push(",");
                    }
                    self.string(key);
                    self.push(":");
                    self.value(item);
                }
                self.push("}");
            }
        }
    }

    fn string(&mut self, s: &str) {
        // Only the first characters can be shown: never escape more of a long string.
        let shown = s.char_indices().nth(CUT + 1).map_or(s, |(i, _)| &s[..i]);
        let mut quoted = String::with_capacity(shown.len() + 2);
        json_string(&mut quoted, shown);
        if shown.len() < s.len() {
            quoted.pop(); // the closing quote of a string that goes on
        }
        self.push(&quoted);
    }

    fn finish(self) -> String {
        if self.chars <= CUT {
            return self.out;
        }
        let mut out = String::with_capacity(self.out.len());
        push_cut(&mut out, &self.out);
        out
    }
}

/// Writes `s` as a JSON string the way serde_json does.
pub(crate) fn json_string(out: &mut String, s: &str) {
    out.push('"');
    push_escaped(out, s, '"');
    out.push('"');
}

/// A number as serde_json writes it, with an explicit `+` in positive exponents: integers in
/// plain decimal; other numbers as the shortest round-trip decimal, plain with at least one
/// digit after the point when 1e-5 <= |x| < 1e16, otherwise in exponent form (`1e+16`).
pub(crate) fn number(n: &Number) -> String {
    if n.is_f64() {
        return float(n.as_f64().unwrap_or(f64::NAN));
    }
    // Room for any integer, so that writing it does not grow the string.
    let mut out = String::with_capacity(20);
    write_number(&mut out, n);
    out
}

pub(crate) fn write_number(out: &mut String, n: &Number) {
    // Integers by hand: `write!` goes through the formatting machinery for a few digits.
    if let Some(u) = n.as_u64() {
        out.push_str(super::itoa(u, &mut [0; 20]));
    } else if let Some(i) = n.as_i64() {
        out.push('-');
        out.push_str(super::itoa(i.unsigned_abs(), &mut [0; 20]));
    } else {
        out.push_str(&float(n.as_f64().unwrap_or(f64::NAN)));
    }
}

pub(crate) fn float(x: f64) -> String {
    let abs = x.abs();
    if abs == 0.0 || (1e-5..1e16).contains(&abs) {
        let mut s = format!("{x}");
        if !s.contains('.') {
            s.push_str(".0");
        }
        s
    } else {
        let s = format!("{x:e}");
        match s.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            _ => s,
        }
    }
}

/// An object key in a path: `name` (after a `.` unless first) when it is an identifier,
/// otherwise `["json string"]`; keys longer than 50 characters are cut first.
pub(crate) fn push_key(out: &mut String, key: &str, first: bool) {
    let cut: Cow<'_, str> = match cut(key) {
        (kept, true) => Cow::Owned(format!("{kept}...")),
        (kept, false) => Cow::Borrowed(kept),
    };
    if is_identifier(&cut) {
        if !first {
            out.push('.');
        }
        out.push_str(&cut);
    } else {
        out.push('[');
        json_string(out, &cut);
        out.push(']');
    }
}

fn is_identifier(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_as_serde_json_writes_them() {
        let cases = [
            (json!(-3), "-3"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(2.0), "2.0"),
            (json!(0.5), "0.5"),
            (json!(-12.5), "-12.5"),
            (json!(1e16), "1e+16"),
            (json!(1.5e-7), "1.5e-7"),
            (json!(1e-5), "0.00001"),
            (json!(9999999999999998.0), "9999999999999998.0"),
            (json!(0.0), "0.0"),
            (json!(1.7976931348623157e308), "1.7976931348623157e+308"),
        ];
        for (value, text) in cases {
            assert_eq!(sent(&value), text, "{value:?}");
        }
    }

    #[test]
    fn strings_cut_at_fifty_scalar_values() {
        let fifty = "x".repeat(50);
        assert_eq!(sent(&json!(fifty)), format!("'{fifty}'"));
        let fifty_one = "\u{1F600}".repeat(51);
        assert_eq!(
            sent(&json!(fifty_one)),
            format!("'{}...'", "\u{1F600}".repeat(47))
        );
        assert_eq!(sent(&json!("it's")), "'it\\'s'");
        // Escapes follow the cut: the 47 kept characters are escaped, the cut counts raw ones.
        let quotes = "'".repeat(51);
        assert_eq!(sent(&json!(quotes)), format!("'{}...'", "\\'".repeat(47)));
        assert_eq!(sent(&json!("a\\b\u{1}\n\"")), "'a\\\\b\\u0001\\n\"'");
    }

    #[test]
    fn objects_are_compact_and_bounded() {
        assert_eq!(
            sent(&json!({"a": 1, "b": [true, null], "c": "q\"\n"})),
            r#"{"a":1,"b":[true,null],"c":"q\"\n"}"#
        );
        let long = json!({"first": "Ada", "last": "Lovelace", "title": "Countess of Lovelace"});
        assert_eq!(
            sent(&long),
            r#"{"first":"Ada","last":"Lovelace","title":"Count..."#
        );
        let huge = json!({"k": "x".repeat(1 << 20)});
        assert_eq!(sent(&huge).chars().count(), 50);
        assert_eq!(sent(&json!([1, 2])), "array(2)");
    }

    #[test]
    fn keys_in_paths() {
        let path = |keys: &[&str]| {
            let mut out = String::new();
            for k in keys {
                let first = out.is_empty();
                push_key(&mut out, k, first);
            }
            out
        };
        assert_eq!(path(&["lines", "quantity"]), "lines.quantity");
        assert_eq!(path(&["meta", "sub key"]), "meta[\"sub key\"]");
        assert_eq!(path(&["a key", "b"]), "[\"a key\"].b");
        assert_eq!(path(&["", "caf\u{e9}"]), "[\"\"][\"caf\u{e9}\"]");
        assert_eq!(path(&["tab\there\u{1}\\"]), "[\"tab\\there\\u0001\\\\\"]");
        assert_eq!(
            path(&[&"k".repeat(51)]),
            format!("[\"{}...\"]", "k".repeat(47))
        );
    }
}
