//! The output of `#[tool]`, next to the user's item: the actions struct (`{Type}Actions` and
//! `{Type}::ACTIONS`), the unit struct of a single-action tool, and `impl Tool`.

mod params;
mod router;

use proc_macro2::TokenStream;
use quote::quote;

use super::model::{Action, Shape, Tool};

pub(super) fn expand(tool: &Tool) -> TokenStream {
    let private = tool.krate.private();
    let self_ident = &tool.self_ident;
    let single = single_struct(tool);
    let actions = actions_struct(tool);
    let definition = definition(tool);
    let call = router::call(tool);
    quote! {
        #single
        #actions

        #[allow(unused_qualifications)]
        const _: () = {
            #[automatically_derived]
            impl #private::Tool for #self_ident {
                fn definition(&self) -> &#private::ToolDef {
                    static DEFINITION: #private::OnceLock<#private::ToolDef> = #private::OnceLock::new();
                    DEFINITION.get_or_init(|| #definition)
                }

                #call
            }
        };
    }
}

/// The unit struct that is a single-action tool.
fn single_struct(tool: &Tool) -> Option<TokenStream> {
    let Shape::Single { vis } = &tool.shape else {
        return None;
    };
    let ident = &tool.self_ident;
    let doc = format!(
        "The `{}` tool, made by `#[tool]` from its function: register it with a server.",
        tool.name
    );
    Some(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #ident;
    })
}

/// `{Type}Actions`, with one `ActionRef` per action, and `{Type}::ACTIONS`.
fn actions_struct(tool: &Tool) -> TokenStream {
    let private = tool.krate.private();
    let Tool {
        self_ident,
        actions_ident,
        ..
    } = tool;
    let vis = match &tool.shape {
        Shape::Single { vis } => quote!(#vis),
        Shape::Group => quote!(pub),
    };
    let fields = tool.actions.iter().map(|a| &a.method);
    let values = tool.actions.iter().map(|a| {
        let method = &a.method;
        let qualified = qualified(tool, a);
        quote!(#method: #private::ActionRef::new(#qualified))
    });
    let docs = tool
        .actions
        .iter()
        .map(|a| format!("The `{}` action.", qualified(tool, a)));
    let struct_doc = format!(
        "The actions of [`{self_ident}`], to name in `.actions(..)` with compile-time checking."
    );
    quote! {
        #[doc = #struct_doc]
        #[derive(Debug, Clone, Copy)]
        #[allow(dead_code, non_snake_case)]
        #vis struct #actions_ident {
            #( #[doc = #docs] pub #fields: #private::ActionRef, )*
        }

        #[allow(dead_code, unused_qualifications)]
        impl #self_ident {
            /// The actions of this tool, to name in `.actions(..)`.
            pub const ACTIONS: #actions_ident = #actions_ident { #(#values,)* };
        }
    }
}

fn qualified(tool: &Tool, action: &Action) -> String {
    match tool.shape {
        Shape::Single { .. } => tool.name.clone(),
        Shape::Group => format!("{}.{}", tool.name, action.name),
    }
}

/// The `ToolDef` expression.
fn definition(tool: &Tool) -> TokenStream {
    let private = tool.krate.private();
    let actions = tool
        .actions
        .iter()
        .map(|a| action_def(a, &private, &tool.krate));
    let mut def = match &tool.shape {
        Shape::Single { .. } => {
            let action = actions.into_iter().next();
            quote!(#private::ToolDef::single(#action))
        }
        Shape::Group => {
            let name = &tool.name;
            quote!(#private::ToolDef::new(#name) #(.action(#actions))*)
        }
    };
    if let Some(description) = &tool.description {
        def.extend(quote!(.description(#private::docs(#description))));
    }
    if let Some(title) = &tool.title {
        def.extend(quote!(.title(#title)));
    }
    if let Some((discriminator, _)) = &tool.discriminator {
        def.extend(quote!(.discriminator(#discriminator)));
    }
    if let Some((active, queued)) = tool.concurrency {
        def.extend(quote!(.concurrency(#active, #queued)));
    }
    if let Some((max, window_ms)) = tool.rate_limit {
        def.extend(quote!(.rate_limit(#max, #private::Duration::from_millis(#window_ms))));
    }
    def.extend(scopes(&tool.scopes));
    match tool.flat {
        Some(true) => def.extend(quote!(.exposition(#private::Exposition::Flat))),
        Some(false) => def.extend(quote!(.exposition(#private::Exposition::Grouped))),
        None => {}
    }
    quote!(#def.build())
}

fn action_def(
    action: &Action,
    private: &TokenStream,
    krate: &crate::common::paths::Krate,
) -> TokenStream {
    let tool_private_at = |ty: &syn::Type| krate.private_at(syn::spanned::Spanned::span(ty));
    let name = &action.name;
    let mut def = match &action.args {
        Some(ty) => {
            let private = tool_private_at(ty);
            quote::quote_spanned!(syn::spanned::Spanned::span(ty)=> #private::action_def::<#ty>(#name))
        }
        None => quote!(#private::ActionDef::without_arguments(#name)),
    };
    if let Some(description) = &action.description {
        def.extend(quote!(.description(#private::docs(#description))));
    }
    for (on, hint) in [
        (action.read_only, quote!(read_only)),
        (action.destructive, quote!(destructive)),
        (action.idempotent, quote!(idempotent)),
        (action.open_world, quote!(open_world)),
    ] {
        if on {
            def.extend(quote!(.#hint()));
        }
    }
    if let Some(deprecated) = &action.deprecated {
        let note = match &deprecated.note {
            Some(note) => quote!(::core::option::Option::Some(#note)),
            None => quote!(::core::option::Option::None),
        };
        let replacement = match &deprecated.replacement {
            Some(r) => {
                let r = r.to_string();
                quote!(::core::option::Option::Some(#r))
            }
            None => quote!(::core::option::Option::None),
        };
        def.extend(quote!(.deprecated(#note, #replacement)));
    }
    if let Some((active, queued)) = action.concurrency {
        def.extend(quote!(.concurrency(#active, #queued)));
    }
    if let Some((max, window_ms)) = action.rate_limit {
        def.extend(quote!(.rate_limit(#max, #private::Duration::from_millis(#window_ms))));
    }
    def.extend(scopes(&action.scopes));
    if let Some(ms) = action.timeout_ms {
        def.extend(quote!(.timeout(#private::Duration::from_millis(#ms))));
    }
    if action.open_arguments {
        def.extend(quote!(.open_arguments()));
    }
    if let Some(task) = &action.task {
        let required = task.required;
        let support = match task.after.is_empty() {
            true if required => quote!(#private::TaskSupport::Required),
            true => quote!(#private::TaskSupport::Optional),
            false => {
                let keys = &task.after;
                quote!(#private::TaskSupport::AfterInputs {
                    keys: #private::Vec::from([#(#private::ToString::to_string(#keys)),*]),
                    required: #required,
                })
            }
        };
        def.extend(quote!(.task(#support)));
    }
    if let Some(ms) = action.heartbeat_ms {
        def.extend(quote!(.heartbeat(#private::Duration::from_millis(#ms))));
    }
    if let Some(title) = &action.title {
        def.extend(quote!(.title(#title)));
    }
    for (name, _) in &action.user_fields {
        def.extend(quote!(.user_field(#name)));
    }
    if !action.needs.is_empty() {
        let asks = action
            .needs
            .iter()
            .map(|ask| quote::format_ident!("{}", ask));
        def.extend(quote!(.needs([#(#private::Ask::#asks),*])));
    }
    for header in &action.headers {
        let (field, name) = (&header.field, &header.name);
        def.extend(quote!(.header(#field, #name)));
    }
    if let Some(ty) = &action.output {
        // Spanned at the success type: one without a JSON Schema is reported there.
        let span = syn::spanned::Spanned::span(ty);
        let private = krate.private_at(span);
        def = quote::quote_spanned!(span=> #private::with_output::<#ty>(#def));
    }
    def
}

/// `.scopes(["invoices:read", ..])`, when any scope is written.
fn scopes(scopes: &[(String, proc_macro2::Span)]) -> Option<TokenStream> {
    if scopes.is_empty() {
        return None;
    }
    let scopes = scopes.iter().map(|(scope, _)| scope);
    Some(quote!(.scopes([#(#scopes),*])))
}

/// Stubs emitted next to errors: the actions struct and an `impl Tool` that is never run, so
/// that registrations and `actions(..)` references add no errors of their own.
pub(super) fn fallback(tool: &Tool) -> TokenStream {
    let private = tool.krate.private();
    let self_ident = &tool.self_ident;
    let single = single_struct(tool);
    let actions = actions_struct(tool);
    quote! {
        #single
        #actions

        #[allow(unused_qualifications)]
        const _: () = {
            impl #private::Tool for #self_ident {
                fn definition(&self) -> &#private::ToolDef {
                    ::core::unreachable!()
                }

                fn invoke(
                    &self,
                    _: ::core::primitive::usize,
                    _: #private::Value,
                    _: #private::Context,
                ) -> #private::BoxFuture<'_, ::core::result::Result<#private::CallToolResult, #private::Failure>> {
                    ::core::unreachable!()
                }
            }
        };
    }
}
