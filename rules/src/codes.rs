//! The `code` of a `<tool_error>`: the canonical codes, and what a custom code looks like.

/// The canonical codes, in the order of the contract.
///
/// ```
/// use mcp_fusion_rules::codes::CANONICAL_CODES;
/// assert_eq!(CANONICAL_CODES.len(), 17);
/// assert_eq!(CANONICAL_CODES[0], "MISSING_DISCRIMINATOR");
/// ```
pub const CANONICAL_CODES: [&str; 17] = [
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

/// Whether `code` is one of the [`CANONICAL_CODES`].
///
/// ```
/// use mcp_fusion_rules::codes::is_canonical;
/// assert!(is_canonical("TIMEOUT"));
/// assert!(!is_canonical("PAYMENT_DECLINED"));
/// ```
pub fn is_canonical(code: &str) -> bool {
    CANONICAL_CODES.contains(&code)
}

/// Whether `code` is a well-formed code: it matches `[A-Z][A-Z0-9_]*`. Usable in constants.
///
/// ```
/// use mcp_fusion_rules::codes::is_valid_code;
/// const OK: bool = is_valid_code("QUOTA_EXCEEDED_2");
/// assert!(OK);
/// assert!(!is_valid_code("quota"));
/// assert!(!is_valid_code("_QUOTA"));
/// assert!(!is_valid_code(""));
/// ```
pub const fn is_valid_code(code: &str) -> bool {
    let code = code.as_bytes();
    if code.is_empty() || !code[0].is_ascii_uppercase() {
        return false;
    }
    let mut i = 1;
    while i < code.len() {
        let b = code[i];
        if !(b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_canonical_code_is_valid_and_listed_once() {
        for (i, code) in CANONICAL_CODES.iter().enumerate() {
            assert!(is_valid_code(code), "{code}");
            assert!(!CANONICAL_CODES[..i].contains(code), "{code} twice");
        }
        assert!(!is_valid_code("not_found"));
        assert!(!is_valid_code("NOT-FOUND"));
    }
}
