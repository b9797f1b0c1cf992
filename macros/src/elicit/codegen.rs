//! The derives' output: `ElicitForm::schema` as a chain of `__private::form` calls, one per
//! field, each value handed over where the field's type is known (so rustc checks its kind
//! there, on the user's tokens); `ElicitChoice` and `FormField` for a choice.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{Choice, Field, Form, Format, Num, PresetKind, Value};
use crate::common::docs;
use crate::common::paths::Krate;

pub(super) fn form(form: &Form) -> TokenStream {
    let private = form.krate.private();
    let ident = &form.ident;
    let (impl_generics, ty_generics, _) = form.generics.split_for_impl();
    let where_clause = form_where(&form.generics, ident, &private);
    let fields = form.fields.iter().map(|f| field(f, &form.krate));
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #private::ElicitForm for #ident #ty_generics #where_clause {
                fn schema() -> #private::ElicitationSchema {
                    #private::form::Form::new()
                        #(#fields)*
                        .build()
                }
            }
        };
    }
}

/// The struct's where clause; for a generic struct, with `ElicitForm`'s own supertraits
/// required of it, so that a field of a type parameter is reported once, at the field (as
/// something a form cannot show), not also as a struct serde cannot read.
fn form_where(
    generics: &syn::Generics,
    ident: &syn::Ident,
    private: &TokenStream,
) -> Option<TokenStream> {
    let (_, ty_generics, where_clause) = generics.split_for_impl();
    let predicates: Vec<&syn::WherePredicate> =
        where_clause.iter().flat_map(|w| &w.predicates).collect();
    let generic = generics
        .params
        .iter()
        .any(|p| matches!(p, syn::GenericParam::Type(_)));
    match (generic, predicates.is_empty()) {
        (false, true) => None,
        (false, false) => Some(quote!(where #(#predicates),*)),
        (true, _) => Some(quote! {
            where #(#predicates,)* #ident #ty_generics: #private::form::Answer
        }),
    }
}

/// `.field("name", field::<Type>().title(..)..)`: the type required to be a form field where it
/// is written, each option spanned at its key so that one its kind does not take is reported
/// there.
fn field(field: &Field, krate: &Krate) -> TokenStream {
    let private = krate.private();
    let ty = &field.ty;
    let at_ty = krate.private_at(ty.span());
    let mut made = quote_spanned!(ty.span()=> #at_ty::form::field::<#ty>());
    // Each method named at the option's key: a kind that does not take it is reported there.
    let call = |name: &str, span: proc_macro2::Span, arg: TokenStream| {
        let method = syn::Ident::new(name, span);
        quote_spanned!(span=> .#method(#arg))
    };
    if let Some(title) = &field.title {
        let title = title.as_str();
        made.extend(quote!(.title(#title)));
    }
    if let Some(doc) = docs::joined(&field.doc) {
        made.extend(quote!(.description(#private::docs(#doc))));
    }
    if let Some(format) = &field.format {
        let variant = match **format {
            Format::Email => quote!(Email),
            Format::Uri => quote!(Uri),
            Format::Date => quote!(Date),
            Format::DateTime => quote!(DateTime),
        };
        made.extend(call(
            "format",
            format.span(),
            quote!(#private::form::Format::#variant),
        ));
    }
    for (length, name) in [
        (&field.min_length, "min_length"),
        (&field.max_length, "max_length"),
    ] {
        if let Some(length) = length {
            let n = **length;
            made.extend(call(name, length.span(), quote!(#n)));
        }
    }
    for (items, name) in [
        (&field.min_items, "min_items"),
        (&field.max_items, "max_items"),
    ] {
        if let Some(items) = items {
            let n = **items;
            made.extend(call(name, items.span(), quote!(#n)));
        }
    }
    for (bound, whole, fraction) in [
        (&field.min, "min_whole", "min_fraction"),
        (&field.max, "max_whole", "max_fraction"),
    ] {
        if let Some(Num { value, expr, key }) = bound {
            let name = match value {
                Value::Whole(_) => whole,
                Value::Fraction(_) => fraction,
            };
            made.extend(call(name, *key, quote!(#expr)));
        }
    }
    if let Some(default) = &field.default {
        let expr = &default.expr;
        made.extend(match &default.kind {
            PresetKind::Number(Value::Whole(_)) => {
                call("default_whole", default.key, quote!(#expr))
            }
            PresetKind::Number(Value::Fraction(_)) => {
                call("default_fraction", default.key, quote!(#expr))
            }
            PresetKind::Items(_) => {
                call("default", default.key, quote!(#private::Vec::from(#expr)))
            }
            PresetKind::Text(_) | PresetKind::Other => call("default", default.key, quote!(#expr)),
        });
    }
    let name = &field.name;
    quote!(.field(#name, #made))
}

pub(super) fn choice(choice: &Choice) -> TokenStream {
    let private = choice.krate.private();
    let ident = &choice.ident;
    let (impl_generics, ty_generics, where_clause) = choice.generics.split_for_impl();
    let choices = choice.variants.iter().map(|v| {
        let value = &v.value;
        let title = match (&v.title, docs::joined(&v.doc)) {
            (Some(title), _) => {
                let title = title.as_str();
                quote!(.titled(#title))
            }
            (None, Some(doc)) => quote!(.titled(#private::docs(#doc))),
            (None, None) => quote!(),
        };
        quote!(#private::Choice::new(#value) #title)
    });
    let arms = choice.variants.iter().map(|v| {
        let variant = &v.ident;
        let value = &v.value;
        quote!(Self::#variant => #value)
    });
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #private::ElicitChoice for #ident #ty_generics #where_clause {
                fn choices() -> #private::Vec<#private::Choice> {
                    #private::Vec::from([#(#choices),*])
                }

                fn value(&self) -> &'static ::core::primitive::str {
                    match self {
                        #(#arms,)*
                    }
                }
            }

            #[automatically_derived]
            impl #impl_generics #private::form::FormField for #ident #ty_generics #where_clause {
                type Default = Self;

                fn shape() -> #private::form::Shape {
                    #private::form::choice_shape::<Self>()
                }

                fn preset(__value: Self) -> #private::form::Preset {
                    #private::form::choice_preset(&__value)
                }
            }
        };
    }
}

/// The stub of a failed `ElicitForm`, so that uses of the form add no errors of their own; the
/// fields' types are still required to be form fields, so that those mistakes are reported
/// with the others.
pub(super) fn form_fallback(
    derive: &syn::DeriveInput,
    krate: &Krate,
    types: &[syn::Type],
) -> TokenStream {
    let private = krate.private();
    let ident = &derive.ident;
    let (impl_generics, ty_generics, _) = derive.generics.split_for_impl();
    let where_clause = form_where(&derive.generics, ident, &private);
    let probes = types.iter().map(|ty| {
        let at_ty = krate.private_at(ty.span());
        quote_spanned!(ty.span()=> let _ = #at_ty::form::field::<#ty>;)
    });
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            impl #impl_generics #private::ElicitForm for #ident #ty_generics #where_clause {
                fn schema() -> #private::ElicitationSchema {
                    #(#probes)*
                    ::core::unreachable!()
                }
            }
        };
    }
}

/// The stubs of a failed `ElicitChoice`, so that forms using the choice add no errors of their
/// own.
pub(super) fn choice_fallback(derive: &syn::DeriveInput, krate: &Krate) -> TokenStream {
    let private = krate.private();
    let ident = &derive.ident;
    let (impl_generics, ty_generics, where_clause) = derive.generics.split_for_impl();
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            impl #impl_generics #private::ElicitChoice for #ident #ty_generics #where_clause {
                fn choices() -> #private::Vec<#private::Choice> {
                    ::core::unreachable!()
                }

                fn value(&self) -> &'static ::core::primitive::str {
                    ::core::unreachable!()
                }
            }

            impl #impl_generics #private::form::FormField for #ident #ty_generics #where_clause {
                type Default = Self;

                fn shape() -> #private::form::Shape {
                    ::core::unreachable!()
                }

                fn preset(_: Self) -> #private::form::Preset {
                    ::core::unreachable!()
                }
            }
        };
    }
}
