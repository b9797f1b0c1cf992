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
    names: Vec<Name>,
}

/// One name and what the search compares of it, kept together so that the loop over the
/// names reads one entry each.
#[derive(Debug, Clone)]
struct Name {
    name: String,
    /// The name lowercased, when it is ASCII.
    lowered: Option<Box<[u8]>>,
    /// The same packed in a word, when it has at most eight bytes (its length beside it).
    word: Option<(u64, usize)>,
    /// Which bytes the lowercased name holds, each as bit `byte % 64`.
    letters: u64,
}

/// Up to eight lowercased ASCII bytes in a word, zero-padded.
fn word(bytes: &[u8]) -> u64 {
    let mut padded = [0; 8];
    padded[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(padded)
}

/// How many bytes of two packed words differ, counted up to 3 (3: three or more).
fn differing_bytes(a: u64, b: u64) -> usize {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = a ^ b;
    // The high bit of each byte that is not zero, cleared one at a time (no population count
    // instruction is assumed).
    let mut high = (((x & LOW) + LOW) | x) & !LOW;
    let mut n = 0;
    while high != 0 && n < 3 {
        high &= high - 1;
        n += 1;
    }
    n
}

/// The set of bytes in `bytes`, each as bit `byte % 64` (bytes that share a bit are not told
/// apart, which only makes [`outside`] count fewer).
fn letters(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |set, &b| set | 1 << (b % 64))
}

/// How many bytes of `bytes` are not in the set `letters`: a lower bound of the edit distance
/// to any string whose bytes are all in it, since each such byte must be replaced or deleted
/// by an edit of its own.
fn outside(bytes: &[u8], letters: u64) -> usize {
    bytes
        .iter()
        .filter(|&&b| letters & (1 << (b % 64)) == 0)
        .count()
}

impl Names {
    pub(crate) fn new(names: &[String]) -> Self {
        let names = names
            .iter()
            .map(|n| {
                let lowered: Option<Box<[u8]>> = n
                    .is_ascii()
                    .then(|| n.to_ascii_lowercase().into_bytes().into());
                let word = lowered
                    .as_deref()
                    .filter(|l| l.len() <= 8)
                    .map(|l| (word(l), l.len()));
                Name {
                    name: n.clone(),
                    letters: lowered.as_deref().map_or(0, letters),
                    lowered,
                    word,
                }
            })
            .collect();
        Names { names }
    }

    /// The index of the closest name to `value`, if one is close.
    pub(crate) fn closest(&self, value: &str) -> Option<usize> {
        let mut buffer = [0; 64];
        let probe = Probe::new(value, &mut buffer);
        let mut row = Vec::new();
        // The best distance so far (none yet: `usize::MAX`; containment may be farther than 2)
        // and its name.
        let (mut best, mut chosen) = (usize::MAX, 0);
        for (index, name) in self.names.iter().enumerate() {
            // A short name of the same length as a short value: when at most two bytes differ,
            // that is the distance (strings of one length one edit apart differ in one byte).
            // The rest takes the general way.
            let substitutions = match (probe.word, name.word) {
                (Some(v), Some((n, len))) if len == probe.value.len() => differing_bytes(v, n),
                _ => usize::MAX,
            };
            let d = match substitutions {
                0..=2 => substitutions,
                _ => match probe.distance(name, &mut row) {
                    Some(d) => d,
                    None => continue,
                },
            };
            if d < best {
                // Nothing is closer than the same name: the earliest such wins.
                if d == 0 {
                    return Some(index);
                }
                (best, chosen) = (d, index);
            }
        }
        (best != usize::MAX).then_some(chosen)
    }
}

/// The value searched for, prepared as the names are.
struct Probe<'a> {
    value: &'a str,
    /// Lowercased, when it is ASCII of at most 64 bytes.
    lowered: Option<&'a [u8]>,
    /// The same packed in a word, when it has at most eight bytes.
    word: Option<u64>,
    chars: usize,
}

impl<'a> Probe<'a> {
    fn new(value: &'a str, buffer: &'a mut [u8; 64]) -> Self {
        let lowered = (value.len() <= buffer.len() && value.is_ascii()).then(|| {
            let lowered = &mut buffer[..value.len()];
            lowered.copy_from_slice(value.as_bytes());
            lowered.make_ascii_lowercase();
            &*lowered
        });
        Probe {
            value,
            lowered,
            word: lowered.filter(|v| v.len() <= 8).map(word),
            chars: char_len(value),
        }
    }

    /// The distance to `name` when it is close, by the rule. Kept out of the search's loop,
    /// which it would otherwise crowd.
    #[inline(never)]
    fn distance(&self, name: &Name, row: &mut Vec<usize>) -> Option<usize> {
        match (self.lowered, &name.lowered) {
            (Some(v), Some(n)) if v.len() == n.len() => {
                // Equal lengths: within 2 edits exactly when within 2 substitutions, but for
                // swapped letters (`abdc`), which need the distance itself.
                let differing = v.iter().zip(n.iter()).filter(|(x, y)| x != y).count();
                if differing <= 2 {
                    Some(differing)
                } else if outside(v, name.letters) > 2 {
                    None
                } else {
                    let d = levenshtein_ascii(v, n);
                    (d <= 2).then_some(d)
                }
            }
            _ => distance_if_close(self.value, self.chars, &name.name, row),
        }
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
    let d = if a.is_ascii() && b.is_ascii() {
        levenshtein_ascii(a.as_bytes(), b.as_bytes())
    } else {
        levenshtein(a, b, b_len, row)
    };
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

/// Any distance above 2: only "at most 2, and which" matters to the rule.
const FAR: u8 = 3;

/// The same over bytes, for the usual case of ASCII names, counted only up to [`FAR`]: every
/// cell is capped at 3 (the capped table is the true one capped, as each cell only adds to the
/// cells before it), a row on the stack for names of up to 63 bytes, and the search stops at
/// the first row all of whose cells are 3, since no later cell can be smaller.
fn levenshtein_ascii(a: &[u8], b: &[u8]) -> usize {
    if a.len().abs_diff(b.len()) > 2 {
        return usize::from(FAR);
    }
    let mut stack = [0u8; 64];
    let mut heap = Vec::new();
    let row: &mut [u8] = if b.len() < stack.len() {
        &mut stack[..=b.len()]
    } else {
        heap.resize(b.len() + 1, 0);
        &mut heap
    };
    for (j, cell) in row.iter_mut().enumerate() {
        *cell = j.min(usize::from(FAR)) as u8;
    }
    for (i, ca) in a.iter().map(u8::to_ascii_lowercase).enumerate() {
        let mut diagonal = row[0];
        row[0] = (i + 1).min(usize::from(FAR)) as u8;
        let mut smallest = row[0];
        for (j, cb) in b.iter().map(u8::to_ascii_lowercase).enumerate() {
            let above = row[j + 1];
            let cell = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + u8::from(ca != cb))
                .min(FAR);
            row[j + 1] = cell;
            smallest = smallest.min(cell);
            diagonal = above;
        }
        if smallest >= FAR {
            return usize::from(FAR);
        }
    }
    usize::from(row[b.len()])
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
        fn capped_distance_is_the_distance_capped(
            a in "[a-cA-C_]{0,12}|[ab]{60,70}",
            b in "[a-cA-C_]{0,12}|[ab]{60,70}",
        ) {
            let exact = levenshtein(&a, &b, char_len(&b), &mut Vec::new());
            proptest::prop_assert_eq!(levenshtein_ascii(a.as_bytes(), b.as_bytes()), exact.min(3));
        }

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
