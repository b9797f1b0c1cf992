//! Local `$ref`s as JSON pointers (RFC 6901 in a URI fragment, RFC 3986): `~0` and `~1`
//! escapes in names, percent-encoding in the fragment.

use std::borrow::Cow;

use serde_json::Value;

use super::keywords::{NAMED_SUBSCHEMAS, SINGLE_SUBSCHEMAS};

/// The JSON pointer a local reference names (`#/$defs/a%20b` → `/$defs/a b`); `None` for a
/// reference to another document.
pub(crate) fn of_reference(reference: &str) -> Option<String> {
    reference.strip_prefix('#').map(percent_decode)
}

/// The local reference to a JSON pointer (`/$defs/a b` → `#/$defs/a%20b`).
pub(crate) fn to_reference(pointer: &str) -> String {
    format!("#{}", percent_encode(pointer))
}

/// Why `reference` is no local reference by a JSON Pointer (RFC 6901 in a URI fragment, RFC
/// 3986), which ERRORS.md §5 follows: `None` when it is one.
pub(crate) fn not_a_pointer(reference: &str) -> Option<&'static str> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Some(
            "it names another document; a reference is '#' and a JSON Pointer into the schema",
        );
    };
    if !(fragment.is_empty() || fragment.starts_with('/')) {
        return Some("a JSON Pointer is empty or starts with '/'");
    }
    let bytes = fragment.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let hex = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_hexdigit);
        if b == b'%' && !(hex(i + 1) && hex(i + 2)) {
            return Some("'%' must be followed by two hexadecimal digits");
        }
    }
    let decoded = percent_decode(fragment);
    if decoded.contains('\u{FFFD}') && !fragment.contains('\u{FFFD}') {
        return Some("its percent escapes are not UTF-8");
    }
    let mut chars = decoded.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Some("'~' must be followed by '0' or '1' ('~0' is '~', '~1' is '/')");
        }
    }
    None
}

/// Every `$ref` of `schema`, wherever a subschema can sit, that is no JSON Pointer into the
/// schema, with why (see [`not_a_pointer`]).
pub(crate) fn invalid_references(schema: &Value) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        let Value::Object(map) = value else {
            continue;
        };
        if let Some(Value::String(reference)) = map.get("$ref")
            && let Some(why) = not_a_pointer(reference)
        {
            found.push((reference.clone(), why));
        }
        for (keyword, value) in map {
            match (keyword.as_str(), value) {
                (k, Value::Object(named)) if k == "properties" || NAMED_SUBSCHEMAS.contains(&k) => {
                    stack.extend(named.values());
                }
                ("items" | "prefixItems" | "allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                    stack.extend(list);
                }
                (k, sub) if k == "items" || SINGLE_SUBSCHEMAS.contains(&k) => stack.push(sub),
                _ => {}
            }
        }
    }
    found
}

/// A JSON pointer segment's name: `~1` is `/`, `~0` is `~`.
pub(crate) fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// A name as a JSON pointer segment.
pub(crate) fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A `$ref` fragment as a JSON pointer: `%XX` escapes decoded.
fn percent_decode(fragment: &str) -> String {
    if !fragment.contains('%') {
        return fragment.to_owned();
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|&b| hex(b)),
            bytes.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A JSON pointer as a URI fragment: every byte outside RFC 3986's `fragment` set
/// percent-encoded (`%` itself included).
fn percent_encode(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for byte in pointer.bytes() {
        let plain = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&byte);
        if plain {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_that_are_no_pointers() {
        for good in [
            "#",
            "#/$defs/a",
            "#/$defs/a~0b~1c",
            "#/$defs/a%20b",
            "#/definitions/%C3%A9",
        ] {
            assert_eq!(not_a_pointer(good), None, "{good}");
        }
        for bad in [
            "#/$defs/Coord~Inner",
            "#/$defs/a~",
            "#/$defs/a%7Eb",
            "#/$defs/a%2",
            "#/$defs/%FF",
            "#Anchor",
            "other.json#/a",
        ] {
            assert!(not_a_pointer(bad).is_some(), "{bad}");
        }
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/Coord~Inner"},
                "b": {"type": "array", "items": {"$ref": "#/$defs/ok"}},
                "c": {"anyOf": [{"$ref": "#bad"}, {"type": "null"}]},
                "d": {"const": {"$ref": "#not/a/schema"}},
                "e": {"items": false, "additionalProperties": true, "not": {"$ref": "#/x~"}}
            },
            "additionalProperties": false,
            "$defs": {"ok": {"type": "string"}}
        });
        let mut found: Vec<String> = invalid_references(&schema)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        found.sort();
        assert_eq!(found, ["#/$defs/Coord~Inner", "#/x~", "#bad"]);
    }

    #[test]
    fn references_and_pointers_round_trip() {
        assert_eq!(to_reference("/$defs/a b/é~1"), "#/$defs/a%20b/%C3%A9~1");
        assert_eq!(
            of_reference("#/$defs/a%20b/%C3%A9~1").unwrap(),
            "/$defs/a b/é~1"
        );
        assert_eq!(to_reference("/x/100%"), "#/x/100%25");
        assert_eq!(of_reference("other.json#/a"), None);
        assert_eq!(unescape("a~1b~0c"), "a/b~c");
        assert_eq!(escape("a/b~c"), "a~1b~0c");
    }
}
