//! The "close" rule shared by did-you-mean suggestions (ERRORS.md §4, "Close"): the rule
//! itself is `mcp_fusion_rules::close`; this is its index over many names.

use mcp_fusion_rules::close::{abbreviates, capped_distance, distance_if_close};

/// Names searched for the one closest to a value (a router's actions, an object's declared
/// fields), prepared once: ASCII names are lowercased ahead, and those of at most eight bytes
/// packed in a word and grouped by length, so that a mistyped short name is compared with each
/// name of its length in a few instructions. The one implementation of the rule.
///
/// A name is close when, after ASCII lowercasing both, their Levenshtein distance is at most 2,
/// or one non-empty string contains the other; the smallest distance wins, the earliest name on
/// a tie. When none is, a name the value abbreviates (its first character first, the others in
/// order) is close if it is the only one (ERRORS.md §11.2).
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    names: Vec<Name>,
    /// The ASCII first characters of the names, lowercased, each as bit `byte`; and whether a
    /// name starts with another character: a value that starts with none of them abbreviates
    /// nothing, which is told without a walk.
    firsts: u128,
    other_firsts: bool,
    /// The short names by length (0 to 8 bytes), in declaration order.
    short: [Short; 9],
}

/// The names of one short length: their packed words, side by side so that two are compared
/// at once, and their indices.
#[derive(Debug, Clone, Default)]
struct Short {
    words: Vec<u64>,
    indices: Vec<usize>,
}

/// One name and what the search compares of it, kept together so that the loop over the
/// names reads one entry each.
#[derive(Debug, Clone)]
struct Name {
    name: String,
    /// The name lowercased, when it is ASCII.
    lowered: Option<Box<[u8]>>,
    /// The same packed in a word, when it has at most eight bytes.
    word: Option<u64>,
    /// Which bytes the lowercased name holds, each as bit `byte % 64`.
    letters: u64,
    /// Its first character, ASCII lowercased: what a value abbreviating it starts with.
    first: Option<char>,
    /// Its length in characters.
    chars: usize,
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
    // One in the low bit of each byte that is not zero; the multiplication sums them into the
    // top byte (no population count instruction is assumed).
    let ones = ((((x & LOW) + LOW) | x) & !LOW) >> 7;
    (ones.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize
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
        let mut prepared = Names {
            names: Vec::with_capacity(names.len()),
            firsts: 0,
            other_firsts: false,
            short: Default::default(),
        };
        for (index, n) in names.iter().enumerate() {
            let lowered: Option<Box<[u8]>> = n
                .is_ascii()
                .then(|| n.to_ascii_lowercase().into_bytes().into());
            let packed = lowered.as_deref().filter(|l| l.len() <= 8).map(word);
            if let Some(packed) = packed {
                let group = &mut prepared.short[n.len()];
                group.words.push(packed);
                group.indices.push(index);
            }
            match n.as_bytes().first() {
                Some(b) if b.is_ascii() => prepared.firsts |= 1 << b.to_ascii_lowercase(),
                Some(_) => prepared.other_firsts = true,
                None => {}
            }
            prepared.names.push(Name {
                name: n.clone(),
                first: n.chars().next().map(|c| c.to_ascii_lowercase()),
                letters: lowered.as_deref().map_or(0, letters),
                lowered,
                word: packed,
                chars: char_len(n),
            });
        }
        prepared
    }

    /// The index of the closest name to `value`, if one is close: by distance or containment
    /// (ERRORS.md §4), or else the one name `value` abbreviates (§11.2).
    pub(crate) fn closest(&self, value: &str) -> Option<usize> {
        let starts = match value.as_bytes().first() {
            Some(b) if b.is_ascii() => self.firsts & 1 << b.to_ascii_lowercase() != 0,
            Some(_) => self.other_firsts,
            None => false,
        };
        match self.nearest(value) {
            None if starts => self.abbreviated(value),
            nearest => nearest,
        }
    }

    /// The one name `value` abbreviates (ERRORS.md §11.2): `None` when it abbreviates none, or
    /// more than one. Only asked when no name is close by distance or containment, so that
    /// every suggestion of version 2.1 stays; kept out of the search by distance, which it
    /// would otherwise crowd.
    #[inline(never)]
    fn abbreviated(&self, value: &str) -> Option<usize> {
        let first = value.chars().next().map(|c| c.to_ascii_lowercase())?;
        let mut found = None;
        for (index, name) in self.names.iter().enumerate() {
            // Most names start with another character: told apart without a walk.
            if name.first != Some(first) {
                continue;
            }
            if abbreviates(value, &name.name) {
                if found.is_some() {
                    return None;
                }
                found = Some(index);
            }
        }
        found
    }

    /// The closest name by distance or containment (ERRORS.md §4).
    #[inline]
    fn nearest(&self, value: &str) -> Option<usize> {
        // The best distance so far and its name (containment may be farther than 2).
        let mut best: Option<(usize, usize)> = None;
        // A short value is first compared with the names of its length, as words: when at most
        // two bytes differ, that is the distance (strings of one length one edit apart differ
        // in one byte), and nothing is closer than the same name.
        let short = short_word(value).map(|w| (w, value.len()));
        if let Some((value, length)) = short {
            let words = self.closest_word(value, length);
            best = words.best;
            if best.is_some_and(|(d, _)| d == 0) {
                return best.map(|(_, i)| i);
            }
            // Every name compared as a word, and none of those farther than two bytes that one
            // of a distance 2 could beat (one of the same length is never 1 edit away): done.
            if words.all && (!words.far || best.is_some_and(|(d, _)| d <= 1)) {
                return best.map(|(_, i)| i);
            }
        }
        let mut buffer = [0; 64];
        let probe = Probe::new(value, &mut buffer);
        for (index, name) in self.names.iter().enumerate() {
            // What the name's distance is at least: a name of a short value's length is 2 when
            // more than two bytes differ (and was counted above otherwise); any other, the
            // difference of the lengths.
            let at_least = match (short, name.word) {
                (Some((value, length)), Some(word)) if name.name.len() == length => {
                    if differing_bytes(value, word) <= 2 {
                        continue;
                    }
                    2
                }
                _ => name.chars.abs_diff(probe.chars),
            };
            if best.is_some_and(|b| (at_least, index) > b) {
                continue;
            }
            let Some(d) = probe.distance(name) else {
                continue;
            };
            if best.is_none_or(|b| (d, index) < b) {
                best = Some((d, index));
            }
        }
        best.map(|(_, i)| i)
    }

    /// Compares a short value (`value`, packed) with the names of its `length` as words: the
    /// earliest of those fewest bytes away when at most two differ, whether one of them has
    /// more, and whether every name was one of them.
    fn closest_word(&self, value: u64, length: usize) -> Word {
        let group = &self.short[length];
        let (fewest, most) = differing_range(value, &group.words);
        // In declaration order: the first of the closest.
        let first = || first_differing(value, &group.words, fewest);
        Word {
            best: (fewest <= 2)
                .then(first)
                .flatten()
                .map(|at| (fewest, group.indices[at])),
            far: most > 2,
            all: group.words.len() == self.names.len(),
        }
    }
}

/// A value of at most eight bytes, if ASCII, lowercased and packed as the names' words are.
fn short_word(value: &str) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if value.len() > 8 {
        return None;
    }
    let packed = word(value.as_bytes());
    if packed & HIGH != 0 {
        return None;
    }
    // Each byte is below 0x80, so these sums stay inside it: its high bit tells whether it is
    // at least `A`, and whether it is past `Z`.
    let from_a = packed + ONES * u64::from(0x80 - b'A');
    let past_z = packed + ONES * u64::from(0x80 - b'Z' - 1);
    let upper = from_a & !past_z & HIGH;
    Some(packed | upper >> 2)
}

/// The fewest and the most bytes in which `value` and one of `words` differ (8 and 0 for no
/// words). Each comparison is a handful of word operations ([`differing_bytes`]); a tool's
/// actions are few, so the search needs no vector instructions.
fn differing_range(value: u64, words: &[u64]) -> (usize, usize) {
    words.iter().fold((8, 0), |(fewest, most), &word| {
        let d = differing_bytes(value, word);
        (fewest.min(d), most.max(d))
    })
}

/// The first of `words` that differs from `value` in `count` bytes.
fn first_differing(value: u64, words: &[u64], count: usize) -> Option<usize> {
    words
        .iter()
        .position(|&word| differing_bytes(value, word) == count)
}

/// What [`Names::closest_word`] found.
struct Word {
    best: Option<(usize, usize)>,
    far: bool,
    all: bool,
}

/// The value searched for, prepared as the names are.
struct Probe<'a> {
    value: &'a str,
    /// Lowercased, when it is ASCII of at most 64 bytes.
    lowered: Option<&'a [u8]>,
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
            chars: char_len(value),
        }
    }

    /// The distance to `name` when it is close, by the rule. Kept out of the search's loop,
    /// which it would otherwise crowd.
    #[inline(never)]
    fn distance(&self, name: &Name) -> Option<usize> {
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
                    let d = capped_distance(v, n);
                    (d <= 2).then_some(d)
                }
            }
            _ => distance_if_close(self.value, &name.name),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The name [`Names::closest`] picks.
    fn closest<'a, const N: usize>(value: &str, names: [&'a str; N]) -> Option<&'a str> {
        let owned: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        Names::new(&owned).closest(value).map(|i| names[i])
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
        if best.is_some() {
            return best.map(|(_, i)| i);
        }
        // §11.2: else the one name the value abbreviates (a subsequence, first character first).
        let abbreviating: Vec<usize> = (0..names.len())
            .filter(|&i| {
                let (v, n) = (lower(value), lower(&names[i]));
                let mut rest = n.iter().skip(1);
                !v.is_empty()
                    && n.first() == v.first()
                    && v[1..].iter().all(|c| rest.any(|x| x == c))
            })
            .collect();
        match abbreviating.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    proptest::proptest! {

        #[test]
        fn prepared_names_pick_what_the_rule_picks(
            names in proptest::collection::vec("[a-cA-C_\u{e9}]{0,10}", 0..8),
            value in "[a-cA-C_.\u{e9}]{0,12}",
        ) {
            proptest::prop_assert_eq!(Names::new(&names).closest(&value), by_the_rule(&value, &names));
        }

        /// Names of one short length, where the words alone may decide.
        #[test]
        fn names_of_one_length_pick_what_the_rule_picks(
            names in proptest::collection::vec("[a-cA-C]{4}", 0..8),
            value in "[a-cA-C]{4}|[a-c]{3,5}",
        ) {
            proptest::prop_assert_eq!(Names::new(&names).closest(&value), by_the_rule(&value, &names));
        }
    }

    #[test]
    fn short_values_are_lowercased_as_the_names_are() {
        // Every ASCII byte, around `A` and `Z` included, at every place of a word, and a word
        // of them all at once.
        for b in 0..0x80u8 {
            for at in 0..8 {
                let mut bytes = *b"xYz@[_Aq";
                bytes[at] = b;
                let value = std::str::from_utf8(&bytes).unwrap();
                assert_eq!(
                    short_word(value),
                    Some(word(value.to_ascii_lowercase().as_bytes()))
                );
                let value = &value[..at + 1];
                assert_eq!(
                    short_word(value),
                    Some(word(value.to_ascii_lowercase().as_bytes()))
                );
            }
        }
        assert_eq!(short_word("caf\u{e9}"), None);
        assert_eq!(short_word("ninechars"), None);
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

    #[test]
    fn abbreviations_when_nothing_is_close() {
        // ERRORS.md §11.2, its examples one by one.
        assert_eq!(
            closest("qty", ["description", "quantity"]),
            Some("quantity")
        );
        assert_eq!(
            closest("QTY", ["description", "quantity"]),
            Some("quantity")
        );
        assert_eq!(closest("tx", ["tax_code", "tax_rate"]), None);
        assert_eq!(
            closest("amount_c", ["amount", "amount_cents"]),
            Some("amount")
        );
        let billing = [
            "list_invoices",
            "get_invoice",
            "create_invoice",
            "cancel_invoice",
        ];
        assert_eq!(closest("gt_invce", billing), Some("get_invoice"));
        assert_eq!(closest("crt_inv", billing), Some("create_invoice"));
        assert_eq!(closest("cinv", billing), None);
        assert_eq!(
            closest("ubn", ["users.ban", "users.list"]),
            Some("users.ban")
        );
        // Only ASCII letters are folded.
        assert_eq!(
            closest("\u{dc}br", ["\u{dc}bersicht", "zzzzzzzzzzzz"]),
            Some("\u{dc}bersicht")
        );
        assert_eq!(
            closest("\u{fc}br", ["\u{dc}bersicht", "zzzzzzzzzzzz"]),
            None
        );
        // The first character must be the name's first.
        assert_eq!(closest("nvc", ["invoice_total"]), None);
        // A long value that abbreviates nothing costs a pass over each name.
        let long = "q".repeat(1 << 20);
        assert_eq!(closest(&long, ["quantity"]), None);
    }
}
