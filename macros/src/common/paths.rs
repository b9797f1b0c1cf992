//! The one spelling of the runtime path: `::mcp_fusion`, or the user's `crate = path`.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

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
}

impl ToTokens for Krate {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match &self.0 {
            Some(path) => path.to_tokens(tokens),
            None => tokens.extend(quote!(::mcp_fusion)),
        }
    }
}
