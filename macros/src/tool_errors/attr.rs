//! The derive's receivers: the enum, its variants and fields, and the `#[tool_error(..)]`
//! attribute of a variant (positional code and message, then named options).

use darling::ast::NestedMeta;
use darling::util::Flag;
use darling::{FromDeriveInput, FromField, FromMeta, FromVariant};
use syn::spanned::Spanned;

#[derive(FromDeriveInput)]
#[darling(attributes(tool_error), supports(enum_any))]
pub(super) struct EnumReceiver {
    pub(super) ident: syn::Ident,
    pub(super) generics: syn::Generics,
    /// `#[tool_error(crate = path)]`: where the runtime is, when renamed or re-exported.
    #[darling(rename = "crate")]
    pub(super) krate: Option<syn::Path>,
    /// `#[tool_error(skip_display)]`: the enum has its own `Display` and `Error`.
    pub(super) skip_display: Flag,
    /// `#[tool_error(from_envelope)]`: clients can read the enum back from its envelopes.
    pub(super) from_envelope: Flag,
}

#[derive(FromVariant)]
#[darling(forward_attrs(tool_error))]
pub(super) struct VariantReceiver {
    pub(super) ident: syn::Ident,
    pub(super) fields: darling::ast::Fields<FieldReceiver>,
    pub(super) attrs: Vec<syn::Attribute>,
}

#[derive(FromField)]
#[darling(attributes(tool_error))]
pub(super) struct FieldReceiver {
    pub(super) ident: Option<syn::Ident>,
    pub(super) ty: syn::Type,
    /// `#[tool_error(from)]`: `From<this field's type>` for the enum; the field is the source.
    pub(super) from: Flag,
    /// `#[tool_error(source)]`: the field is `Error::source` (as is a field named `source`).
    pub(super) source: Flag,
}

/// The code of a variant: a canonical name (`NOT_FOUND`) or a custom literal.
pub(super) enum Code {
    Canonical(syn::Ident),
    Custom(syn::LitStr),
}

/// `retry_after = 30` or `retry_after = field`.
pub(super) enum RetryAfter {
    Seconds(syn::LitInt),
    Field(syn::Ident),
}

/// A variant's `#[tool_error(..)]`.
#[derive(Default)]
pub(super) struct VariantAttr {
    pub(super) code: Option<Code>,
    pub(super) message: Option<syn::LitStr>,
    pub(super) recovery: Option<syn::LitStr>,
    pub(super) actions: Vec<syn::Path>,
    pub(super) details: Vec<(syn::Ident, syn::Ident)>,
    pub(super) severity: Option<syn::Ident>,
    pub(super) retry_after: Option<RetryAfter>,
    /// `transparent`: the variant is its one field's error, `Display`, source and envelope.
    pub(super) transparent: Option<proc_macro2::Span>,
    /// `internal`: answered INTERNAL_ERROR through the incident path, the variant as the cause.
    pub(super) internal: Option<proc_macro2::Span>,
    /// `no_recovery`: an error whose message says all the model needs, deliberately without
    /// a recovery or actions.
    pub(super) no_recovery: Option<proc_macro2::Span>,
}

const KEYS: &[&str] = &[
    "transparent",
    "internal",
    "no_recovery",
    "code",
    "message",
    "recovery",
    "actions",
    "details",
    "severity",
    "retry_after",
];

impl FromMeta for VariantAttr {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut attr = VariantAttr::default();
        for item in items {
            errors.handle(attr.item(item));
        }
        errors.finish_with(attr)
    }
}

impl VariantAttr {
    fn item(&mut self, item: &NestedMeta) -> darling::Result<()> {
        match item {
            // `NOT_FOUND`: the code, written first.
            NestedMeta::Meta(syn::Meta::Path(path)) => {
                let ident = path.require_ident().map_err(darling::Error::from)?;
                match ident.to_string().as_str() {
                    "transparent" => set(&mut self.transparent, ident.span(), "transparent", path),
                    "internal" => set(&mut self.internal, ident.span(), "internal", path),
                    "no_recovery" => set(&mut self.no_recovery, ident.span(), "no_recovery", path),
                    _ => set(&mut self.code, Code::Canonical(ident.clone()), "code", path),
                }
            }
            // `"message {field}"`: the message.
            NestedMeta::Lit(syn::Lit::Str(lit)) => {
                set(&mut self.message, lit.clone(), "message", lit)
            }
            NestedMeta::Lit(other) => Err(darling::Error::custom(
                "expected the message as a string literal, such as \"No invoice with ID {id}\"",
            )
            .with_span(other)),
            NestedMeta::Meta(syn::Meta::NameValue(nv)) => self.name_value(nv),
            NestedMeta::Meta(syn::Meta::List(list)) => self.list(list),
            NestedMeta::NameValueInvalidExpr(invalid) => Err(darling::Error::custom(format!(
                "expected a value after `{} =`",
                quote::quote!(#invalid.path)
            ))
            .with_span(&invalid.value)),
        }
    }

    fn name_value(&mut self, nv: &syn::MetaNameValue) -> darling::Result<()> {
        let key = key_of(&nv.path)?;
        let value = &nv.value;
        match key.as_str() {
            "code" => match value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(lit), .. }) => {
                    set(&mut self.code, Code::Custom(lit.clone()), "code", nv)
                }
                syn::Expr::Path(p) => {
                    let ident = p.path.require_ident().map_err(darling::Error::from)?;
                    set(&mut self.code, Code::Canonical(ident.clone()), "code", nv)
                }
                other => Err(darling::Error::custom(
                    "expected a canonical code (`code = NOT_FOUND`) or a custom one (`code = \"PAYMENT_DECLINED\"`)",
                )
                .with_span(other)),
            },
            "message" => set(&mut self.message, lit_str(value)?, "message", nv),
            "recovery" => set(&mut self.recovery, lit_str(value)?, "recovery", nv),
            "severity" => set(&mut self.severity, ident_of(value, "severity = critical")?, "severity", nv),
            "retry_after" => {
                let retry = match value {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => RetryAfter::Seconds(n.clone()),
                    syn::Expr::Path(_) => RetryAfter::Field(ident_of(value, "retry_after = 30")?),
                    other => {
                        return Err(darling::Error::custom(
                            "expected whole seconds (`retry_after = 30`) or a field (`retry_after = wait`)",
                        )
                        .with_span(other));
                    }
                };
                set(&mut self.retry_after, retry, "retry_after", nv)
            }
            _ => Err(unknown_key(&key, &nv.path)),
        }
    }

    fn list(&mut self, list: &syn::MetaList) -> darling::Result<()> {
        let key = key_of(&list.path)?;
        match key.as_str() {
            "actions" => {
                let strings = list.parse_args_with(
                    syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated,
                );
                if let Some(first) = strings.ok().and_then(|s| s.into_iter().next()) {
                    let value = first.value();
                    let example = match value.split_once('.') {
                        Some((tool, action)) => {
                            format!("{}::{action}", mcp_fusion_rules::case::upper_camel(tool))
                        }
                        None => format!("Tool::{value}"),
                    };
                    return Err(darling::Error::custom(format!(
                        "name an action as a path to it, `actions({example})`, not a string: a path is checked when the crate compiles, a string is not"
                    ))
                    .with_span(&first));
                }
                let paths = list
                    .parse_args_with(
                        syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                    )
                    .map_err(|e| {
                        darling::Error::from(e)
                            .at("actions")
                            .with_span(&list.tokens.span())
                    })?;
                self.actions.extend(paths);
                Ok(())
            }
            "details" => {
                let mut errors = darling::Error::accumulator();
                for item in NestedMeta::parse_meta_list(list.tokens.clone())? {
                    errors.handle_in(|| {
                        let NestedMeta::Meta(syn::Meta::NameValue(nv)) = &item else {
                            return Err(darling::Error::custom(
                                "expected `key = field`, such as `details(requestedId = id)`",
                            )
                            .with_span(&item));
                        };
                        let key = nv
                            .path
                            .require_ident()
                            .map_err(darling::Error::from)?
                            .clone();
                        self.details
                            .push((key, ident_of(&nv.value, "details(requestedId = id)")?));
                        Ok(())
                    });
                }
                errors.finish()
            }
            _ => Err(unknown_key(&key, &list.path)),
        }
    }
}

fn key_of(path: &syn::Path) -> darling::Result<String> {
    path.get_ident()
        .map(ToString::to_string)
        .ok_or_else(|| unknown_key(&quote::quote!(#path).to_string(), path))
}

fn unknown_key(key: &str, at: &impl Spanned) -> darling::Error {
    darling::Error::unknown_field_with_alts(key, KEYS).with_span(&at.span())
}

fn set<T>(slot: &mut Option<T>, value: T, name: &str, at: &impl Spanned) -> darling::Result<()> {
    if slot.is_some() {
        return Err(darling::Error::duplicate_field(name).with_span(&at.span()));
    }
    *slot = Some(value);
    Ok(())
}

fn lit_str(value: &syn::Expr) -> darling::Result<syn::LitStr> {
    match value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => Ok(lit.clone()),
        other => Err(darling::Error::custom("expected a string literal").with_span(other)),
    }
}

fn ident_of(value: &syn::Expr, example: &str) -> darling::Result<syn::Ident> {
    match value {
        syn::Expr::Path(p) => match p.path.get_ident() {
            Some(ident) => Ok(ident.clone()),
            None => Err(
                darling::Error::custom(format!("expected a name, such as `{example}`"))
                    .with_span(p),
            ),
        },
        other => Err(
            darling::Error::custom(format!("expected a name, such as `{example}`"))
                .with_span(other),
        ),
    }
}

/// Reads a variant's `#[tool_error(..)]`; `None` (with the error recorded) when it is absent.
pub(super) fn variant_attr(
    variant: &VariantReceiver,
    errors: &mut darling::error::Accumulator,
) -> Option<VariantAttr> {
    let mut attrs = variant
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("tool_error"));
    let Some(first) = attrs.next() else {
        errors.push(
            darling::Error::custom(
                "this variant has no `#[tool_error(..)]`: add its code and message, such as `#[tool_error(NOT_FOUND, \"No invoice with ID {id}\")]`",
            )
            .with_span(&variant.ident),
        );
        return None;
    };
    for extra in attrs {
        errors.push(
            darling::Error::custom("a variant takes one `#[tool_error(..)]`; merge them")
                .with_span(extra.path()),
        );
    }
    errors.handle(VariantAttr::from_meta(&first.meta).map_err(|e| e.with_span(&first.span())))
}
