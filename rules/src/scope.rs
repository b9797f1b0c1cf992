//! OAuth scopes, as a tool or an action declares them.

/// Whether `scope` is one `scope-token` of RFC 6749 §3.3, `1*( %x21 / %x23-5B / %x5D-7E )`:
/// non-empty printable ASCII without space, `"` or `\`.
///
/// ```
/// use mcp_fusion_rules::scope::is_scope_token;
/// assert!(is_scope_token("invoices:read"));
/// assert!(is_scope_token("https://api.example.com/x#y"));
/// assert!(!is_scope_token("invoices:read invoices:write"));
/// assert!(!is_scope_token(""));
/// ```
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_tokens() {
        for good in ["invoices:read", "a", "!", "~[]{}"] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "\tab", "é", "a\u{7f}"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }
}
