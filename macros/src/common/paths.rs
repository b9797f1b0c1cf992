//! The one spelling of the runtime path: `::mcp_fusion`, or the user's `crate = path`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};

/// The runtime crate as generated code names it.
#[derive(Clone)]
pub(crate) struct Krate(Option<syn::Path>);

impl Krate {
    pub(crate) fn new(path: Option<syn::Path>) -> Self {
        Krate(path)
    }

    /// `<runtime>::__private`, where generated code finds everything it calls.
    pub(crate) fn private(&self) -> TokenStream {
        quote!(#self::__private)
    }

    /// The same path, spanned at the user's tokens, so that errors from a call through it are
    /// reported there and not at the macro.
    pub(crate) fn private_at(&self, span: Span) -> TokenStream {
        match &self.0 {
            Some(path) => quote_spanned!(span=> #path::__private),
            None => quote_spanned!(span=> ::mcp_fusion::__private),
        }
    }
}

impl ToTokens for Krate {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match &self.0 {
            Some(path) => path.to_tokens(tokens),
            None => tokens.extend(quote!(::mcp_fusion)),
        }
    }
}

/// `crate = path` among the `#[name(..)]` attributes, read on its own (for the stubs of a
/// failed expansion, which must still name the crate where the user put it).
pub(crate) fn crate_path(attrs: &[syn::Attribute], name: &str) -> Option<syn::Path> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident(name))
        .find_map(|attr| {
            let list = attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            );
            list.ok()?.into_iter().find_map(|meta| match meta {
                syn::Meta::NameValue(nv) if nv.path.is_ident("crate") => match nv.value {
                    syn::Expr::Path(p) => Some(p.path),
                    _ => None,
                },
                _ => None,
            })
        })
}
