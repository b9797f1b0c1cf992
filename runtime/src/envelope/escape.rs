//! Text and attribute escaping (ERRORS.md §2). Escaping happens once, when an envelope is written.
//!
//! Both escapers scan bytes against a table and copy the unchanged runs in bulk, so plain text
//! costs one table lookup per byte and one copy per run.

/// What a byte needs in element content: 0 copy it, 1 look closer.
const TEXT: [bool; 256] = table(b"&<>\r", false);
/// What a byte needs in an attribute value: every control character is special there.
const ATTR: [bool; 256] = table(b"&<>\"'\t\n\r", true);

const fn table(special: &[u8], all_controls: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        // TAB and LF stay as they are in text; every other control is forbidden or escaped.
        t[b] = all_controls || !(b == b'\t' as usize || b == b'\n' as usize);
        b += 1;
    }
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = true;
        i += 1;
    }
    // U+FFFE and U+FFFF are EF BF BE / EF BF BF in UTF-8.
    t[0xEF] = true;
    t
}

/// The replacement for a character XML 1.0 forbids.
const REPLACEMENT: &str = "\u{FFFD}";

/// Appends `s` escaped as element content.
pub(crate) fn text(out: &mut String, s: &str) {
    escape(out, s, &TEXT, |out, bytes, i| match bytes[i] {
        b'&' => out.push_str("&amp;"),
        b'<' => out.push_str("&lt;"),
        b'\r' => out.push_str("&#13;"),
        // `>` is only special right after `]]`, where it would close a CDATA-like `]]>`.
        b'>' if i >= 2 && bytes[i - 2] == b']' && bytes[i - 1] == b']' => out.push_str("&gt;"),
        b'>' => out.push('>'),
        _ => out.push_str(REPLACEMENT),
    })
}

/// Appends `s` escaped as a `"`-delimited attribute value.
pub(crate) fn attr(out: &mut String, s: &str) {
    escape(out, s, &ATTR, |out, bytes, i| match bytes[i] {
        b'&' => out.push_str("&amp;"),
        b'<' => out.push_str("&lt;"),
        b'>' => out.push_str("&gt;"),
        b'"' => out.push_str("&quot;"),
        b'\'' => out.push_str("&apos;"),
        b'\t' => out.push_str("&#9;"),
        b'\n' => out.push_str("&#10;"),
        b'\r' => out.push_str("&#13;"),
        _ => out.push_str(REPLACEMENT),
    })
}

/// Appends `s` with XML-forbidden characters replaced and nothing escaped: the plain value a
/// conforming parser gives back for the escaped text.
pub(crate) fn replace_forbidden(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().enumerate().any(|(i, b)| forbidden_at(s.as_bytes(), i, b)) {
        let mut out = String::with_capacity(s.len());
        let bytes = s.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            if forbidden_at(bytes, i, bytes[i]) {
                out.push_str(&s[start..i]);
                out.push_str(REPLACEMENT);
                i += if bytes[i] == 0xEF { 3 } else { 1 };
                start = i;
            } else {
                i += 1;
            }
        }
        out.push_str(&s[start..]);
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

fn forbidden_at(bytes: &[u8], i: usize, b: u8) -> bool {
    match b {
        b'\t' | b'\n' | b'\r' => false,
        0..0x20 => true,
        0xEF => is_nonchar(bytes, i),
        _ => false,
    }
}

/// Whether the three bytes at `i` encode U+FFFE or U+FFFF.
fn is_nonchar(bytes: &[u8], i: usize) -> bool {
    matches!(bytes.get(i + 1..i + 3), Some([0xBF, 0xBE | 0xBF]))
}

/// The shared scanning loop: copies runs of ordinary bytes, hands each special byte to `special`.
///
/// Every special byte is ASCII except 0xEF, the lead byte of a three-byte sequence, so the run
/// boundaries always fall on character boundaries.
#[inline(always)]
fn escape(out: &mut String, s: &str, table: &[bool; 256], special: impl Fn(&mut String, &[u8], usize)) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !table[b as usize] {
            i += 1;
            continue;
        }
        if b == 0xEF {
            if !is_nonchar(bytes, i) {
                i += 1;
                continue;
            }
            out.push_str(&s[start..i]);
            out.push_str(REPLACEMENT);
            i += 3;
        } else {
            out.push_str(&s[start..i]);
            special(out, bytes, i);
            i += 1;
        }
        start = i;
    }
    out.push_str(&s[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> String {
        let mut out = String::new();
        text(&mut out, s);
        out
    }

    fn a(s: &str) -> String {
        let mut out = String::new();
        attr(&mut out, s);
        out
    }

    #[test]
    fn text_escapes_only_what_it_must() {
        assert_eq!(t("Must be >= 1 & < 5"), "Must be >= 1 &amp; &lt; 5");
        assert_eq!(t("a]]>b ]>c ]] >"), "a]]&gt;b ]>c ]] >");
        assert_eq!(t("\"quoted\" 'single'"), "\"quoted\" 'single'");
        assert_eq!(t("a\r\nb\tc"), "a&#13;\nb\tc");
        assert_eq!(t("&amp;"), "&amp;amp;");
        assert_eq!(t("]]]>"), "]]]&gt;");
    }

    #[test]
    fn forbidden_characters_become_the_replacement_character() {
        assert_eq!(t("a\u{0}b\u{8}c\u{B}\u{C}\u{1F}"), "a\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(t("x\u{FFFE}y\u{FFFF}z\u{FFFD}\u{FEFF}"), "x\u{FFFD}y\u{FFFD}z\u{FFFD}\u{FEFF}");
        assert_eq!(a("\u{0}\u{FFFF}"), "\u{FFFD}\u{FFFD}");
        assert_eq!(replace_forbidden("a\u{1}\u{FFFE}\r\t"), "a\u{FFFD}\u{FFFD}\r\t");
    }

    #[test]
    fn attributes_escape_quotes_and_whitespace() {
        assert_eq!(a("k\t\n\r\"'<>&"), "k&#9;&#10;&#13;&quot;&apos;&lt;&gt;&amp;");
        assert_eq!(a("caf\u{e9} \u{1F600}"), "caf\u{e9} \u{1F600}");
    }
}
