//! Doc comments → descriptions. `#[doc = include_str!(..)]` and other non-literal docs are kept
//! as expressions and joined with `concat!` by the compiler.

use proc_macro2::TokenStream;
use quote::quote;

/// The doc attributes of an item as one string expression, or `None` without docs.
pub(crate) fn description(attrs: &[syn::Attribute]) -> Option<TokenStream> {
    joined(&parts(attrs))
}

/// The values of an item's doc attributes, in order.
pub(crate) fn parts(attrs: &[syn::Attribute]) -> Vec<syn::Expr> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(nv.value.clone()),
            _ => None,
        })
        .collect()
}

/// Doc values as one string expression, one line each, or `None` without any.
pub(crate) fn joined(parts: &[syn::Expr]) -> Option<TokenStream> {
    if parts.is_empty() {
        return None;
    }
    Some(quote!(::core::concat!(#(#parts, "\n"),*)))
}
