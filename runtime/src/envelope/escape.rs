//! Text and attribute escaping (ERRORS.md §2). Escaping happens once, when an envelope is written.
//!
//! Each input byte is looked up in a table that holds what it becomes (itself, or an entity) and
//! written with one fixed-size copy, so dense markup costs the same per byte as plain text and
//! there is no call per special character.

/// What one input byte becomes: up to 8 output bytes, or `len == 0` for "look closer" (the
/// lead byte of U+FFFE/U+FFFF, and `]`, which starts the `]]>` that text must break up).
#[derive(Clone, Copy)]
struct Out {
    bytes: [u8; 8],
    len: u8,
}

const fn out(entity: &[u8]) -> Out {
    let mut bytes = [0; 8];
    let mut i = 0;
    while i < entity.len() {
        bytes[i] = entity[i];
        i += 1;
    }
    Out {
        bytes,
        len: entity.len() as u8,
    }
}

const CLOSER: Out = Out {
    bytes: [0; 8],
    len: 0,
};
/// U+FFFD, the replacement for a character XML 1.0 forbids.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

const fn table(text: bool) -> [Out; 256] {
    let mut t = [CLOSER; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = out(&[b as u8]);
        b += 1;
    }
    let mut c = 0;
    while c < 0x20 {
        t[c] = out(REPLACEMENT);
        c += 1;
    }
    t[b'&' as usize] = out(b"&amp;");
    t[b'<' as usize] = out(b"&lt;");
    t[b'\r' as usize] = out(b"&#13;");
    if text {
        // TAB and LF stay as they are in text; `>` only matters after `]]`.
        t[b'\t' as usize] = out(b"\t");
        t[b'\n' as usize] = out(b"\n");
        t[b']' as usize] = CLOSER;
    } else {
        t[b'>' as usize] = out(b"&gt;");
        t[b'"' as usize] = out(b"&quot;");
        t[b'\'' as usize] = out(b"&apos;");
        t[b'\t' as usize] = out(b"&#9;");
        t[b'\n' as usize] = out(b"&#10;");
    }
    t[0xEF] = CLOSER;
    t
}

static TEXT: [Out; 256] = table(true);
static ATTR: [Out; 256] = table(false);

/// Appends `s` escaped as element content.
pub(crate) fn text(out: &mut String, s: &str) {
    // Most text has nothing to escape: one branch-free pass the compiler vectorises, one copy.
    let special = |b: u8| {
        (b < 0x20 && b != b'\t' && b != b'\n')
            | (b == b'&')
            | (b == b'<')
            | (b == b']')
            | (b == 0xEF)
    };
    if s.bytes().fold(false, |any, b| any | special(b)) {
        escape(out, s, &TEXT);
    } else {
        out.push_str(s);
    }
}

/// Appends `s` escaped as a `"`-delimited attribute value.
pub(crate) fn attr(out: &mut String, s: &str) {
    let special = |b: u8| {
        (b < 0x20)
            | (b == b'&')
            | (b == b'<')
            | (b == b'>')
            | (b == b'"')
            | (b == b'\'')
            | (b == 0xEF)
    };
    if s.bytes().fold(false, |any, b| any | special(b)) {
        escape(out, s, &ATTR);
    } else {
        out.push_str(s);
    }
}

/// The plain value a conforming parser gives back for `s` once escaped: `s` with the characters
/// XML forbids replaced by U+FFFD.
pub(crate) fn replace_forbidden(s: &str) -> std::borrow::Cow<'_, str> {
    let forbidden = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}');
    if s.contains(forbidden) {
        s.replace(forbidden, "\u{FFFD}").into()
    } else {
        s.into()
    }
}

/// Whether the three bytes at `i` encode U+FFFE or U+FFFF.
fn is_nonchar(bytes: &[u8], i: usize) -> bool {
    matches!(bytes.get(i..i + 3), Some([0xEF, 0xBF, 0xBE | 0xBF]))
}

fn escape(out: &mut String, s: &str, table: &[Out; 256]) {
    let bytes = s.as_bytes();
    // SAFETY: `out` is valid UTF-8 again before this function returns, and nothing between can
    // panic with it otherwise (the slice below is sized for the worst case, 5 bytes per input
    // byte, and zero-filled, which is valid UTF-8). What is appended is valid UTF-8: ASCII bytes
    // become ASCII entities; bytes of multi-byte characters are copied unchanged and in order,
    // except a whole U+FFFE/U+FFFF, which becomes a whole U+FFFD.
    let buf = unsafe { out.as_mut_vec() };
    let start = buf.len();
    buf.resize(start + bytes.len() * 5 + 8, 0);
    let dst = &mut buf[start..];
    let mut pos = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let o = &table[b as usize];
        if o.len != 0 {
            dst[pos..pos + 8].copy_from_slice(&o.bytes);
            pos += o.len as usize;
            i += 1;
            continue;
        }
        // The rare cases that need to look ahead.
        let (written, consumed): (&[u8], usize) = if b == 0xEF {
            if is_nonchar(bytes, i) {
                (REPLACEMENT, 3)
            } else {
                (&[0xEF], 1)
            }
        } else if bytes.get(i + 1..i + 3) == Some(b"]>") {
            (b"]]&gt;", 3)
        } else {
            (b"]", 1)
        };
        dst[pos..pos + written.len()].copy_from_slice(written);
        pos += written.len();
        i += consumed;
    }
    buf.truncate(start + pos);
    debug_assert!(std::str::from_utf8(&buf[start..]).is_ok());
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
        assert_eq!(
            t("a\u{0}b\u{8}c\u{B}\u{C}\u{1F}"),
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}\u{FFFD}"
        );
        assert_eq!(
            t("x\u{FFFE}y\u{FFFF}z\u{FFFD}\u{FEFF}"),
            "x\u{FFFD}y\u{FFFD}z\u{FFFD}\u{FEFF}"
        );
        assert_eq!(a("\u{0}\u{FFFF}"), "\u{FFFD}\u{FFFD}");
        assert_eq!(
            replace_forbidden("a\u{1}\u{FFFE}\r\t"),
            "a\u{FFFD}\u{FFFD}\r\t"
        );
    }

    #[test]
    fn attributes_escape_quotes_and_whitespace() {
        assert_eq!(
            a("k\t\n\r\"'<>&"),
            "k&#9;&#10;&#13;&quot;&apos;&lt;&gt;&amp;"
        );
        assert_eq!(a("caf\u{e9} \u{1F600}"), "caf\u{e9} \u{1F600}");
    }
}
