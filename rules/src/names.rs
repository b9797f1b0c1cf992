//! Names that travel outside JSON: MCP tool names, and the HTTP header names a tool's fields
//! are mirrored in (SEP-2243, `x-mcp-header`).

/// The most characters of an MCP tool name.
pub const MAX_TOOL_NAME: usize = 128;

/// Whether `name` is a tool name clients accept, `^[A-Za-z0-9_.-]{1,128}$`.
///
/// ```
/// use mcp_fusion_rules::names::is_tool_name;
/// assert!(is_tool_name("billing_list_invoices"));
/// assert!(is_tool_name("billing.v2-beta"));
/// assert!(!is_tool_name("billing tools"));
/// assert!(!is_tool_name(""));
/// assert!(!is_tool_name(&"a".repeat(129)));
/// ```
pub fn is_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Why `name` is not a tool name, `None` when it is one: a phrase to follow "the name ... ".
///
/// ```
/// use mcp_fusion_rules::names::tool_name_problem;
/// assert_eq!(tool_name_problem("list"), None);
/// assert_eq!(tool_name_problem("a b").as_deref(), Some("has ' ', which a tool name cannot have"));
/// ```
pub fn tool_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Some(format!("has {c:?}, which a tool name cannot have"));
    }
    let chars = name.len();
    (chars > MAX_TOOL_NAME).then(|| format!("is {chars} characters long, over {MAX_TOOL_NAME}"))
}

/// Whether `c` is a `tchar` of RFC 9110 §5.6.2, what a header name is made of.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '!' | '#'
                | '$'
                | '%'
                | '&'
                | '\''
                | '*'
                | '+'
                | '-'
                | '.'
                | '^'
                | '_'
                | '`'
                | '|'
                | '~'
        )
}

/// Why `name` cannot be the name of the header a field is mirrored in (`Mcp-Param-{name}`),
/// `None` when it can: an RFC 9110 token, one or more letters, digits and `!#$%&'*+-.^_`|~`.
///
/// ```
/// use mcp_fusion_rules::names::header_name_problem;
/// assert_eq!(header_name_problem("Region"), None);
/// assert_eq!(header_name_problem("").as_deref(), Some("is empty"));
/// assert_eq!(header_name_problem("My Region").as_deref(), Some("has a space, which a header name cannot have"));
/// assert_eq!(header_name_problem("Région").as_deref(), Some("has 'é', not ASCII, which a header name cannot have"));
/// ```
pub fn header_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".to_owned());
    }
    let c = name.chars().find(|&c| !is_tchar(c))?;
    let what = match c {
        ' ' => "a space".to_owned(),
        c if c.is_control() => format!("the control character {c:?}"),
        c if !c.is_ascii() => format!("{c:?}, not ASCII"),
        c => format!("{c:?}"),
    };
    Some(format!("has {what}, which a header name cannot have"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for good in ["a", "A-z_0.9", &"x".repeat(128)] {
            assert!(is_tool_name(good), "{good}");
            assert_eq!(tool_name_problem(good), None);
        }
        for bad in ["", "a b", "a/b", "a:b", "é", "a\u{0}", &"x".repeat(129)] {
            assert!(!is_tool_name(bad), "{bad:?}");
            assert!(tool_name_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn header_names() {
        for good in ["Region", "X-Tenant_id", "a!#$%&'*+-.^_`|~9"] {
            assert_eq!(header_name_problem(good), None, "{good}");
        }
        let problem = |name| header_name_problem(name).unwrap();
        assert_eq!(problem(""), "is empty");
        assert_eq!(
            problem("My Region"),
            "has a space, which a header name cannot have"
        );
        assert_eq!(problem("a:b"), "has ':', which a header name cannot have");
        assert_eq!(
            problem("Région"),
            "has 'é', not ASCII, which a header name cannot have"
        );
        assert_eq!(
            problem("a\tb"),
            "has the control character '\\t', which a header name cannot have"
        );
    }
}
