//! The "close" rule shared by did-you-mean suggestions (ERRORS.md §4, "Close").

/// Names searched for the one closest to a value (a router's actions, an object's declared
/// fields), prepared once: ASCII names are lowercased ahead, and those of at most eight bytes
/// packed in a word, so that a mistyped name is compared with each name of its length in a few
/// instructions. The one implementation of the rule.
///
/// A name is close when, after ASCII lowercasing both, their Levenshtein distance is at most 2,
/// or one non-empty string contains the other; the smallest distance wins, the earliest name on
/// a tie.
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    names: Vec<String>,
    /// Each name lowercased, when it is ASCII.
    lowered: Vec<Option<Box<[u8]>>>,
    /// The same packed in a word, when it has at most eight bytes.
    words: Vec<Option<u64>>,
}

/// Up to eight lowercased ASCII bytes in a word, zero-padded.
fn word(bytes: &[u8]) -> u64 {
    let mut padded = [0; 8];
    padded[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(padded)
}

/// How many bytes of two packed words differ.
fn differing_bytes(a: u64, b: u64) -> usize {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = a ^ b;
    // The high bit of each byte that is not zero.
    ((((x & LOW) + LOW) | x) & !LOW).count_ones() as usize
}

impl Names {
    pub(crate) fn new(names: &[String]) -> Self {
        let lowered: Vec<Option<Box<[u8]>>> = names
            .iter()
            .map(|n| {
                n.is_ascii()
                    .then(|| n.to_ascii_lowercase().into_bytes().into())
            })
            .collect();
        let words = lowered
            .iter()
            .map(|l| l.as_deref().filter(|l| l.len() <= 8).map(word))
            .collect();
        Names {
            names: names.to_vec(),
            lowered,
            words,
        }
    }

    /// The index of the closest name to `value`, if one is close.
    pub(crate) fn closest(&self, value: &str) -> Option<usize> {
        let mut buffer = [0; 64];
        let lowered = (value.len() <= buffer.len() && value.is_ascii()).then(|| {
            let lowered = &mut buffer[..value.len()];
            lowered.copy_from_slice(value.as_bytes());
            lowered.make_ascii_lowercase();
            &*lowered
        });
        let packed = lowered.filter(|v| v.len() <= 8).map(word);
        let value_len = char_len(value);
        let mut row = Vec::new();
        let mut best: Option<(usize, usize)> = None;
        for (index, name) in self.names.iter().enumerate() {
            let d = match (lowered, &self.lowered[index]) {
                (Some(v), Some(n)) if v.len() == n.len() => {
                    let differing = match (packed, self.words[index]) {
                        (Some(v), Some(n)) => differing_bytes(v, n),
                        _ => v.iter().zip(n.iter()).filter(|(x, y)| x != y).count(),
                    };
                    if differing <= 2 {
                        Some(differing)
                    } else {
                        let d = levenshtein_ascii(v, n, &mut row);
                        (d <= 2).then_some(d)
                    }
                }
                _ => distance_if_close(value, value_len, name, &mut row),
            };
            if let Some(d) = d.filter(|&d| best.is_none_or(|(bd, _)| d < bd)) {
                best = Some((d, index));
            }
        }
        best.map(|(_, i)| i)
    }
}

/// Length in Unicode scalar values, without decoding ASCII.
fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// The distance between `a` and `b`, ASCII case ignored, when they are close; else `None`.
/// Never quadratic in a long input: edit distance is only computed when the lengths differ by
/// at most 2, and the names compared against are short.
fn distance_if_close(a: &str, a_len: usize, b: &str, row: &mut Vec<usize>) -> Option<usize> {
    let b_len = char_len(b);
    if contains_ignore_case(a, b) || contains_ignore_case(b, a) {
        // One contains the other, so the distance is exactly the insertions that tell them apart.
        return Some(a_len.abs_diff(b_len));
    }
    if a_len.abs_diff(b_len) > 2 {
        return None;
    }
    let d = levenshtein(a, b, b_len, row);
    (d <= 2).then_some(d)
}

/// Whether non-empty `needle` occurs in `haystack`, ASCII case ignored.
fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    // A byte-wise match that starts and ends on character boundaries of both is a match of
    // characters, since UTF-8 is self-synchronising and ASCII folding keeps non-ASCII bytes.
    !n.is_empty() && h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Levenshtein distance over Unicode scalar values, ASCII case ignored, with one reused row.
fn levenshtein(a: &str, b: &str, b_len: usize, row: &mut Vec<usize>) -> usize {
    if a.is_ascii() && b.is_ascii() {
        return levenshtein_ascii(a.as_bytes(), b.as_bytes(), row);
    }
    row.clear();
    row.extend(0..=b_len);
    for (i, ca) in a.chars().map(|c| c.to_ascii_lowercase()).enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.chars().map(|c| c.to_ascii_lowercase()).enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b_len]
}

/// The same over bytes, for the usual case of ASCII names: no decoding in the inner loop.
fn levenshtein_ascii(a: &[u8], b: &[u8], row: &mut Vec<usize>) -> usize {
    row.clear();
    row.extend(0..=b.len());
    for (i, ca) in a.iter().map(u8::to_ascii_lowercase).enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().map(u8::to_ascii_lowercase).enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name [`Names::closest`] picks.
    fn closest<'a, const N: usize>(value: &str, names: [&'a str; N]) -> Option<&'a str> {
        let owned: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        Names::new(&owned).closest(value).map(|i| names[i])
    }

    #[test]
    fn edit_distance() {
        let d = |a: &str, b: &str| levenshtein(a, b, char_len(b), &mut Vec::new());
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("caf\u{e9}", "cafe"), 1);
        assert_eq!(d("GET", "get"), 0);
    }

    /// The rule as ERRORS.md words it, cell by cell, to hold the fast paths against.
    fn by_the_rule(value: &str, names: &[String]) -> Option<usize> {
        let lower = |s: &str| s.to_ascii_lowercase().chars().collect::<Vec<char>>();
        let v = lower(value);
        let mut best: Option<(usize, usize)> = None;
        for (i, name) in names.iter().enumerate() {
            let n = lower(name);
            let contains =
                |h: &[char], k: &[char]| !k.is_empty() && h.windows(k.len()).any(|w| w == k);
            let mut row: Vec<usize> = (0..=n.len()).collect();
            for (x, a) in v.iter().enumerate() {
                let mut diagonal = row[0];
                row[0] = x + 1;
                for (y, b) in n.iter().enumerate() {
                    let above = row[y + 1];
                    row[y + 1] = (above + 1)
                        .min(row[y] + 1)
                        .min(diagonal + usize::from(a != b));
                    diagonal = above;
                }
            }
            let d = row[n.len()];
            if (d <= 2 || contains(&v, &n) || contains(&n, &v)) && best.is_none_or(|(bd, _)| d < bd)
            {
                best = Some((d, i));
            }
        }
        best.map(|(_, i)| i)
    }

    proptest::proptest! {
        #[test]
        fn prepared_names_pick_what_the_rule_picks(
            names in proptest::collection::vec("[a-cA-C_\u{e9}]{0,10}", 0..8),
            value in "[a-cA-C_.\u{e9}]{0,12}",
        ) {
            proptest::prop_assert_eq!(Names::new(&names).closest(&value), by_the_rule(&value, &names));
        }
    }

    #[test]
    fn closeness_rule() {
        let names = ["list_invoices", "get_invoice", "create_invoice"];
        assert_eq!(closest("get_invoce", names), Some("get_invoice"));
        assert_eq!(closest("GET_INVOICE", names), Some("get_invoice"));
        // Containment is close whatever the distance.
        assert_eq!(closest("invoice", names), Some("get_invoice"));
        assert_eq!(closest("delete_everything", names), None);
        assert_eq!(closest("", names), None);
        // Equal lengths, two substitutions; and a transposition, which needs the full distance.
        assert_eq!(closest("op99", ["op00", "op09", "op19"]), Some("op09"));
        assert_eq!(closest("abdc", ["abcd"]), Some("abcd"));
        assert_eq!(closest("bcda", ["abcd"]), Some("abcd"));
        assert_eq!(closest("wxyz", ["abcd"]), None);
        // Ties go to the earliest declared.
        assert_eq!(closest("ab", ["ax", "ay"]), Some("ax"));
        // A long value is never compared cell by cell.
        let long = "x".repeat(1 << 20);
        assert_eq!(closest(&long, names), None);
    }
}
