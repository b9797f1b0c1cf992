//! Message templates: `{field}` and `{0}` name the variant's fields, `{{` and `}}` are braces,
//! and anything after `:` is a format spec left to rustc. A named reference stays as written and
//! is passed as `field = __field_field`; only positional ones (`{0}`, which `format!` would read
//! as its own arguments) are rewritten to their local. The literal is then handed to
//! `format!`, so rustc itself reports a bad format spec, on the user's characters.

use std::collections::BTreeSet;

use proc_macro2::Span;

/// A template with its positional references rewritten, and the fields it names.
pub(super) struct Template {
    pub(super) literal: syn::LitStr,
    pub(super) fields: BTreeSet<String>,
    /// The named arguments to pass: `(name in the template, local)`.
    pub(super) named: Vec<(syn::Ident, syn::Ident)>,
}

/// The local a field is bound to: `__field_id`, `__field_0` (raw identifiers unraw'd).
pub(super) fn local(field: &str) -> syn::Ident {
    syn::Ident::new(
        &format!("__field_{}", field.trim_start_matches("r#")),
        Span::call_site(),
    )
}

/// Rewrites `literal`'s references; `fields` are the variant's field names (`"0"`, `"1"` for a
/// tuple variant), unraw'd.
pub(super) fn template(literal: &syn::LitStr, fields: &[String]) -> darling::Result<Template> {
    let text = literal.value();
    let mut out = String::with_capacity(text.len() + 16);
    let mut named = BTreeSet::new();
    let mut errors = darling::Error::accumulator();
    let mut rest = text.as_str();
    while let Some(open) = rest.find(['{', '}']) {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..2]);
            rest = &tail[2..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('}') {
            // A lone `}`: rustc reports it on the literal.
            out.push('}');
            rest = after;
            continue;
        }
        let Some(close) = tail.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        let inside = &tail[1..close];
        let (name, spec) = inside.split_at(inside.find(':').unwrap_or(inside.len()));
        let name = name.trim_start_matches("r#");
        if name.is_empty() {
            errors.push(
                darling::Error::custom("name the field to show: `{}` has no field, write `{id}` (or `{0}` in a tuple variant)")
                    .with_span(literal),
            );
        } else if fields.iter().any(|f| f == name) {
            named.insert(name.to_owned());
        } else {
            errors.push(
                darling::Error::unknown_field_with_alts(name, fields)
                    .with_span(literal)
                    .at(format!("{{{name}}}")),
            );
        }
        // Positional and raw names cannot be `format!` argument names: use the local instead.
        let keep = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && !inside.starts_with("r#");
        if keep {
            out.push_str(&tail[..=close]);
        } else {
            out.push('{');
            out.push_str(&local(name).to_string());
            out.push_str(spec);
            out.push('}');
        }
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    // An unchanged literal keeps its own tokens, so rustc can point inside it.
    let rewritten = if out == text {
        literal.clone()
    } else {
        syn::LitStr::new(&out, literal.span())
    };
    let args = named
        .iter()
        .filter(|name| !name.starts_with(|c: char| c.is_ascii_digit()))
        .filter(|name| syn::parse_str::<syn::Ident>(name).is_ok())
        .map(|name| (syn::Ident::new(name, literal.span()), local(name)))
        .collect();
    errors.finish_with(Template {
        literal: rewritten,
        fields: named,
        named: args,
    })
}

/// A piece of a message template as the message shows it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    Text(String),
    /// `{name}` (`plain`: shown with `Display`, no format spec, so its text reads back).
    Hole {
        name: String,
        plain: bool,
    },
}

/// The pieces of a template's text (`{{` and `}}` are braces); adjacent text is one piece.
pub(super) fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        literal.push_str(&rest[..open]);
        let tail = &rest[open..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            literal.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let Some(close) = tail.find('}').filter(|_| tail.starts_with('{')) else {
            literal.push_str(&tail[..1]);
            rest = &tail[1..];
            continue;
        };
        if !literal.is_empty() {
            out.push(Piece::Text(std::mem::take(&mut literal)));
        }
        let inside = &tail[1..close];
        let (name, spec) = inside.split_at(inside.find(':').unwrap_or(inside.len()));
        out.push(Piece::Hole {
            name: name.trim_start_matches("r#").to_owned(),
            plain: spec.is_empty(),
        });
        rest = &tail[close + 1..];
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        out.push(Piece::Text(literal));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, fields: &[&str]) -> darling::Result<(String, Vec<String>)> {
        let fields: Vec<String> = fields.iter().map(|f| (*f).to_owned()).collect();
        let t = template(&syn::LitStr::new(text, Span::call_site()), &fields)?;
        Ok((t.literal.value(), t.fields.into_iter().collect()))
    }

    #[test]
    fn rewrites_named_and_positional_references() {
        assert_eq!(
            run("No invoice {id:?}", &["id"]).unwrap(),
            ("No invoice {id:?}".into(), vec!["id".into()])
        );
        assert_eq!(
            run("{0} and {1:>5}", &["0", "1"]).unwrap().0,
            "{__field_0} and {__field_1:>5}"
        );
        assert_eq!(
            run("{{literal}} {r#type}", &["type"]).unwrap().0,
            "{{literal}} {__field_type}"
        );
    }

    #[test]
    fn pieces_of_a_message() {
        let hole = |name: &str, plain| Piece::Hole {
            name: name.into(),
            plain,
        };
        assert_eq!(
            pieces("Invoice {id} is {status:?} {{x}}."),
            [
                Piece::Text("Invoice ".into()),
                hole("id", true),
                Piece::Text(" is ".into()),
                hole("status", false),
                Piece::Text(" {x}.".into()),
            ]
        );
        assert_eq!(pieces("{0}{r#type}"), [hole("0", true), hole("type", true)]);
    }

    #[test]
    fn unknown_and_empty_references_are_errors_together() {
        let err = run("{nope} {} {id}", &["id"]).unwrap_err();
        assert_eq!(err.len(), 2);
        assert!(err.to_string().contains("nope"));
    }
}
