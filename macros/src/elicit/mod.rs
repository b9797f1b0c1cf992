//! `#[derive(ElicitForm)]` and `#[derive(ElicitChoice)]`: the form a handler asks the user to
//! fill in (MCP elicitation), and the choices in it. Receivers (`attr`, and `serde_attr` for
//! the names serde reads) → model (`lower`) → checks (`validate`) → code (`codegen`). Every
//! mistake is reported, each on its own tokens; with any, the type still gets stub impls (and
//! its fields' types are still required to be form fields), so that its uses add no errors of
//! their own.
//!
//! What a form can show is not decided here from a type's name: the generated code requires
//! `__private::form::FormField` of each field's type, where it is written, and the trait's
//! hint says what a form shows.

mod attr;
mod codegen;
mod lower;
mod model;
mod serde_attr;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::common::paths::Krate;

pub(crate) fn expand_form(input: TokenStream) -> TokenStream {
    let derive: syn::DeriveInput = match syn::parse2(input) {
        Ok(derive) => derive,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = darling::Error::accumulator();
    let form = lower::form(&derive, &mut errors);
    if let Some(form) = &form {
        validate::form(form, &mut errors);
    }
    match (errors.finish(), form) {
        (Ok(()), Some(form)) => codegen::form(&form),
        (result, _) => {
            let errors = result.err().map(darling::Error::write_errors);
            let stubs = matches!(derive.data, syn::Data::Struct(_)).then(|| {
                let krate = Krate::new(crate::common::paths::crate_path(&derive.attrs, "form"));
                codegen::form_fallback(&derive, &krate, &lower::field_types(&derive))
            });
            quote!(#errors #stubs)
        }
    }
}

pub(crate) fn expand_choice(input: TokenStream) -> TokenStream {
    let derive: syn::DeriveInput = match syn::parse2(input) {
        Ok(derive) => derive,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = darling::Error::accumulator();
    let choice = lower::choice(&derive, &mut errors);
    if let Some(choice) = &choice {
        validate::choice(choice, &mut errors);
    }
    match (errors.finish(), choice) {
        (Ok(()), Some(choice)) => codegen::choice(&choice),
        (result, _) => {
            let errors = result.err().map(darling::Error::write_errors);
            let stubs = matches!(derive.data, syn::Data::Enum(_)).then(|| {
                let krate = Krate::new(crate::common::paths::crate_path(&derive.attrs, "choice"));
                codegen::choice_fallback(&derive, &krate)
            });
            quote!(#errors #stubs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::model::{Format, PresetKind, Value};
    use super::*;

    fn form(input: TokenStream) -> (Option<model::Form>, darling::Result<()>) {
        let mut errors = darling::Error::accumulator();
        let derive = syn::parse2(input).expect("a derive input");
        let form = lower::form(&derive, &mut errors);
        if let Some(form) = &form {
            validate::form(form, &mut errors);
        }
        (form, errors.finish())
    }

    fn choice(input: TokenStream) -> (Option<model::Choice>, darling::Result<()>) {
        let mut errors = darling::Error::accumulator();
        let derive = syn::parse2(input).expect("a derive input");
        let choice = lower::choice(&derive, &mut errors);
        if let Some(choice) = &choice {
            validate::choice(choice, &mut errors);
        }
        (choice, errors.finish())
    }

    fn count(result: darling::Result<()>) -> usize {
        result.err().map_or(0, |e| e.len())
    }

    #[test]
    fn a_form_becomes_its_model() {
        let (form, result) = form(quote! {
            #[serde(rename_all = "camelCase")]
            struct Signup {
                /// Where we write.
                #[form(title = "Email", format = "email", min_length = 3, max_length = 100)]
                email_address: String,
                #[form(min = 0, max = 0.5, default = 0.25)]
                share: f64,
                #[form(min = -3, default = 2)]
                count: Option<i8>,
                #[form(default = Plan::Pro)]
                plan: Plan,
                #[form(min_items = 1, default = [Topic::Rust])]
                topics: Vec<Topic>,
                #[serde(rename = "ok")]
                confirm: bool,
                #[serde(skip)]
                internal: Address,
                r#type: Option<String>,
            }
        });
        result.unwrap_or_else(|e| panic!("{e}"));
        let form = form.expect("a model");
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "emailAddress",
                "share",
                "count",
                "plan",
                "topics",
                "ok",
                "type"
            ]
        );
        let email = &form.fields[0];
        assert_eq!(email.format.as_deref(), Some(&Format::Email));
        assert_eq!(email.title.as_deref().map(String::as_str), Some("Email"));
        assert_eq!(email.doc.len(), 1);
        assert_eq!(
            (email.min_length.as_deref(), email.max_length.as_deref()),
            (Some(&3), Some(&100))
        );
        let share = &form.fields[1];
        assert_eq!(share.min.as_ref().map(|n| n.value), Some(Value::Whole(0)));
        assert_eq!(
            share.max.as_ref().map(|n| n.value),
            Some(Value::Fraction(0.5))
        );
        let count = &form.fields[2];
        assert_eq!(count.min.as_ref().map(|n| n.value), Some(Value::Whole(-3)));
        let kinds: Vec<Option<PresetKind>> = form
            .fields
            .iter()
            .map(|f| f.default.as_ref().map(|d| d.kind.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                None,
                Some(PresetKind::Number(Value::Fraction(0.25))),
                Some(PresetKind::Number(Value::Whole(2))),
                Some(PresetKind::Other),
                Some(PresetKind::Items(1)),
                None,
                None,
            ]
        );
    }

    #[test]
    fn every_mistake_in_a_form_is_reported() {
        let (_, result) = form(quote! {
            #[serde(transparent)]
            struct Form {
                #[form(titel = "Name")]
                name: String,
                #[form(format = "emial", min_length = 5, max_length = 2)]
                email: String,
                #[form(min = 10, max = 1, default = 20)]
                count: u8,
                #[form(max = 99999999999999999999)]
                big: u64,
                #[form(default = "toolong", max_length = 3)]
                code: String,
                #[form(default = some_call(), min = "1")]
                other: u8,
                #[form(title = " ")]
                blank: bool,
                #[serde(flatten)]
                address: Address,
                #[serde(rename = "email")]
                second_email: String,
            }
        });
        // transparent; unknown key; unknown format; min_length > max_length; min > max; the
        // default above max; beyond i64; the default too long; a default that is no literal; a
        // bound that is no number; the empty title; flatten; the name used twice.
        assert_eq!(count(result.clone()), 13, "{:?}", result);
        let text = result.err().unwrap().to_string();
        assert!(text.contains("titel"), "{text}");
        assert!(text.contains("email"), "{text}");
    }

    #[test]
    fn forms_are_structs_with_named_fields() {
        for input in [
            quote!(
                struct Tuple(String);
            ),
            quote!(
                struct Unit;
            ),
            quote!(
                enum E {
                    A,
                }
            ),
            quote!(
                union U {
                    a: u8,
                }
            ),
        ] {
            let (model, result) = form(input);
            assert!(model.is_none());
            assert_eq!(count(result), 1);
        }
        let (model, result) = form(quote!(
            struct Empty {}
        ));
        assert!(result.is_ok() && model.is_some_and(|m| m.fields.is_empty()));
    }

    #[test]
    fn a_choice_becomes_its_model() {
        let (choice, result) = choice(quote! {
            #[serde(rename_all = "kebab-case")]
            enum Plan {
                /// Free.
                Free,
                #[choice(title = "Small team")]
                SmallTeam,
                #[serde(rename = "ENT")]
                Enterprise,
                r#Type,
            }
        });
        result.unwrap_or_else(|e| panic!("{e}"));
        let choice = choice.expect("a model");
        let values: Vec<&str> = choice.variants.iter().map(|v| v.value.as_str()).collect();
        assert_eq!(values, ["free", "small-team", "ENT", "type"]);
        assert_eq!(choice.variants[0].doc.len(), 1);
        assert!(choice.variants[1].title.is_some());
    }

    #[test]
    fn every_mistake_in_a_choice_is_reported() {
        let (_, result) = choice(quote! {
            #[serde(tag = "kind")]
            enum Plan {
                Free(u8),
                Pro { seats: u8 },
                #[serde(skip)]
                Hidden,
                #[serde(untagged)]
                Loose,
                #[choice(titel = "x")]
                Typo,
                #[serde(rename = "Free")]
                Duplicate,
                #[choice(title = "")]
                Blank,
            }
        });
        // tag; two variants with fields; skip; untagged; the unknown key; the duplicate value;
        // the empty title.
        assert_eq!(count(result.clone()), 8, "{result:?}");
        let (_, result) = choice(quote!(
            enum Never {}
        ));
        assert_eq!(count(result), 1);
        let (_, result) = choice(quote!(
            struct Plan;
        ));
        assert_eq!(count(result), 1);
    }
}
