//! Lowering: the derive input, its receivers and serde's attributes read into the models, every
//! mistake reported at once on its own tokens. What the value's kind must be against the field's
//! type is left to rustc (`codegen` passes each value where the type is known).

use darling::util::SpannedValue;
use darling::{FromDeriveInput, FromField, FromVariant};
use syn::spanned::Spanned;

use super::attr::{ChoiceReceiver, FieldReceiver, FormReceiver, VariantReceiver, Written};
use super::model::{Choice, FORMATS, Field, Form, Format, Num, Preset, PresetKind, Value, Variant};
use super::serde_attr::{self, unraw};
use crate::common::diag::unknown;
use crate::common::docs;
use crate::common::paths::Krate;

/// What a form shows, for the messages.
const FORM_HINT: &str = "a form is a struct whose named fields are text, numbers, booleans and choices, one per field: `struct Signup { email: String, age: Option<u8> }`";

/// `#[derive(ElicitForm)]`: the struct and its fields.
pub(super) fn form(
    derive: &syn::DeriveInput,
    errors: &mut darling::error::Accumulator,
) -> Option<Form> {
    let fields = match &derive.data {
        syn::Data::Struct(data) => match &data.fields {
            syn::Fields::Named(fields) => Some(fields),
            syn::Fields::Unnamed(fields) => {
                errors.push(
                    darling::Error::custom(format!(
                        "the fields of a form have names, the names the user's answer is sent with: {FORM_HINT}"
                    ))
                    .with_span(&fields.paren_token.span.join()),
                );
                None
            }
            syn::Fields::Unit => {
                errors.push(
                    darling::Error::custom(format!(
                        "a form's answer is an object, and serde reads a unit struct from null: write `struct {} {{}}` for a form with no fields, or give it fields ({FORM_HINT})",
                        derive.ident
                    ))
                    .with_span(&derive.ident),
                );
                None
            }
        },
        syn::Data::Enum(data) => {
            errors.push(
                darling::Error::custom(format!(
                    "#[derive(ElicitForm)] goes on a struct ({FORM_HINT}); an enum of unit variants is a choice in a form: `#[derive(ElicitChoice)]`"
                ))
                .with_span(&data.enum_token),
            );
            None
        }
        syn::Data::Union(data) => {
            errors.push(
                darling::Error::custom(format!(
                    "#[derive(ElicitForm)] goes on a struct: {FORM_HINT}"
                ))
                .with_span(&data.union_token),
            );
            None
        }
    };
    let receiver = errors.handle(FormReceiver::from_derive_input(derive));
    let serde = serde_attr::container(&derive.attrs);
    for (key, span) in &serde.reshaping {
        errors.push(
            darling::Error::custom(format!(
                "`#[serde({key})]` has serde read the struct as something other than an object of its fields, which is what a form sends back; take it off the form (convert after `elicit`)"
            ))
            .with_span(span),
        );
    }
    let mut model = Vec::new();
    for field in fields.into_iter().flat_map(|f| &f.named) {
        let Some(receiver) = errors.handle(FieldReceiver::from_field(field)) else {
            continue;
        };
        if let Some(field) = form_field(receiver, serde.rename_all, errors) {
            model.push(field);
        }
    }
    fields?;
    Some(Form {
        krate: Krate::new(receiver?.krate),
        ident: derive.ident.clone(),
        generics: derive.generics.clone(),
        fields: model,
    })
}

fn form_field(
    field: FieldReceiver,
    rename_all: Option<serde_attr::Rule>,
    errors: &mut darling::error::Accumulator,
) -> Option<Field> {
    let ident = field.ident?;
    let serde = serde_attr::member(&field.attrs);
    if serde.skip.is_some() {
        // serde never reads it: not a field of the form.
        return None;
    }
    if let Some((key, span)) = &serde.reshaping {
        errors.push(
            darling::Error::custom(format!(
                "`#[serde({key})]` reads this field from the fields around it, and a form is flat: write its fields in this form, or ask for them in a second form"
            ))
            .with_span(span),
        );
    }
    let name = serde.rename.unwrap_or_else(|| {
        let name = unraw(&ident);
        rename_all.map_or_else(|| name.clone(), |rule| rule.field(&name))
    });
    let format = field.format.and_then(|format| {
        let span = format.span();
        match Format::named(format.as_str()) {
            Some(known) => Some(SpannedValue::new(known, span)),
            None => {
                errors.push(unknown("format", format.as_str(), &FORMATS, span));
                None
            }
        }
    });
    Some(Field {
        name,
        at: ident.span(),
        ty: field.ty,
        doc: docs::parts(&field.attrs),
        title: field.title,
        format,
        min_length: field.min_length,
        max_length: field.max_length,
        min: field.min.and_then(|w| bound(w, errors)),
        max: field.max.and_then(|w| bound(w, errors)),
        min_items: field.min_items,
        max_items: field.max_items,
        default: field.default.and_then(|w| preset(w, errors)),
    })
}

/// A number written out: a literal, maybe negative.
fn number(expr: &syn::Expr) -> Option<Value> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<i128>().ok().map(Value::Whole),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(x),
            ..
        }) => x.base10_parse::<f64>().ok().map(Value::Fraction),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) if matches!(&**expr, syn::Expr::Lit(_)) => match number(expr)? {
            Value::Whole(n) => Some(Value::Whole(-n)),
            Value::Fraction(x) => Some(Value::Fraction(-x)),
        },
        syn::Expr::Group(group) => number(&group.expr),
        _ => None,
    }
}

/// `min = ..` or `max = ..`.
fn bound(written: Written, errors: &mut darling::error::Accumulator) -> Option<Num> {
    match number(&written.expr) {
        Some(value) => Some(Num {
            value,
            expr: written.expr,
            key: written.key,
        }),
        None => {
            errors.push(
                darling::Error::custom(
                    "a bound is a number written out, such as `min = 0`, `max = 120` or `max = 0.5`",
                )
                .with_span(&written.expr),
            );
            None
        }
    }
}

/// `default = ..`: a literal, a variant of a choice, or a list of variants.
fn preset(written: Written, errors: &mut darling::error::Accumulator) -> Option<Preset> {
    let kind = match &written.expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) => Some(PresetKind::Text(text.value())),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(_),
            ..
        })
        | syn::Expr::Path(_) => Some(PresetKind::Other),
        syn::Expr::Array(items) => {
            let mut all_paths = true;
            for item in &items.elems {
                if !matches!(item, syn::Expr::Path(_)) {
                    all_paths = false;
                    errors.push(
                        darling::Error::custom(
                            "a multi-select's default lists its choices' variants, such as `default = [Topic::Rust, Topic::Go]`",
                        )
                        .with_span(item),
                    );
                }
            }
            all_paths.then_some(PresetKind::Items(items.elems.len()))
        }
        other => match number(other) {
            Some(value) => Some(PresetKind::Number(value)),
            None => {
                errors.push(
                    darling::Error::custom(
                        "a default is a literal (`\"text\"`, `42`, `0.5`, `true`), a choice's variant (`Plan::Pro`), or a list of variants for a multi-select (`[Topic::Rust, Topic::Go]`)",
                    )
                    .with_span(other),
                );
                None
            }
        },
    }?;
    Some(Preset {
        kind,
        expr: written.expr,
        key: written.key,
    })
}

/// What a choice sends: one string per unit variant.
const CHOICE_HINT: &str = "a choice is an enum of unit variants, each a value the user can pick: `enum Plan { Free, Pro }`";

/// `#[derive(ElicitChoice)]`: the enum and its variants.
pub(super) fn choice(
    derive: &syn::DeriveInput,
    errors: &mut darling::error::Accumulator,
) -> Option<Choice> {
    let data = match &derive.data {
        syn::Data::Enum(data) => Some(data),
        syn::Data::Struct(data) => {
            errors.push(
                darling::Error::custom(format!(
                    "#[derive(ElicitChoice)] goes on an enum ({CHOICE_HINT}); a struct is a whole form: `#[derive(ElicitForm)]`"
                ))
                .with_span(&data.struct_token),
            );
            None
        }
        syn::Data::Union(data) => {
            errors.push(
                darling::Error::custom(format!(
                    "#[derive(ElicitChoice)] goes on an enum: {CHOICE_HINT}"
                ))
                .with_span(&data.union_token),
            );
            None
        }
    };
    if data.is_some_and(|d| d.variants.is_empty()) {
        errors.push(
            darling::Error::custom(format!(
                "this enum has no variant, so the user would have nothing to pick: {CHOICE_HINT}"
            ))
            .with_span(&derive.ident),
        );
    }
    let receiver = errors.handle(ChoiceReceiver::from_derive_input(derive));
    let serde = serde_attr::container(&derive.attrs);
    for (key, span) in &serde.reshaping {
        errors.push(
            darling::Error::custom(format!(
                "`#[serde({key})]` has serde read the enum from something other than the string of a variant's name, which is what a form sends back; take it off the choice"
            ))
            .with_span(span),
        );
    }
    let mut variants = Vec::new();
    for variant in data.into_iter().flat_map(|d| &d.variants) {
        if !matches!(variant.fields, syn::Fields::Unit) {
            errors.push(
                darling::Error::custom(format!(
                    "a choice sends one value, with nothing attached: {CHOICE_HINT}; ask for what this variant holds in a field of its own"
                ))
                .with_span(&variant.fields.span()),
            );
        }
        let Some(receiver) = errors.handle(VariantReceiver::from_variant(variant)) else {
            continue;
        };
        let serde_variant = serde_attr::member(&receiver.attrs);
        if let Some(span) = serde_variant.skip {
            errors.push(
                darling::Error::custom(
                    "a skipped variant cannot be read back, so the form could not offer it: move it out of the choice",
                )
                .with_span(&span),
            );
        }
        if let Some((key, span)) = &serde_variant.reshaping {
            errors.push(
                darling::Error::custom(format!(
                    "`#[serde({key})]` has serde read this variant from something other than its name, which is what a form sends back; take it off"
                ))
                .with_span(span),
            );
        }
        let value = serde_variant.rename.unwrap_or_else(|| {
            let name = unraw(&variant.ident);
            serde
                .rename_all
                .map_or_else(|| name.clone(), |rule| rule.variant(&name))
        });
        variants.push(Variant {
            ident: variant.ident.clone(),
            value,
            title: receiver.title,
            doc: docs::parts(&receiver.attrs),
        });
    }
    data?;
    Some(Choice {
        krate: Krate::new(receiver?.krate),
        ident: derive.ident.clone(),
        generics: derive.generics.clone(),
        variants,
    })
}

/// Where a field's type is written, for the stubs' probes.
pub(super) fn field_types(derive: &syn::DeriveInput) -> Vec<syn::Type> {
    match &derive.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(fields),
            ..
        }) => fields
            .named
            .iter()
            .filter(|f| serde_attr::member(&f.attrs).skip.is_none())
            .map(|f| f.ty.clone())
            .collect(),
        _ => Vec::new(),
    }
}
