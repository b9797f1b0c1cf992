//! Shared checks and message phrasing.

use proc_macro2::Span;

/// An unknown name among known ones, with the closest as a suggestion.
pub(crate) fn unknown(kind: &str, value: &str, known: &[&str], span: Span) -> darling::Error {
    darling::Error::unknown_value_with_alts(value, known)
        .with_span(&span)
        .at(kind)
}

/// A duration written `500ms`, `5s`, `2m` or `1h`, in milliseconds.
pub(crate) fn parse_duration(text: &str) -> Option<u64> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok()?;
    let factor = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    n.checked_mul(factor).filter(|&ms| ms > 0)
}

pub(crate) const DURATION_HINT: &str =
    "write a duration such as \"500ms\", \"5s\", \"2m\" or \"1h\"";

pub(crate) const SCOPE_HINT: &str =
    "write each scope as its own string, e.g. scopes(\"invoices:read\", \"invoices:write\")";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(500));
        assert_eq!(parse_duration("5s"), Some(5_000));
        assert_eq!(parse_duration("2m"), Some(120_000));
        assert_eq!(parse_duration("1h"), Some(3_600_000));
        for bad in ["", "5", "s", "5 s", "5sec", "0s", "-1s", "1.5s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
