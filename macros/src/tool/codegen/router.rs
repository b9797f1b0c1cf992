//! `Tool::invoke`: routing, validation and everything around the handler are the runtime's
//! (in process, or the server's pipeline); this is the `match` from the chosen action's index
//! to its method.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::super::model::{Shape, Tool};
use super::params;

pub(super) fn call(tool: &Tool) -> TokenStream {
    let private = tool.krate.private();
    let arms = tool.actions.iter().enumerate().map(|(index, action)| {
        let method = &action.method;
        let (decode, passed) = params::call_args(action, index, &tool.krate);
        // The return type's checks are reported at the return type (its `T` for the success
        // value), through a path spanned there.
        let at_output = tool.krate.private_at(action.output_span);
        let at_ok = tool.krate.private_at(action.ok_span);
        let call = match (&tool.shape, action.receiver) {
            (Shape::Single { .. }, _) => quote!(#method(#(#passed),*)),
            (Shape::Group, true) => quote!(Self::#method(self, #(#passed),*)),
            (Shape::Group, false) => quote!(Self::#method(#(#passed),*)),
        };
        let into_output = match action.output {
            Some(_) => quote_spanned!(action.ok_span=> #at_ok::structured_output(__value)),
            None => quote_spanned!(action.ok_span=> #at_ok::IntoOutput::into_output(__value)),
        };
        let finish = quote_spanned! {action.output_span=>
            match #at_output::ActionReturn::into_result(__returned) {
                ::core::result::Result::Ok(__value) => #into_output,
                ::core::result::Result::Err(__error) => {
                    #[allow(unused_imports)]
                    use #at_output::{ViaOtherError as _, ViaToolError as _, ViaUnsupported as _};
                    ::core::result::Result::Err((&&#at_output::Wrap::new(__error)).mcp_fusion_failure())
                }
            }
        };
        quote! {
            #index => {
                #decode
                let __returned = #call.await;
                #finish
            }
        }
    });
    quote! {
        fn invoke(
            &self,
            __index: ::core::primitive::usize,
            __args: #private::Value,
            __context: #private::Context,
        ) -> #private::BoxFuture<'_, ::core::result::Result<#private::CallToolResult, #private::Failure>> {
            #private::Box::pin(async move {
                #[allow(unused_variables)]
                let __args: #private::Value = __args;
                #[allow(unused_variables)]
                let __context: #private::Context = __context;
                match __index {
                    #(#arms)*
                    _ => ::core::result::Result::Err(#private::Failure::Internal(
                        #private::Box::from("no action has this index"),
                    )),
                }
            })
        }
    }
}
