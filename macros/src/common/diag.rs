//! Shared checks and message phrasing.

use proc_macro2::Span;

/// The canonical codes, as the runtime defines them (`tests/it/macro_codes.rs` of the workspace
/// checks that they agree).
pub(crate) const CANONICAL_CODES: [&str; 17] = [
    "MISSING_DISCRIMINATOR",
    "UNKNOWN_ACTION",
    "VALIDATION_ERROR",
    "MISSING_REQUIRED_FIELD",
    "INTERNAL_ERROR",
    "RATE_LIMITED",
    "UNAUTHORIZED",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFLICT",
    "TIMEOUT",
    "SERVER_BUSY",
    "DEPRECATED",
    "AUTH_REQUIRED",
    "HANDOFF_UPSTREAM_UNAVAILABLE",
    "HANDOFF_NAMESPACE_MISMATCH",
    "HANDOFF_CONNECTING",
];

/// Whether `code` matches `[A-Z][A-Z0-9_]*`.
pub(crate) fn is_valid_code(code: &str) -> bool {
    let mut bytes = code.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `value` is close to one of `known`: at most two edits apart, ASCII case ignored (the
/// rule the runtime's did-you-mean uses). Decides whether an unknown name is a typo of a known
/// one or something else.
pub(crate) fn is_close_to_any(value: &str, known: &[&str]) -> bool {
    let value: Vec<char> = value.to_ascii_lowercase().chars().collect();
    known.iter().any(|name| {
        let name: Vec<char> = name.to_ascii_lowercase().chars().collect();
        if value.len().abs_diff(name.len()) > 2 {
            return false;
        }
        let mut row: Vec<usize> = (0..=name.len()).collect();
        for (i, a) in value.iter().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, b) in name.iter().enumerate() {
                let above = row[j + 1];
                row[j + 1] = (above + 1)
                    .min(row[j] + 1)
                    .min(diagonal + usize::from(a != b));
                diagonal = above;
            }
        }
        row[name.len()] <= 2
    })
}

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

/// Whether `scope` is one `scope-token` of RFC 6749 §3.3, `1*( %x21 / %x23-5B / %x5D-7E )`:
/// non-empty printable ASCII without space, `"` or `\` (the runtime's own check).
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

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

    #[test]
    fn scope_tokens() {
        for good in [
            "invoices:read",
            "a",
            "!",
            "https://api.example.com/x#y",
            "~[]{}",
        ] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "\tab", "é", "a\u{7f}"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn codes() {
        assert!(CANONICAL_CODES.iter().all(|c| is_valid_code(c)));
        assert!(!is_valid_code("not_found"));
        assert!(!is_valid_code(""));
    }
}
