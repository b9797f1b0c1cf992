//! The derives' receivers: `#[form(..)]` on a struct and its fields, `#[choice(..)]` on an enum
//! and its variants. Values whose kind rustc checks against the field's type (`min`, `max`,
//! `default`) are kept as written, each with where its key is.

use darling::util::SpannedValue;
use darling::{FromDeriveInput, FromField, FromMeta, FromVariant};
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The struct of `#[derive(ElicitForm)]`.
#[derive(FromDeriveInput)]
#[darling(attributes(form))]
pub(super) struct FormReceiver {
    /// `#[form(crate = path)]`: where the runtime is, when renamed or re-exported.
    #[darling(rename = "crate")]
    pub(super) krate: Option<syn::Path>,
}

/// A field of the form, with its `#[form(..)]`.
#[derive(FromField)]
#[darling(attributes(form), forward_attrs(doc, serde))]
pub(super) struct FieldReceiver {
    pub(super) ident: Option<syn::Ident>,
    pub(super) ty: syn::Type,
    pub(super) attrs: Vec<syn::Attribute>,
    /// `title = "Email address"`: the field's name as the user sees it.
    pub(super) title: Option<SpannedValue<String>>,
    /// `format = "email"`: one of the formats MCP allows for text.
    pub(super) format: Option<SpannedValue<String>>,
    pub(super) min_length: Option<SpannedValue<u32>>,
    pub(super) max_length: Option<SpannedValue<u32>>,
    pub(super) min: Option<Written>,
    pub(super) max: Option<Written>,
    pub(super) min_items: Option<SpannedValue<u64>>,
    pub(super) max_items: Option<SpannedValue<u64>>,
    /// `default = ..`: a literal, a variant of a choice, or a list of them.
    pub(super) default: Option<Written>,
}

/// The enum of `#[derive(ElicitChoice)]`.
#[derive(FromDeriveInput)]
#[darling(attributes(choice))]
pub(super) struct ChoiceReceiver {
    /// `#[choice(crate = path)]`: where the runtime is, when renamed or re-exported.
    #[darling(rename = "crate")]
    pub(super) krate: Option<syn::Path>,
}

/// A variant of the choice, with its `#[choice(..)]`.
#[derive(FromVariant)]
#[darling(attributes(choice), forward_attrs(doc, serde))]
pub(super) struct VariantReceiver {
    pub(super) attrs: Vec<syn::Attribute>,
    /// `title = "Pro, billed monthly"`: what the user sees (else the doc comment).
    pub(super) title: Option<SpannedValue<String>>,
}

/// A value as written, with where its key is: its kind is checked against the field's type by
/// rustc, where the value is written (darling's own `Expr` reads a string as an expression).
pub(super) struct Written {
    pub(super) key: Span,
    pub(super) expr: syn::Expr,
}

impl FromMeta for Written {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        match item {
            syn::Meta::NameValue(nv) => Ok(Written {
                key: nv.path.span(),
                expr: nv.value.clone(),
            }),
            _ => Err(darling::Error::custom(format!(
                "write a value: `{} = ..`",
                quote::ToTokens::to_token_stream(item.path())
            ))
            .with_span(item)),
        }
    }
}
