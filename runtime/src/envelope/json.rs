//! An envelope's answer written as JSON by hand: its strings are most of the answer's bytes,
//! and are escaped eight bytes at a time where nothing needs escaping (serde_json looks up
//! every byte). The output is serde_json's, byte for byte (a test holds the two together).

/// Appends `s` as a JSON string, escaped as serde_json escapes it: `"` and `\`, the short
/// escapes `\b \f \n \r \t`, other control characters as `\u00XX` (lowercase hex).
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time: the lowest byte the mask marks is the first to escape.
        let (word, len) = match bytes.get(i..i + 8) {
            // A fixed-size load (a zero word, never taken, would only slow the next step).
            Some(chunk) => (<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]), 8),
            // The last few bytes, padded with spaces, which need no escape.
            None => {
                let mut word = [b' '; 8];
                let rest = &bytes[i..];
                word[..rest.len()].copy_from_slice(rest);
                (word, rest.len())
            }
        };
        let mask = escape_mask(u64::from_le_bytes(word));
        if mask == 0 {
            i += len;
            continue;
        }
        let at = i + (mask.trailing_zeros() / 8) as usize;
        if let Some(escaped) = escape(bytes[at]) {
            out.extend_from_slice(&bytes[start..at]);
            match escaped {
                Escape::Short(c) => out.extend_from_slice(&[b'\\', c]),
                Escape::Unicode => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    let b = bytes[at];
                    out.extend_from_slice(b"\\u00");
                    out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
                }
            }
            start = at + 1;
        }
        i = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

enum Escape {
    Short(u8),
    Unicode,
}

fn escape(b: u8) -> Option<Escape> {
    Some(match b {
        b'"' => Escape::Short(b'"'),
        b'\\' => Escape::Short(b'\\'),
        0x08 => Escape::Short(b'b'),
        0x0c => Escape::Short(b'f'),
        b'\n' => Escape::Short(b'n'),
        b'\r' => Escape::Short(b'r'),
        b'\t' => Escape::Short(b't'),
        0..0x20 => Escape::Unicode,
        _ => return None,
    })
}

/// The high bit of each of the eight bytes of `word` that is a control character, `"` or `\`
/// (little-endian; bytes of 0x80 and above never count). Above the lowest marked byte, a mark
/// may be wrong (a borrow); the lowest is always right.
fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    control | zero_in(word ^ (ONES * u64::from(b'"'))) | zero_in(word ^ (ONES * u64::from(b'\\')))
}

/// Appends an unsigned integer.
pub(crate) fn number(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(super::itoa(n, &mut [0; 20]).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

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
