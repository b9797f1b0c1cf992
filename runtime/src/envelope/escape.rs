//! Text and attribute escaping (ERRORS.md §2). Escaping happens once, when an envelope is written.
//!
//! Plain text, the common case, is found by one vectorised pass and copied whole; so is the
//! plain run before the first byte that needs escaping. From there each byte is looked up in a
//! table that holds what it becomes (itself, or an entity) and written with one fixed-size store:
//! dense markup costs the same per byte as any other text, with no branch or call per special
//! character.

/// What one input byte becomes, packed in a `u64`: up to 6 output bytes (little-endian), a
/// look-ahead mark, and the byte count in the top byte.
type Out = u64;

const fn out(entity: &[u8]) -> Out {
    let mut packed = (entity.len() as u64) << 56;
    let mut i = 0;
    while i < entity.len() {
        packed |= (entity[i] as u64) << (8 * i);
        i += 1;
    }
    packed
}

/// U+FFFD, the replacement for a character XML 1.0 forbids.
const REPLACEMENT: &str = "\u{FFFD}";

const fn table(text: bool) -> [Out; 256] {
    let mut t = [0; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = out(&[b as u8]);
        b += 1;
    }
    let mut c = 0;
    while c < 0x20 {
        t[c] = out(REPLACEMENT.as_bytes());
        c += 1;
    }
    t[b'&' as usize] = out(b"&amp;");
    t[b'<' as usize] = out(b"&lt;");
    t[b'\r' as usize] = out(b"&#13;");
    if text {
        // TAB and LF stay as they are in text; `>` only matters in `]]>`, handled apart.
        t[b'\t' as usize] = out(b"\t");
        t[b'\n' as usize] = out(b"\n");
    } else {
        t[b'>' as usize] = out(b"&gt;");
        t[b'"' as usize] = out(b"&quot;");
        t[b'\'' as usize] = out(b"&apos;");
        t[b'\t' as usize] = out(b"&#9;");
        t[b'\n' as usize] = out(b"&#10;");
    }
    t
}

/// An escaping table, as a type parameter, so that each escaper gets its own inlined loop.
trait Table {
    const OUT: &'static [Out; 256];
}

struct Text;
struct Attr;

static TEXT: [Out; 256] = flag_look_ahead(table(true), true);
static ATTR: [Out; 256] = flag_look_ahead(table(false), false);

impl Table for Text {
    const OUT: &'static [Out; 256] = &TEXT;
}

impl Table for Attr {
    const OUT: &'static [Out; 256] = &ATTR;
}

/// Marks the entries of bytes that may need a look ahead; the mark sits in byte 7 of the entry,
/// past any entity, so it is never part of what is kept.
const LOOK_AHEAD: Out = 1 << 55;

const fn flag_look_ahead(mut t: [Out; 256], text: bool) -> [Out; 256] {
    t[0xEF] |= LOOK_AHEAD;
    if text {
        t[b']' as usize] |= LOOK_AHEAD;
    }
    t
}

/// Appends `s` escaped as element content.
pub(crate) fn text(out: &mut String, s: &str) {
    escape_by_class::<Text, true>(out, s, |b| (b == b']') | (b == 0xEF));
}

/// Appends `s` escaped as a `"`-delimited attribute value.
pub(crate) fn attr(out: &mut String, s: &str) {
    escape_by_class::<Attr, false>(out, s, |b| b == 0xEF);
}

/// Whether `s` is written as element content as it is.
pub(crate) fn is_plain_text(s: &str) -> bool {
    first_special::<true>(s.as_bytes()).is_none()
}

/// Whether `b` is escaped or looked at in text (`TEXT`) or in an attribute value.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
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

/// The position of the first byte of `s` that [`special`] names. Every such byte is ASCII or
/// 0xEF, a lead byte, so the position is a character boundary.
// Unsafe kept on purpose (the SSE2 intrinsics): a safe, compiler-vectorised search measured
// slower on the envelopes' short strings (criterion, same quiet session: envelope/full median
// 117.4 ns with SSE2, 155.3 ns safe; validation/format 336.6 vs 409.4 ns).
#[allow(unsafe_code)]
#[inline]
fn first_special<const TEXT: bool>(s: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 processor has it.
    return unsafe { sse2::first_special::<TEXT>(s) };
    #[cfg(not(target_arch = "x86_64"))]
    s.iter().position(|&b| special::<TEXT>(b))
}

/// [`first_special`] sixteen bytes at a time. The compiler's own vectorising of a byte loop
/// leaves a tail of up to 31 bytes to a scalar loop, which for the short strings of an envelope
/// (a name, a message) is most of the cost; here the last block overlaps the one before and a
/// string shorter than a block is copied into one padded with spaces.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    const BLOCK: usize = 16;

    #[inline]
    #[target_feature(enable = "sse2")]
    #[allow(unsafe_code)] // The unaligned load: see its SAFETY note.
    pub(super) fn first_special<const TEXT: bool>(s: &[u8]) -> Option<usize> {
        // One bit per byte of the block that needs a look, the first byte lowest.
        let found = |block: &[u8; BLOCK]| {
            // SAFETY: the pointer is valid for 16 bytes, and `loadu` takes any alignment.
            let bytes = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
            _mm_movemask_epi8(special::<TEXT>(bytes)) as u32
        };
        let at =
            |offset: usize, bits: u32| (bits != 0).then(|| offset + bits.trailing_zeros() as usize);
        if s.len() < BLOCK {
            let mut padded = [b' '; BLOCK];
            padded[..s.len()].copy_from_slice(s);
            return at(0, found(&padded));
        }
        let (blocks, rest) = s.as_chunks::<BLOCK>();
        for (i, block) in blocks.iter().enumerate() {
            if let Some(position) = at(i * BLOCK, found(block)) {
                return Some(position);
            }
        }
        // The bytes the last block shares with the one before were looked at already.
        let last = s.last_chunk::<BLOCK>().filter(|_| !rest.is_empty())?;
        at(s.len() - BLOCK, found(last))
    }

    /// Each byte of `x` that [`super::special`] names, as 0xFF.
    #[target_feature(enable = "sse2")]
    fn special<const TEXT: bool>(x: __m128i) -> __m128i {
        let is = |b: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8));
        let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
        let shared = _mm_or_si128(_mm_or_si128(is(b'&'), is(b'<')), is(0xEF));
        if TEXT {
            let kept = _mm_or_si128(is(b'\t'), is(b'\n'));
            let control = _mm_andnot_si128(kept, control);
            _mm_or_si128(_mm_or_si128(control, shared), is(b']'))
        } else {
            let quotes = _mm_or_si128(is(b'"'), is(b'\''));
            _mm_or_si128(
                _mm_or_si128(control, shared),
                _mm_or_si128(quotes, is(b'>')),
            )
        }
    }
}

/// Strings up to this long are classified first (one vectorised pass), so that plain text is
/// copied whole; longer ones go straight to the table, which notices the rare bytes that need
/// a look ahead (`]` of `]]>`, 0xEF of U+FFFE/U+FFFF) on the way.
const SHORT: usize = 256;

#[inline(always)]
fn escape_by_class<T: Table, const TEXT: bool>(
    out: &mut String,
    s: &str,
    looks_ahead: impl Fn(u8) -> bool,
) {
    let s = match s.len() <= SHORT {
        true => match first_special::<TEXT>(s.as_bytes()) {
            None => return out.push_str(s),
            // The run before it needs nothing, not even a look ahead: copied whole.
            Some(plain) => {
                out.push_str(&s[..plain]);
                &s[plain..]
            }
        },
        false => s,
    };
    let start = out.len();
    if escape::<T>(out, s) {
        out.truncate(start);
        escape_looking_ahead::<T>(out, s, looks_ahead);
    }
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

/// Escapes input that holds a byte needing a look ahead: U+FFFE/U+FFFF become U+FFFD, and, in
/// text, `]]>` is broken up; the runs between are escaped by the table.
fn escape_looking_ahead<T: Table>(out: &mut String, s: &str, looks_ahead: impl Fn(u8) -> bool) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(|&b| looks_ahead(b)) {
        i += offset;
        let written = match bytes.get(i..i + 3) {
            Some([0xEF, 0xBF, 0xBE | 0xBF]) => REPLACEMENT,
            Some(b"]]>") => "]]&gt;",
            _ => {
                i += 1;
                continue;
            }
        };
        // `i` is a character boundary: an ASCII `]` or the lead byte of a three-byte character.
        // The run may hold a `]` or 0xEF that needs nothing: what `escape` reports is known.
        let _ = escape::<T>(out, &s[start..i]);
        out.push_str(written);
        i += 3;
        start = i;
    }
    let _ = escape::<T>(out, &s[start..]);
}

/// Escapes `s` with one table load and one fixed-size store per byte, no branch on what the
/// byte is. Returns whether `s` held a byte that needs a look ahead, in which case what was
/// appended must be redone.
// Unsafe kept on purpose: a safe writer (`push_str` of the runs between special bytes, each
// special byte's entity pushed) measured 1.8x slower on dense markup (criterion
// `envelope/escape_4k`, median 10.0 µs with this writer, 18.3 µs with the safe one, same
// session), so this item alone may use `unsafe`.
#[allow(unsafe_code)]
fn escape<T: Table>(out: &mut String, s: &str) -> bool {
    // SAFETY (of `as_mut_vec`): only valid UTF-8 is appended. Every byte is copied as it is or,
    // if ASCII, replaced by an ASCII entity, so multi-byte characters are copied unchanged and in
    // order (0xEF, the only non-ASCII byte with an entry of its own, maps to itself). A block may
    // end inside a character, but the next block continues it, and nothing in between can panic,
    // so the buffer is valid UTF-8 again when this returns.
    let buf = unsafe { out.as_mut_vec() };
    let mut seen = 0;
    for block in s.as_bytes().chunks(BLOCK) {
        // An entry is written as 8 bytes of which at most 6 are kept.
        buf.reserve(block.len() * 6 + 8);
        let start = buf.len();
        let dst = buf.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        let mut pos = 0;
        for &b in block {
            let o = T::OUT[b as usize];
            seen |= o;
            // SAFETY: `pos` is at most 6 per byte written so far, so `pos + 8` stays within the
            // capacity reserved above.
            unsafe { dst.add(pos).cast::<u64>().write_unaligned(o.to_le()) };
            pos += (o >> 56) as usize;
        }
        // SAFETY: the first `pos` bytes past `start` were written above.
        unsafe { buf.set_len(start + pos) };
    }
    debug_assert!(std::str::from_utf8(buf).is_ok());
    seen & LOOK_AHEAD != 0
}

const BLOCK: usize = 256;

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
                let text = s.iter().position(|&b| special::<true>(b));
                let attr = s.iter().position(|&b| special::<false>(b));
                proptest::prop_assert_eq!(first_special::<true>(s), text);
                proptest::prop_assert_eq!(first_special::<false>(s), attr);
            }
        }

        /// Escaping with the table, plain runs copied whole, writes what escaping a character at a time writes, `]]>`
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

        /// Copying the plain run before the first special byte whole writes what the table
        /// writes for it: the same text as the table over the whole string, `]]>` and
        /// U+FFFE/U+FFFF wherever they fall.
        #[test]
        fn the_plain_run_is_written_as_the_table_writes_it(
            s in r#"([a-z "'>&<\]\t\r\n\x01\x{FFFE}\x{FFFF}\x{FEFF}é]|\]\]>){0,40}"#,
        ) {
            let mut by_table = String::new();
            escape_looking_ahead::<Text>(&mut by_table, &s, |b| (b == b']') | (b == 0xEF));
            proptest::prop_assert_eq!(t(&s), by_table);
            let mut by_table = String::new();
            escape_looking_ahead::<Attr>(&mut by_table, &s, |b| b == 0xEF);
            proptest::prop_assert_eq!(a(&s), by_table);
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
