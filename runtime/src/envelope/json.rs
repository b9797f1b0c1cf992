//! An envelope's answer written as JSON by hand: its strings are most of the answer's bytes,
//! and are escaped sixteen bytes at a time where nothing needs escaping (serde_json looks up
//! every byte). The output is serde_json's, byte for byte (a test holds the two together).

/// Appends `s` as a JSON string, escaped as serde_json escapes it: `"` and `\`, the short
/// escapes `\b \f \n \r \t`, other control characters as `\u00XX` (lowercase hex).
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let (blocks, rest) = bytes.as_chunks::<BLOCK>();
    for (n, block) in blocks.iter().enumerate() {
        let marked = marks(block);
        if marked != 0 {
            escape_marked(out, bytes, &mut start, n * BLOCK, marked);
        }
    }
    if !rest.is_empty() {
        // The last few bytes, padded with spaces, which need no escape.
        let mut padded = [b' '; BLOCK];
        padded[..rest.len()].copy_from_slice(rest);
        let marked = marks(&padded);
        if marked != 0 {
            escape_marked(out, bytes, &mut start, bytes.len() - rest.len(), marked);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

const BLOCK: usize = 16;

/// Escapes each byte `marked` names in the block at `at` (its bit `i` for `bytes[at + i]`),
/// after the bytes since `start` that need none.
fn escape_marked(out: &mut Vec<u8>, bytes: &[u8], start: &mut usize, at: usize, mut marked: u32) {
    while marked != 0 {
        let i = at + marked.trailing_zeros() as usize;
        marked &= marked - 1;
        out.extend_from_slice(&bytes[*start..i]);
        let b = bytes[i];
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
            }
        }
        *start = i + 1;
    }
}

/// One bit for each byte of `block` that JSON escapes (a control character, `"` or `\`), the
/// first byte's lowest.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn marks(block: &[u8; BLOCK]) -> u32 {
    // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 processor has it.
    unsafe { sse2_marks(block) }
}

/// [`marks`], sixteen bytes compared at once.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "sse2")]
#[allow(unsafe_code)] // The unaligned load: see its SAFETY note.
fn sse2_marks(block: &[u8; BLOCK]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: the pointer is valid for 16 bytes, and `loadu` takes any alignment.
    let x = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
    let is = |b: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8));
    // A byte below 0x20 is its own minimum with 0x1F.
    let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
    _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(is(b'"'), is(b'\\')))) as u32
}

/// [`marks`], a byte at a time: on other processors, and the reference of the test.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn marks_bytewise(block: &[u8; BLOCK]) -> u32 {
    (block.iter().enumerate())
        .filter(|(_, b)| **b < 0x20 || **b == b'"' || **b == b'\\')
        .fold(0, |marks, (i, _)| marks | 1 << i)
}

#[cfg(not(target_arch = "x86_64"))]
use marks_bytewise as marks;

/// Appends an unsigned integer.
pub(crate) fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(super::itoa(n, &mut [0; 20]).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value, at every place of a block, is marked as the bytewise reference marks it.
    #[test]
    fn marks_are_exact() {
        for b in 0..=u8::MAX {
            for at in 0..BLOCK {
                let mut block = [b'a'; BLOCK];
                block[at] = b;
                // Its neighbours too: a byte to escape beside one that needs none, and another.
                block[(at + 1) % BLOCK] = b.wrapping_add(1);
                block[(at + 3) % BLOCK] = b'"';
                assert_eq!(marks(&block), marks_bytewise(&block), "{b:#x} at {at}");
            }
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut samples: Vec<String> = (0u8..=0x7f).map(|b| char::from(b).to_string()).collect();
        samples.extend(
            [
                "",
                "plain text of more than eight bytes",
                "<tool_error code=\"X\">\n<message>a\\b</message>\n</tool_error>",
                "é ✓ \u{1F600} \u{fffd} \u{7f}",
                "\u{0}\u{1}\u{1f}\"\\\u{8}\u{c}\n\r\t",
                "12345678\"12345678\\1234567\u{1b}",
                // Several to escape in one word, each followed by the byte a borrow could
                // mark too (`"` and `#`, `\\` and `]`, a control character and the next).
                "\"#\"#\\]\\]\u{0}\u{1}\u{1f} \n!\"\"\"\"\"\"\"\"",
            ]
            .map(str::to_owned),
        );
        samples.push((0u8..0x80).map(char::from).collect());
        samples.push((0u8..0x80).rev().map(char::from).collect());
        for at in 0..20 {
            for odd in ["\"", "\\", "\n", "\u{1}", "é"] {
                samples.push(format!("{}{odd}{}", "a".repeat(at), "b".repeat(19 - at)));
            }
        }
        for sample in samples {
            let mut out = Vec::new();
            string(&mut out, &sample);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&sample).unwrap(),
                "{sample:?}"
            );
        }
    }
}
