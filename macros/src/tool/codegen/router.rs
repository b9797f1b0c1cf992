//! `Tool::run`: the runtime's `dispatch` does routing, validation and everything around the
//! handler; this is the `match` from the chosen action's index to its method.

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
        let into_output = quote_spanned!(action.ok_span=> #at_ok::IntoOutput::into_output(__value));
        let finish = quote_spanned! {action.output_span=>
            match #at_output::ActionReturn::into_result(__returned) {
                ::core::result::Result::Ok(__value) => #into_output,
                ::core::result::Result::Err(__error) => {
                    #[allow(unused_imports)]
                    use #at_output::{ViaOtherError as _, ViaToolError as _};
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
        fn run(&self, __call: #private::Call) -> #private::BoxFuture<'_, #private::CallToolResult> {
            #private::Box::pin(#private::dispatch(self.definition(), __call, move |__index, __args, __context| {
                #private::Box::pin(async move {
                    #[allow(unused_variables)]
                    let __args: #private::Value = __args;
                    match __index {
                        #(#arms)*
                        _ => ::core::result::Result::Err(#private::Failure::Internal(
                            #private::Box::from("no action has this index"),
                        )),
                    }
                })
            }))
        }
    }
}
