//! Local `$ref`s as JSON pointers (RFC 6901 in a URI fragment, RFC 3986): `~0` and `~1`
//! escapes in names, percent-encoding in the fragment.

use std::borrow::Cow;

/// The JSON pointer a local reference names (`#/$defs/a%20b` → `/$defs/a b`); `None` for a
/// reference to another document.
pub(crate) fn of_reference(reference: &str) -> Option<String> {
    reference.strip_prefix('#').map(percent_decode)
}

/// The local reference to a JSON pointer (`/$defs/a b` → `#/$defs/a%20b`).
pub(crate) fn to_reference(pointer: &str) -> String {
    format!("#{}", percent_encode(pointer))
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
