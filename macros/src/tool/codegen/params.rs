//! Checks of each action's parameter and return types, written as trait bounds spanned at the
//! user's types, so that rustc reports them there with the traits' own hints.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;

use super::super::model::Action;

/// Compile-time probes: the arguments are `Deserialize + JsonSchema`, the context is a context.
pub(super) fn probes(action: &Action, private: &TokenStream) -> TokenStream {
    let args = action
        .args
        .as_ref()
        .map(|ty| quote_spanned!(ty.span()=> let _ = #private::assert_args::<#ty>;));
    let context = action.context.as_ref().map(
        |ty| quote_spanned!(ty.span()=> let _ = <#ty as #private::FromContext>::from_context;),
    );
    quote_spanned! {action.name_span=>
        const _: () = { #args #context };
    }
}

/// The arguments passed to the handler: decoded arguments, then the context, as declared.
pub(super) fn call_args(action: &Action, private: &TokenStream) -> (TokenStream, Vec<TokenStream>) {
    let mut passed = Vec::new();
    let decode = action.args.as_ref().map(|ty| {
        passed.push(quote_spanned!(ty.span()=> __arguments));
        quote_spanned! {ty.span()=>
            let __arguments = #private::decode::<#ty>(&__args, __context.action())?;
        }
    });
    if let Some(ty) = &action.context {
        passed.push(
            quote_spanned!(ty.span()=> <#ty as #private::FromContext>::from_context(__context)),
        );
    }
    (decode.unwrap_or_default(), passed)
}
