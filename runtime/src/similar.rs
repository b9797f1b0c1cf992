//! The "close" rule shared by did-you-mean suggestions (ERRORS.md §4, "Close").

/// The closest of `candidates` to `value`, if any is close: the smallest distance wins, the
/// earliest candidate on a tie.
///
/// A name is close when, after ASCII lowercasing both, their Levenshtein distance is at most 2,
/// or one non-empty string contains the other.
pub(crate) fn closest<'a, I>(value: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let value_len = value.chars().count();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let Some(d) = distance_if_close(value, value_len, candidate) else {
            continue;
        };
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The distance between `a` and `b`, ASCII case ignored, when they are close; else `None`.
/// Never quadratic in a long input: edit distance is only computed when the lengths differ by
/// at most 2, and the names compared against are short.
fn distance_if_close(a: &str, a_len: usize, b: &str) -> Option<usize> {
    let b_len = b.chars().count();
    if contains_ignore_case(a, b) || contains_ignore_case(b, a) {
        // One contains the other, so the distance is exactly the insertions that tell them apart.
        return Some(a_len.abs_diff(b_len));
    }
    if a_len.abs_diff(b_len) > 2 {
        return None;
    }
    let d = levenshtein(a, b);
    (d <= 2).then_some(d)
}

/// Whether non-empty `needle` occurs in `haystack`, ASCII case ignored.
fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    // A byte-wise match that starts and ends on character boundaries of both is a match of
    // characters, since UTF-8 is self-synchronising and ASCII folding keeps non-ASCII bytes.
    !n.is_empty() && h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Levenshtein distance over Unicode scalar values, ASCII case ignored, with one row of memory.
fn levenshtein(a: &str, b: &str) -> usize {
    let mut stack = [0usize; 64];
    let mut heap = Vec::new();
    let b_len = b.chars().count();
    let row: &mut [usize] = if b_len < stack.len() {
        &mut stack[..=b_len]
    } else {
        heap.resize(b_len + 1, 0);
        &mut heap
    };
    for (j, cell) in row.iter_mut().enumerate() {
        *cell = j;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("caf\u{e9}", "cafe"), 1);
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
        // Ties go to the earliest declared.
        assert_eq!(closest("ab", ["ax", "ay"]), Some("ax"));
        // A long value is never compared cell by cell.
        let long = "x".repeat(1 << 20);
        assert_eq!(closest(&long, names), None);
    }
}
