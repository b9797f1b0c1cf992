//! Text and attribute escaping (ERRORS.md §2). Escaping happens once, when an envelope is written.
//!
//! The input is searched sixteen bytes at a time for the bytes that need escaping or a look
//! ahead; the plain runs between them are copied whole, so plain text, the common case, is one
//! copy.

/// U+FFFD, the replacement for a character XML 1.0 forbids.
const REPLACEMENT: &str = "\u{FFFD}";

/// Appends `s` escaped as element content.
pub(crate) fn text(out: &mut String, s: &str) {
    escape::<true>(out, s);
}

/// Appends `s` escaped as a `"`-delimited attribute value.
pub(crate) fn attr(out: &mut String, s: &str) {
    escape::<false>(out, s);
}

/// Whether `s` is written as element content as it is.
pub(crate) fn is_plain_text(s: &str) -> bool {
    let mut plain = true;
    for_each_special::<true>(s.as_bytes(), |_| {
        plain = false;
        false
    });
    plain
}

/// Whether `b` is escaped or looked at in text (`TEXT`) or in an attribute value: the ASCII
/// bytes that become an entity or U+FFFD, `]` (of `]]>`, in text), and 0xEF (the lead byte of
/// U+FFFE and U+FFFF). Each is ASCII or a lead byte, so its position is a character boundary.
#[inline(always)]
fn special<const TEXT: bool>(b: u8) -> bool {
    if TEXT {
        ((b < 0x20) & (b != b'\t') & (b != b'\n'))
            | (b == b'&')
            | (b == b'<')
            | (b == b']')
            | (b == 0xEF)
    } else {
        (b < 0x20)
            | (b == b'&')
            | (b == b'<')
            | (b == b'>')
            | (b == b'"')
            | (b == b'\'')
            | (b == 0xEF)
    }
}

/// What a special ASCII byte becomes; `None` for `]` and 0xEF, which need a look ahead.
fn entity<const TEXT: bool>(b: u8) -> Option<&'static str> {
    Some(match b {
        b'&' => "&amp;",
        b'<' => "&lt;",
        b'\r' => "&#13;",
        b'>' => "&gt;",
        b'"' => "&quot;",
        b'\'' => "&apos;",
        b'\t' if !TEXT => "&#9;",
        b'\n' if !TEXT => "&#10;",
        0..0x20 => REPLACEMENT,
        _ => return None,
    })
}

const BLOCK: usize = 16;

/// One bit per byte of `block` that [`special`] names, the first byte lowest. A fixed-size,
/// branch-free loop: the compiler makes it a few vector compares and one mask extraction.
#[inline(always)]
fn block_mask<const TEXT: bool>(block: &[u8; BLOCK]) -> u32 {
    let mut mask = 0;
    for (i, &b) in block.iter().enumerate() {
        mask |= u32::from(special::<TEXT>(b)) << i;
    }
    mask
}

/// Calls `f` with the position of each byte of `s` that [`special`] names, in order, while `f`
/// returns `true`. The last block overlaps the one before (its shared bytes masked out) and a
/// string shorter than a block is copied into one padded with spaces: no scalar tail loop, which
/// for the short strings of an envelope (a name, a message) would be most of the cost.
#[inline(always)]
fn for_each_special<const TEXT: bool>(s: &[u8], mut f: impl FnMut(usize) -> bool) {
    let mut visit = |offset: usize, mut mask: u32| {
        while mask != 0 {
            if !f(offset + mask.trailing_zeros() as usize) {
                return false;
            }
            mask &= mask - 1;
        }
        true
    };
    if s.len() < BLOCK {
        let mut padded = [b' '; BLOCK];
        padded[..s.len()].copy_from_slice(s);
        visit(0, block_mask::<TEXT>(&padded));
        return;
    }
    let (blocks, rest) = s.as_chunks::<BLOCK>();
    for (i, block) in blocks.iter().enumerate() {
        if !visit(i * BLOCK, block_mask::<TEXT>(block)) {
            return;
        }
    }
    if let Some(last) = s.last_chunk::<BLOCK>().filter(|_| !rest.is_empty()) {
        // The bytes the last block shares with the one before were visited already.
        let shared = BLOCK - rest.len();
        visit(
            s.len() - BLOCK,
            block_mask::<TEXT>(last) >> shared << shared,
        );
    }
}

/// Appends `s` escaped: the runs between special bytes copied whole, each special byte
/// replaced by its entity; U+FFFE/U+FFFF become U+FFFD and, in text, `]]>` is broken up.
#[inline(always)]
fn escape<const TEXT: bool>(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    // The first byte not yet written; bytes before it were handled (a look ahead may take
    // special bytes with it).
    let mut start = 0;
    for_each_special::<TEXT>(bytes, |i| {
        if i < start {
            return true;
        }
        let (written, len) = match entity::<TEXT>(bytes[i]) {
            Some(entity) => (entity, 1),
            None => match bytes.get(i..i + 3) {
                Some([0xEF, 0xBF, 0xBE | 0xBF]) => (REPLACEMENT, 3),
                Some(b"]]>") if TEXT => ("]]&gt;", 3),
                // A `]` or a lead byte that needs nothing: it stays in the run.
                _ => return true,
            },
        };
        out.push_str(&s[start..i]);
        out.push_str(written);
        start = i + len;
        true
    });
    out.push_str(&s[start..]);
}

/// The plain value a conforming parser gives back for `s` once escaped: `s` with the characters
/// XML forbids replaced by U+FFFD.
pub(crate) fn replace_forbidden(s: &str) -> std::borrow::Cow<'_, str> {
    let forbidden = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}');
    if s.contains(forbidden) {
        s.replace(forbidden, REPLACEMENT).into()
    } else {
        s.into()
    }
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

    /// Escaping character by character, as ERRORS.md §2 says it.
    fn by_character(s: &str, text: bool) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            if text && rest.starts_with("]]>") {
                out.push_str("]]&gt;");
                rest = &rest[3..];
                continue;
            }
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '\r' => out.push_str("&#13;"),
                '\t' | '\n' if text => out.push(c),
                '>' | '"' | '\'' if text => out.push(c),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&apos;"),
                '\t' => out.push_str("&#9;"),
                '\n' => out.push_str("&#10;"),
                '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => out.push_str(REPLACEMENT),
                _ => out.push(c),
            }
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    proptest::proptest! {
        /// The block-wise search finds what a byte-by-byte one finds, at every length and
        /// wherever the byte sits (first block, last, the overlap, a padded short string).
        #[test]
        fn the_block_search_is_the_byte_search(
            plain in "[a-z \"'>]{0,70}",
            at in 0usize..71,
            byte in proptest::sample::select(b"&<>]\"'\t\n\r\x00\x1f\xef ".to_vec()),
        ) {
            let mut bytes = plain.into_bytes();
            bytes.insert(at.min(bytes.len()), byte);
            for s in [&bytes[..], &bytes[..bytes.len() - 1]] {
                let mut found = Vec::new();
                for_each_special::<true>(s, |i| { found.push(i); true });
                let text: Vec<usize> = (0..s.len()).filter(|&i| special::<true>(s[i])).collect();
                proptest::prop_assert_eq!(found, text);
                let mut found = Vec::new();
                for_each_special::<false>(s, |i| { found.push(i); true });
                let attr: Vec<usize> = (0..s.len()).filter(|&i| special::<false>(s[i])).collect();
                proptest::prop_assert_eq!(found, attr);
            }
        }

        /// Escaping a run at a time writes what escaping a character at a time writes, `]]>`
        /// and U+FFFE/U+FFFF wherever they fall (inside a block, across two).
        #[test]
        fn the_runs_are_written_as_each_character_would_be(
            s in r#"([a-z "'>&<\]\t\r\n\x01\x{FFFE}\x{FFFF}\x{FEFF}é]|\]\]>){0,40}"#,
        ) {
            proptest::prop_assert_eq!(t(&s), by_character(&s, true));
            proptest::prop_assert_eq!(a(&s), by_character(&s, false));
            if is_plain_text(&s) {
                proptest::prop_assert_eq!(t(&s), s);
            }
        }
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
