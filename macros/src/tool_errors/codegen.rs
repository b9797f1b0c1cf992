//! The derive's output: `Display`, `std::error::Error` (with `source`), `From<Enum> for
//! ToolError`, and `From<Source> for Enum` for `from` fields.

use proc_macro2::TokenStream;
use quote::quote;

use super::attr::Code;
use super::fmt::Piece;
use super::model::{Delay, FieldText, Kind, Model, Readback, Severity, Variant};

pub(super) fn expand(model: &Model) -> TokenStream {
    let Model {
        krate,
        ident,
        generics,
        ..
    } = model;
    let private = krate.private();
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let patterns: Vec<TokenStream> = model.variants.iter().map(|v| pattern(ident, v)).collect();
    let displays = model.variants.iter().map(|v| match (&v.kind, &v.message) {
        (Kind::Transparent { local, .. }, _) => {
            quote!(::core::fmt::Display::fmt(#local, __formatter))
        }
        (_, Some(message)) => {
            let args = template_args(message);
            quote!(::core::write!(__formatter, #args))
        }
        (_, None) => quote!(::core::result::Result::Ok(())),
    });
    // With our `Display`, the message is formatted there only, so a field that cannot be shown
    // is reported once.
    let message = (!model.skip_display).then(|| quote!(#private::ToString::to_string(&__error)));
    let builders = model
        .variants
        .iter()
        .map(|v| builder(v, &private, message.as_ref()));

    // An enum without variants has no value to match on by reference.
    let (display_scrutinee, from_scrutinee) = if model.variants.is_empty() {
        (quote!(*self), quote!(__error))
    } else {
        (quote!(self), quote!(&__error))
    };
    let sources = model.variants.iter().map(|v| match (&v.kind, &v.source) {
        (Kind::Transparent { local, .. }, _) => quote!(
            ::std::error::Error::source(#private::AsDynError::as_dyn_error(#local))
        ),
        (_, Some(local)) => quote!(
            ::core::option::Option::Some(#private::AsDynError::as_dyn_error(#local))
        ),
        (_, None) => quote!(::core::option::Option::None),
    });
    let has_source = model
        .variants
        .iter()
        .any(|v| v.source.is_some() || matches!(v.kind, Kind::Transparent { .. }));
    let error_body = has_source.then(|| {
        let patterns = &patterns;
        quote! {
            fn source(&self) -> ::core::option::Option<&(dyn ::std::error::Error + 'static)> {
                match self {
                    #( #patterns => #sources, )*
                }
            }
        }
    });
    let display = (!model.skip_display).then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics ::core::fmt::Display for #ident #ty_generics #where_clause {
                fn fmt(&self, __formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    match #display_scrutinee {
                        #( #patterns => #displays, )*
                    }
                }
            }

            #[automatically_derived]
            impl #impl_generics ::std::error::Error for #ident #ty_generics #where_clause {
                #error_body
            }
        }
    });
    // Transparent variants hand their field over by value, internal ones the whole error, before
    // the other variants are matched by reference.
    let transparent = model.variants.iter().filter_map(|v| match &v.kind {
        Kind::Transparent { member, .. } => {
            let variant = &v.ident;
            Some(quote! {
                let __error = match __error {
                    #ident::#variant { #member: __inner, .. } => {
                        return ::core::convert::Into::<#private::ToolError>::into(__inner);
                    }
                    __other => __other,
                };
            })
        }
        _ => None,
    });
    let internal: Vec<TokenStream> = model
        .variants
        .iter()
        .filter(|v| matches!(v.kind, Kind::Internal))
        .map(|v| {
            let variant = &v.ident;
            quote!(#ident::#variant { .. })
        })
        .collect();
    let internal = (!internal.is_empty()).then(|| {
        quote! {
            if ::core::matches!(&__error, #(#internal)|*) {
                return #private::ToolError::unexpected(__error);
            }
        }
    });
    let froms = model.variants.iter().filter_map(|v| {
        let (member, ty) = v.from.as_ref()?;
        let variant = &v.ident;
        Some(quote! {
            #[automatically_derived]
            impl #impl_generics ::core::convert::From<#ty> for #ident #ty_generics #where_clause {
                fn from(__source: #ty) -> Self {
                    #ident::#variant { #member: __source }
                }
            }
        })
    });

    let from_envelope = model.from_envelope.then(|| from_envelope(model, &private));
    let unguided = model.variants.iter().filter(|v| v.unguided).map(unguided);

    quote! {
        #(#unguided)*

        #[allow(unused_qualifications, unused_variables)]
        const _: () = {
            #display

            #[automatically_derived]
            impl #impl_generics ::core::convert::From<#ident #ty_generics> for #private::ToolError #where_clause {
                fn from(__error: #ident #ty_generics) -> Self {
                    #(#transparent)*
                    #internal
                    match #from_scrutinee {
                        #( #patterns => #builders, )*
                    }
                }
            }

            #(#froms)*

            #from_envelope
        };
    }
}

/// `FromEnvelope` for the enum: each variant, in declaration order, tried on the envelope.
fn from_envelope(model: &Model, private: &TokenStream) -> TokenStream {
    let Model {
        ident, generics, ..
    } = model;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let some = quote!(::core::option::Option::Some);
    let arms = model.variants.iter().map(|v| {
        let variant = &v.ident;
        match &v.readback {
            Readback::Never => quote!(),
            Readback::Transparent { member, ty } => quote! {
                if let #some(__inner) = <#ty as #private::FromEnvelope>::from_envelope(__envelope) {
                    return #some(#ident::#variant { #member: __inner });
                }
            },
            Readback::Coded {
                code,
                pieces,
                fields,
                read_message,
            } => {
                let inits = fields.iter().map(|(member, text, ty)| {
                    let text = match text {
                        FieldText::Detail(key) => {
                            quote!(#private::reverse::detail(__envelope, #key)?)
                        }
                        FieldText::Hole(index) => quote!(__holes[#index]),
                    };
                    // Spanned at the field's type: rustc reports one that does not parse there.
                    quote::quote_spanned!(syn::spanned::Spanned::span(ty)=>
                        #member: #private::reverse::read::<#ty>(#text)?
                    )
                });
                let make = quote!(#some(#ident::#variant { #(#inits,)* }));
                let read = if *read_message {
                    let pieces = pieces.iter().map(|piece| match piece {
                        Piece::Text(text) => quote!(#private::reverse::Piece::Text(#text)),
                        Piece::Hole { .. } => quote!(#private::reverse::Piece::Hole),
                    });
                    quote! {
                        #private::reverse::matching(
                            &__envelope.message,
                            &[#(#pieces),*],
                            |__holes: &[&str]| -> ::core::option::Option<Self> { #make },
                        )
                    }
                } else {
                    quote!((|| -> ::core::option::Option<Self> { #make })())
                };
                quote! {
                    if #private::reverse::is(__envelope, #code) {
                        if let #some(__error) = #read {
                            return #some(__error);
                        }
                    }
                }
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #private::FromEnvelope for #ident #ty_generics #where_clause {
            fn from_envelope(__envelope: &#private::ParsedError) -> ::core::option::Option<Self> {
                #(#arms)*
                ::core::option::Option::None
            }
        }
    }
}

/// The warning of an error variant with neither a recovery nor actions: a proc macro cannot
/// emit a warning on stable, so the expansion uses a deprecated constant named after the
/// variant, at the variant's name, and rustc's `deprecated` lint says what to write (a
/// crate that denies warnings gets it as an error, like any other).
fn unguided(variant: &Variant) -> TokenStream {
    let ident = &variant.ident;
    let note = format!(
        "`{ident}` is an error with neither a `recovery` nor `actions`: the model is told what failed but not what to do next. \
         Add `recovery = \"...\"` or `actions(Tool::action)` to its `#[tool_error(..)]`, \
         or `no_recovery` when its message already says what to do"
    );
    quote::quote_spanned! {ident.span()=>
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #ident: () = ();
            #ident
        };
    }
}

/// `Enum::Variant { id: __field_id, .. }`, binding only what the generated code reads.
fn pattern(enum_ident: &syn::Ident, variant: &Variant) -> TokenStream {
    let ident = &variant.ident;
    let bound = variant
        .bound
        .iter()
        .map(|(member, local)| quote!(#member: #local));
    quote!(#enum_ident::#ident { #(#bound,)* .. })
}

/// A template as `format!` arguments: the literal, then its named fields.
fn template_args(template: &super::fmt::Template) -> TokenStream {
    let literal = &template.literal;
    let named = template
        .named
        .iter()
        .map(|(name, local)| quote!(#name = #local));
    quote!(#literal #(, #named)*)
}

fn builder(variant: &Variant, private: &TokenStream, shown: Option<&TokenStream>) -> TokenStream {
    let code = match &variant.kind {
        Kind::Envelope(Code::Canonical(ident)) => quote!(#private::ErrorCode::#ident),
        Kind::Envelope(Code::Custom(lit)) => quote!(#private::ErrorCode::from_static(#lit)),
        // Handled before the match, by value.
        Kind::Transparent { .. } | Kind::Internal => return quote!(::core::unreachable!()),
    };
    let message = match (shown, &variant.message) {
        (Some(shown), _) => shown.clone(),
        (None, Some(message)) => {
            let args = template_args(message);
            quote!(#private::format!(#args))
        }
        (None, None) => quote!(#private::String::new()),
    };
    let recovery = variant.recovery.iter().map(|r| {
        let args = template_args(r);
        quote!(.suggest(#private::format!(#args)))
    });
    let actions = (!variant.actions.is_empty()).then(|| {
        // `Tool::action` names the generated constant `Tool::ACTIONS.action`, spanned at the
        // action so that a misspelt one is reported there.
        let actions = variant.actions.iter().filter_map(|path| {
            let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
            let (last, tool) = segments.split_last()?;
            let action = &last.ident;
            let leading = path.leading_colon;
            Some(quote::quote_spanned!(action.span()=> #leading #(#tool)::*::ACTIONS.#action))
        });
        quote!(.actions([#(#actions),*]))
    });
    let details = variant.details.iter().map(|(key, local, field)| {
        // Spanned at the field as written, where rustc reports a field that cannot be shown.
        let local = syn::Ident::new(&local.to_string(), field.span());
        quote::quote_spanned!(field.span()=> .detail(#key, #private::detail_value(#local)))
    });
    let severity = variant.severity.map(|s| {
        let level = match s {
            Severity::Warning => quote!(Warning),
            Severity::Error => quote!(Error),
            Severity::Critical => quote!(Critical),
        };
        quote!(.severity(#private::Severity::#level))
    });
    // The whole `.retry_after(..)` call, spanned at a field so that rustc reports a field that
    // is not a duration there.
    let retry_after = variant.retry_after.as_ref().map(|delay| match delay {
        Delay::Seconds(n) => quote!(.retry_after(#n)),
        Delay::Field { field, local } => {
            let local = syn::Ident::new(&local.to_string(), field.span());
            quote::quote_spanned!(field.span()=> .retry_after(#private::core::clone::Clone::clone(#local)))
        }
    });
    quote! {
        #private::error(#code, #message)
            #(#recovery)* #actions #(#details)* #severity #retry_after
    }
}

/// Stubs emitted next to the errors, so that uses of the enum (`?` into a `ToolError`, `{}`)
/// add no errors of their own. They are never run: the crate does not compile.
pub(super) fn fallback(
    derive: &syn::DeriveInput,
    krate: &crate::common::paths::Krate,
) -> TokenStream {
    let ident = &derive.ident;
    let private = krate.private();
    let (impl_generics, ty_generics, where_clause) = derive.generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            impl #impl_generics ::core::fmt::Display for #ident #ty_generics #where_clause {
                fn fmt(&self, _: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    ::core::unreachable!()
                }
            }
            impl #impl_generics ::std::error::Error for #ident #ty_generics #where_clause {}
            impl #impl_generics ::core::convert::From<#ident #ty_generics> for #private::ToolError #where_clause {
                fn from(_: #ident #ty_generics) -> Self {
                    ::core::unreachable!()
                }
            }
        };
    }
}
