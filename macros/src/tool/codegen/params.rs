//! The handler's parameters: each use is spanned at the user's type, so that a type that cannot
//! be an action's arguments or context is reported there, with the runtime traits' own hints.
//! Each type is required once (arguments in `action_def`, context here), so it is reported once.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;

use super::super::model::Action;
use crate::common::paths::Krate;

/// The arguments passed to the handler: decoded arguments and the context, in the order the
/// handler declares them.
pub(super) fn call_args(
    action: &Action,
    index: usize,
    krate: &Krate,
) -> (TokenStream, Vec<TokenStream>) {
    let mut passed = Vec::new();
    let decode = action.args.as_ref().map(|ty| {
        let private = krate.private_at(ty.span());
        passed.push(quote_spanned!(ty.span()=> __arguments));
        quote_spanned! {ty.span()=>
            let __arguments = #private::decode_args::<#ty>(#private::Tool::definition(self), #index, &__args)?;
        }
    });
    if let Some(ty) = &action.context {
        let private = krate.private_at(ty.span());
        let context =
            quote_spanned!(ty.span()=> <#ty as #private::FromContext>::from_context(__context));
        match action.context_first {
            true => passed.insert(0, context),
            false => passed.push(context),
        }
    }
    (decode.unwrap_or_default(), passed)
}
