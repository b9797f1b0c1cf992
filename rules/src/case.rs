//! `snake_case` ↔ `UpperCamelCase`, as Rust writes function and type names.

/// `list_invoices` → `ListInvoices`: each part between underscores capitalized, the
/// underscores dropped (a raw identifier's `r#` too).
///
/// ```
/// use mcp_fusion_rules::case::upper_camel;
/// assert_eq!(upper_camel("list_invoices"), "ListInvoices");
/// assert_eq!(upper_camel("r#type"), "Type");
/// assert_eq!(upper_camel("billing__admin_"), "BillingAdmin");
/// ```
pub fn upper_camel(snake: &str) -> String {
    snake
        .trim_start_matches("r#")
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// `UserAdmin` → `user_admin`: an underscore before each uppercase letter but the first, every
/// letter lowercased.
///
/// ```
/// use mcp_fusion_rules::case::snake_case;
/// assert_eq!(snake_case("UserAdmin"), "user_admin");
/// assert_eq!(snake_case("Billing"), "billing");
/// ```
pub fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for name in ["get_weather", "list", "user_admin"] {
            assert_eq!(snake_case(&upper_camel(name)), name);
        }
    }
}
