//! What serde's own attributes (`#[serde(..)]`, beside `#[derive(Deserialize)]`) say about the
//! names the form's answer is read with: a form's fields and a choice's values are the names
//! serde reads, so the derives read the same attributes rather than ask for the names twice.
//! What would make serde read something other than a flat object of those names (a flattened
//! or transparent field, a tagged enum) is reported, each on its key. A `serde` attribute that
//! does not parse is left to serde, which reports it.

use darling::ast::NestedMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// What serde's attributes on a struct or an enum say.
#[derive(Default)]
pub(super) struct Container {
    /// `rename_all = ".."` (its `deserialize` rule), when serde knows the rule.
    pub(super) rename_all: Option<Rule>,
    /// The keys that make serde read the type as something other than a flat object of named
    /// fields, or a string per unit variant, each with where it is written.
    pub(super) reshaping: Vec<(String, Span)>,
}

/// What serde's attributes on a field or a variant say.
#[derive(Default)]
pub(super) struct Member {
    /// `rename = ".."` (its `deserialize` name).
    pub(super) rename: Option<String>,
    /// `skip` or `skip_deserializing`: serde never reads it.
    pub(super) skip: Option<Span>,
    /// `flatten` (a field) or `untagged` (a variant): read from something other than its own
    /// name or value.
    pub(super) reshaping: Option<(String, Span)>,
}

/// The items of each `#[serde(..)]` among `attrs`.
fn items(attrs: &[syn::Attribute]) -> Vec<syn::Meta> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| match &a.meta {
            syn::Meta::List(list) => NestedMeta::parse_meta_list(list.tokens.clone()).ok(),
            _ => None,
        })
        .flatten()
        .filter_map(|item| match item {
            NestedMeta::Meta(meta) => Some(meta),
            _ => None,
        })
        .collect()
}

fn key(meta: &syn::Meta) -> String {
    meta.path()
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The name serde deserializes with: `rename = "x"`, or `rename(deserialize = "x")`.
fn deserialize_name(meta: &syn::Meta) -> Option<String> {
    let string = |expr: &syn::Expr| match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    };
    match meta {
        syn::Meta::NameValue(nv) => string(&nv.value),
        syn::Meta::List(list) => NestedMeta::parse_meta_list(list.tokens.clone())
            .ok()?
            .into_iter()
            .find_map(|item| match item {
                NestedMeta::Meta(syn::Meta::NameValue(nv)) if nv.path.is_ident("deserialize") => {
                    string(&nv.value)
                }
                _ => None,
            }),
        syn::Meta::Path(_) => None,
    }
}

/// serde's attributes on a struct or an enum.
pub(super) fn container(attrs: &[syn::Attribute]) -> Container {
    let mut container = Container::default();
    for meta in items(attrs) {
        match key(&meta).as_str() {
            "rename_all" => {
                container.rename_all = deserialize_name(&meta).and_then(|r| Rule::named(&r));
            }
            reshaping @ ("tag" | "content" | "untagged" | "transparent" | "from" | "try_from") => {
                container
                    .reshaping
                    .push((reshaping.to_owned(), meta.path().span()));
            }
            _ => {}
        }
    }
    container
}

/// serde's attributes on a field or a variant.
pub(super) fn member(attrs: &[syn::Attribute]) -> Member {
    let mut member = Member::default();
    for meta in items(attrs) {
        match key(&meta).as_str() {
            "rename" => member.rename = deserialize_name(&meta),
            "skip" | "skip_deserializing" => member.skip = Some(meta.path().span()),
            reshaping @ ("flatten" | "untagged") => {
                member.reshaping = Some((reshaping.to_owned(), meta.path().span()));
            }
            _ => {}
        }
    }
    member
}

/// A `rename_all` rule, as serde names and applies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Rule {
    fn named(name: &str) -> Option<Rule> {
        Some(match name {
            "lowercase" => Rule::Lower,
            "UPPERCASE" => Rule::Upper,
            "PascalCase" => Rule::Pascal,
            "camelCase" => Rule::Camel,
            "snake_case" => Rule::Snake,
            "SCREAMING_SNAKE_CASE" => Rule::ScreamingSnake,
            "kebab-case" => Rule::Kebab,
            "SCREAMING-KEBAB-CASE" => Rule::ScreamingKebab,
            _ => return None,
        })
    }

    /// A variant's name (written in PascalCase) under the rule.
    pub(super) fn variant(self, name: &str) -> String {
        // The words of a PascalCase name start at each uppercase letter after the first.
        let snake = || {
            let mut out = String::with_capacity(name.len() + 4);
            for (i, c) in name.chars().enumerate() {
                if i > 0 && c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        };
        match self {
            Rule::Pascal => name.to_owned(),
            Rule::Lower => name.to_ascii_lowercase(),
            Rule::Upper => name.to_ascii_uppercase(),
            Rule::Camel => lower_first(name),
            Rule::Snake => snake(),
            Rule::ScreamingSnake => snake().to_ascii_uppercase(),
            Rule::Kebab => snake().replace('_', "-"),
            Rule::ScreamingKebab => snake().to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// A field's name (written in snake_case) under the rule.
    pub(super) fn field(self, name: &str) -> String {
        // Each `_` ends a word; the letter after it starts the next, capitalized.
        let pascal = || {
            let mut out = String::with_capacity(name.len());
            let mut capital = true;
            for c in name.chars() {
                match c {
                    '_' => capital = true,
                    c if capital => {
                        out.push(c.to_ascii_uppercase());
                        capital = false;
                    }
                    c => out.push(c),
                }
            }
            out
        };
        match self {
            Rule::Lower | Rule::Snake => name.to_owned(),
            Rule::Upper | Rule::ScreamingSnake => name.to_ascii_uppercase(),
            Rule::Pascal => pascal(),
            Rule::Camel => lower_first(&pascal()),
            Rule::Kebab => name.replace('_', "-"),
            Rule::ScreamingKebab => name.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// An identifier as serde names it: without `r#`.
pub(super) fn unraw(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    match name.strip_prefix("r#") {
        Some(bare) => bare.to_owned(),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_name_variants_as_serde_does() {
        let cases = [
            (Rule::Lower, "SmallTeam", "smallteam"),
            (Rule::Upper, "SmallTeam", "SMALLTEAM"),
            (Rule::Pascal, "SmallTeam", "SmallTeam"),
            (Rule::Camel, "SmallTeam", "smallTeam"),
            (Rule::Snake, "SmallTeam", "small_team"),
            (Rule::ScreamingSnake, "SmallTeam", "SMALL_TEAM"),
            (Rule::Kebab, "SmallTeam", "small-team"),
            (Rule::ScreamingKebab, "SmallTeam", "SMALL-TEAM"),
            (Rule::Snake, "HTTPServer", "h_t_t_p_server"),
            (Rule::Camel, "", ""),
        ];
        for (rule, name, expected) in cases {
            assert_eq!(rule.variant(name), expected, "{rule:?} {name}");
        }
    }

    #[test]
    fn rules_name_fields_as_serde_does() {
        let cases = [
            (Rule::Lower, "first_name", "first_name"),
            (Rule::Upper, "first_name", "FIRST_NAME"),
            (Rule::Pascal, "first_name", "FirstName"),
            (Rule::Camel, "first_name", "firstName"),
            (Rule::Snake, "first_name", "first_name"),
            (Rule::ScreamingSnake, "first_name", "FIRST_NAME"),
            (Rule::Kebab, "first_name", "first-name"),
            (Rule::ScreamingKebab, "first_name", "FIRST-NAME"),
            (Rule::Camel, "_private", "private"),
        ];
        for (rule, name, expected) in cases {
            assert_eq!(rule.field(name), expected, "{rule:?} {name}");
        }
    }

    #[test]
    fn names_come_from_the_deserialize_side() {
        let attrs: Vec<syn::Attribute> = vec![
            syn::parse_quote!(#[serde(rename_all(serialize = "UPPERCASE", deserialize = "kebab-case"))]),
            syn::parse_quote!(#[serde(deny_unknown_fields, tag = "kind")]),
        ];
        let container = container(&attrs);
        assert_eq!(container.rename_all, Some(Rule::Kebab));
        assert_eq!(container.reshaping.len(), 1);

        let attrs: Vec<syn::Attribute> = vec![
            syn::parse_quote!(#[serde(rename(serialize = "out"))]),
            syn::parse_quote!(#[serde(alias = "x", skip_deserializing)]),
        ];
        let member = member(&attrs);
        assert_eq!(member.rename, None);
        assert!(member.skip.is_some());
        let member = super::member(&[syn::parse_quote!(#[serde(rename = "in")])]);
        assert_eq!(member.rename.as_deref(), Some("in"));
    }
}
