//! The "close" rule of did-you-mean suggestions (the contract's §4, "Close", and §11.2).
//!
//! A name is close to a value when, after ASCII lowercasing both, their Levenshtein distance
//! is at most 2, or one non-empty string contains the other; the smallest distance wins, the
//! earliest name on a tie. When none is, a name the value abbreviates (its first character
//! first, the others in order) is close if it is the only one.

/// Any distance above 2: only "at most 2, and which" matters to the rule.
const FAR: u8 = 3;

/// The distance between `value` and `name`, ASCII case ignored, when they are close (at most
/// two edits apart, or one contains the other: then the insertions that tell them apart);
/// else `None`. Never quadratic in a long input: the edit distance is only computed when the
/// lengths differ by at most 2.
///
/// ```
/// use mcp_fusion_rules::close::distance_if_close;
/// assert_eq!(distance_if_close("lst", "list"), Some(1));
/// assert_eq!(distance_if_close("INVOICE", "list_invoices"), Some(6));
/// assert_eq!(distance_if_close("create", "delete"), None);
/// ```
pub fn distance_if_close(value: &str, name: &str) -> Option<usize> {
    let (a_len, b_len) = (char_len(value), char_len(name));
    if contains_ignore_case(value, name) || contains_ignore_case(name, value) {
        return Some(a_len.abs_diff(b_len));
    }
    if a_len.abs_diff(b_len) > 2 {
        return None;
    }
    let d = if value.is_ascii() && name.is_ascii() {
        capped_distance(value.as_bytes(), name.as_bytes())
    } else {
        levenshtein(value, name, b_len)
    };
    (d <= 2).then_some(d)
}

/// The Levenshtein distance of two ASCII strings, case ignored, counted only up to 3: every
/// cell is capped at 3 (the capped table is the true one capped, as each cell only adds to the
/// cells before it), and the search stops at the first row all of whose cells are 3.
///
/// ```
/// use mcp_fusion_rules::close::capped_distance;
/// assert_eq!(capped_distance(b"GET", b"get"), 0);
/// assert_eq!(capped_distance(b"abdc", b"abcd"), 2);
/// assert_eq!(capped_distance(b"kitten", b"sitting"), 3);
/// assert_eq!(capped_distance(b"a", b"abcdefgh"), 3);
/// ```
pub fn capped_distance(a: &[u8], b: &[u8]) -> usize {
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
        *cell = u8::try_from(j).unwrap_or(FAR).min(FAR);
    }
    for (i, ca) in a.iter().map(u8::to_ascii_lowercase).enumerate() {
        let mut diagonal = row[0];
        row[0] = u8::try_from(i + 1).unwrap_or(FAR).min(FAR);
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

/// Whether `value` abbreviates `name` (§11.2), ASCII case ignored: it is not empty, its first
/// character is the name's first, and its characters occur in the name in the same order.
/// Linear in the name, whatever the value's length.
///
/// ```
/// use mcp_fusion_rules::close::abbreviates;
/// assert!(abbreviates("gtwthr", "get_weather"));
/// assert!(!abbreviates("wthr", "get_weather"));
/// assert!(!abbreviates("", "get_weather"));
/// ```
pub fn abbreviates(value: &str, name: &str) -> bool {
    let mut value = value.chars().map(|c| c.to_ascii_lowercase());
    let mut name = name.chars().map(|c| c.to_ascii_lowercase());
    let Some(first) = value.next() else {
        return false;
    };
    if name.next() != Some(first) {
        return false;
    }
    value.all(|wanted| name.any(|c| c == wanted))
}

/// The name closest to `value` by the whole rule: the smallest distance among the close
/// names (the earliest on a tie), or else the one name `value` abbreviates.
///
/// ```
/// use mcp_fusion_rules::close::closest;
/// let actions = ["list_invoices", "get_invoice", "create_invoice"];
/// assert_eq!(closest("get_invoise", &actions), Some("get_invoice"));
/// assert_eq!(closest("create", &actions), Some("create_invoice"));
/// assert_eq!(closest("crinv", &actions), Some("create_invoice"));
/// assert_eq!(closest("refund", &actions), None);
/// ```
pub fn closest<'a>(value: &str, names: &[&'a str]) -> Option<&'a str> {
    let mut best: Option<(usize, &'a str)> = None;
    for name in names {
        if let Some(d) = distance_if_close(value, name)
            && best.is_none_or(|(b, _)| d < b)
        {
            best = Some((d, name));
        }
    }
    if let Some((_, name)) = best {
        return Some(name);
    }
    let mut abbreviated = names.iter().filter(|name| abbreviates(value, name));
    match (abbreviated.next(), abbreviated.next()) {
        (Some(name), None) => Some(name),
        _ => None,
    }
}

/// Whether some name of `names` is close to `value` ([`closest`] finds one).
///
/// ```
/// use mcp_fusion_rules::close::is_close_to_any;
/// assert!(is_close_to_any("FOUND", &["NOT_FOUND", "CONFLICT"]));
/// assert!(!is_close_to_any("PAYMENT_DECLINED", &["NOT_FOUND", "CONFLICT"]));
/// ```
pub fn is_close_to_any(value: &str, names: &[&str]) -> bool {
    closest(value, names).is_some()
}

/// Length in Unicode scalar values, without decoding ASCII.
fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Whether non-empty `needle` occurs in `haystack`, ASCII case ignored.
fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    // A byte-wise match that starts and ends on character boundaries of both is a match of
    // characters, since UTF-8 is self-synchronising and ASCII folding keeps non-ASCII bytes.
    !n.is_empty() && h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// Levenshtein distance over Unicode scalar values, ASCII case ignored.
fn levenshtein(a: &str, b: &str, b_len: usize) -> usize {
    let mut row: Vec<usize> = (0..=b_len).collect();
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
        let d = |a: &str, b: &str| levenshtein(a, b, char_len(b));
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("caf\u{e9}", "cafe"), 1);
        assert_eq!(d("GET", "get"), 0);
    }

    /// Every pair of strings of up to five letters of `abA_`, and long ones: the capped distance
    /// is the distance capped.
    #[test]
    fn capped_distance_is_the_distance_capped() {
        let mut words = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = words
                .iter()
                .filter(|w| w.len() == words.last().map_or(0, String::len))
                .flat_map(|w| ["a", "b", "A", "_"].map(|c| format!("{w}{c}")))
                .collect();
            words.extend(longer);
        }
        words.push("ab".repeat(33));
        words.push("ab".repeat(32) + "b");
        for a in &words {
            for b in &words {
                let exact = levenshtein(a, b, char_len(b));
                assert_eq!(
                    capped_distance(a.as_bytes(), b.as_bytes()),
                    exact.min(3),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn containment_is_close_whatever_the_distance() {
        assert_eq!(
            closest("invoice", &["list_invoices", "refund"]),
            Some("list_invoices")
        );
        assert_eq!(distance_if_close("", "abc"), None);
    }
}
