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
    let value = value.to_ascii_lowercase();
    let value_len = value.chars().count();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let lower = candidate.to_ascii_lowercase();
        let Some(d) = distance_if_close(&value, value_len, &lower) else {
            continue;
        };
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The distance between `a` and `b` when they are close, else `None`. Never quadratic in a long
/// input: edit distance is only computed when the lengths differ by at most 2.
fn distance_if_close(a: &str, a_len: usize, b: &str) -> Option<usize> {
    let b_len = b.chars().count();
    let contains = (!a.is_empty() && b.contains(a)) || (!b.is_empty() && a.contains(b));
    if contains {
        // One contains the other, so the distance is exactly the insertions that tell them apart.
        return Some(a_len.abs_diff(b_len));
    }
    if a_len.abs_diff(b_len) > 2 {
        return None;
    }
    let d = levenshtein(a, b);
    (d <= 2).then_some(d)
}

/// Levenshtein distance over Unicode scalar values, with one row of memory.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
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
