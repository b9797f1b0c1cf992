//! `#[derive(ToolErrors)]`: receivers (`attr`) → checked model (`lower`, its checks in
//! `validate`, the model in `model`) → code (`codegen`). Every mistake is reported, each on its
//! own tokens; with any, the enum still gets stub impls so that its uses do not add errors of
//! their own.

mod attr;
mod codegen;
mod fmt;
mod lower;
mod model;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::common::paths::Krate;

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let derive: syn::DeriveInput = match syn::parse2(input) {
        Ok(derive) => derive,
        Err(e) => return e.to_compile_error(),
    };
    match lower::model(&derive) {
        Ok(model) => codegen::expand(&model),
        Err(errors) => {
            let errors = errors.write_errors();
            let stubs = codegen::fallback(
                &derive,
                &Krate::new(crate::common::paths::crate_path(
                    &derive.attrs,
                    "tool_error",
                )),
            );
            quote!(#errors #stubs)
        }
    }
}
