//! `#[derive(ToolErrors)]`: receivers (`attr`) → checked model (here) → code (`codegen`).
//! Every mistake is reported, each on its own tokens; with any, the enum still gets stub impls
//! so that its uses do not add errors of their own.

mod attr;
mod codegen;
mod fmt;

use darling::{FromDeriveInput, FromVariant};
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

use crate::common::diag::{CANONICAL_CODES, is_close_to_any, is_valid_code, unknown};
use crate::common::paths::Krate;
use attr::{Code, EnumReceiver, RetryAfter};

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let derive: syn::DeriveInput = match syn::parse2(input) {
        Ok(derive) => derive,
        Err(e) => return e.to_compile_error(),
    };
    match model(&derive) {
        Ok(model) => codegen::expand(&model),
        Err(errors) => {
            let errors = errors.write_errors();
            let stubs = codegen::fallback(&derive, &Krate::new(crate_path(&derive.attrs)));
            quote!(#errors #stubs)
        }
    }
}

/// `crate = path` from the enum's attributes, read on its own for the stubs of a failed
/// expansion.
fn crate_path(attrs: &[syn::Attribute]) -> Option<syn::Path> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("tool_error"))
        .find_map(|attr| {
            let list = attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            );
            list.ok()?.into_iter().find_map(|meta| match meta {
                syn::Meta::NameValue(nv) if nv.path.is_ident("crate") => match nv.value {
                    syn::Expr::Path(p) => Some(p.path),
                    _ => None,
                },
                _ => None,
            })
        })
}

/// The checked model of the derive.
struct Model {
    krate: Krate,
    ident: syn::Ident,
    generics: syn::Generics,
    skip_display: bool,
    /// `from_envelope`: `FromEnvelope` is generated.
    from_envelope: bool,
    variants: Vec<Variant>,
}

struct Variant {
    ident: syn::Ident,
    /// The fields the generated code reads, as `(member, local)`.
    bound: Vec<(syn::Member, syn::Ident)>,
    /// What the variant becomes: its own envelope, its field's, or INTERNAL_ERROR.
    kind: Kind,
    /// The field that is `Error::source`, as its local.
    source: Option<syn::Ident>,
    /// `From<type>` for the enum, through this field (the variant's only one).
    from: Option<(syn::Member, syn::Type)>,
    /// The `Display` text; `None` for a transparent variant (its field's).
    message: Option<fmt::Template>,
    recovery: Option<fmt::Template>,
    /// `Tool::action` paths, each with at least a tool and an action.
    actions: Vec<syn::Path>,
    /// `(key, local, the field as written)`.
    details: Vec<(String, syn::Ident, syn::Ident)>,
    severity: Option<Severity>,
    retry_after: Option<Delay>,
    /// How a client reads the variant back from its envelope (`from_envelope`).
    readback: Readback,
    /// An error (severity `error` or `critical`) with neither a recovery nor actions, not
    /// marked `no_recovery`: the model is told what failed but not what to do, which the
    /// expansion warns of.
    unguided: bool,
}

/// How `FromEnvelope` makes a variant from an envelope.
enum Readback {
    /// Never: an INTERNAL_ERROR carries no cause.
    Never,
    /// Through its one field's `FromEnvelope` (`transparent`).
    Transparent { member: syn::Member, ty: syn::Type },
    /// By its code, each field from a detail or from the message.
    Coded {
        code: String,
        /// The message template's pieces; empty when the message is not the template
        /// (`skip_display`).
        pieces: Vec<fmt::Piece>,
        fields: Vec<(syn::Member, FieldText, syn::Type)>,
        /// Whether the message must match the template: it gives a field, or another variant
        /// has the same code.
        read_message: bool,
    },
}

/// Where a field's text is in an envelope.
enum FieldText {
    /// The value of this detail.
    Detail(String),
    /// The text of the n-th hole of the message template.
    Hole(usize),
}

/// What a variant becomes.
enum Kind {
    /// Its own envelope, with this code.
    Envelope(Code),
    /// Its one field's envelope, `Display` and source (`transparent`).
    Transparent {
        member: syn::Member,
        local: syn::Ident,
    },
    /// INTERNAL_ERROR through the incident path (`internal`).
    Internal,
}

/// A variant's severity.
#[derive(Clone, Copy)]
enum Severity {
    Warning,
    Error,
    Critical,
}

/// A variant's retry delay: seconds written out, or a field holding the delay.
enum Delay {
    Seconds(syn::LitInt),
    /// The field as written, and the local it is bound to.
    Field {
        field: syn::Ident,
        local: syn::Ident,
    },
}

const SEVERITIES: [&str; 3] = ["warning", "error", "critical"];

fn model(derive: &syn::DeriveInput) -> darling::Result<Model> {
    let not_enum = match &derive.data {
        syn::Data::Enum(_) => None,
        syn::Data::Struct(s) => Some(s.struct_token.span),
        syn::Data::Union(u) => Some(u.union_token.span),
    };
    if let Some(span) = not_enum {
        return Err(darling::Error::custom(
            "#[derive(ToolErrors)] goes on an enum of errors, one variant per error, each with `#[tool_error(CODE, \"message\")]`",
        )
        .with_span(&span));
    }
    let mut errors = darling::Error::accumulator();
    // The enum's own options and its variants are read apart, so that a mistake in one is
    // reported together with the mistakes in the others.
    let receiver = errors.handle(EnumReceiver::from_derive_input(derive));
    let flags = Flags {
        skip_display: receiver
            .as_ref()
            .is_some_and(|r| r.skip_display.is_present()),
        from_envelope: receiver
            .as_ref()
            .is_some_and(|r| r.from_envelope.is_present()),
    };
    if !flags.skip_display {
        thiserror_attributes(derive, &mut errors);
    }
    let mut variants = Vec::new();
    if let syn::Data::Enum(data) = &derive.data {
        for variant in &data.variants {
            let Some(variant) = errors.handle(attr::VariantReceiver::from_variant(variant)) else {
                continue;
            };
            if let Some(model) = variant_model(&variant, flags, &mut errors) {
                variants.push(model);
            }
        }
    }
    errors.finish()?;
    // A code two variants share is told apart by the message.
    let codes: Vec<String> = variants
        .iter()
        .filter_map(|v| match &v.readback {
            Readback::Coded { code, .. } => Some(code.clone()),
            _ => None,
        })
        .collect();
    for variant in &mut variants {
        if let Readback::Coded {
            code,
            pieces,
            read_message,
            ..
        } = &mut variant.readback
        {
            let shared = codes.iter().filter(|c| *c == code).count() > 1;
            *read_message |= shared && !pieces.is_empty();
        }
    }
    let receiver = receiver.ok_or_else(|| {
        darling::Error::custom("#[derive(ToolErrors)] could not read this enum")
            .with_span(&derive.ident)
    })?;
    Ok(Model {
        krate: Krate::new(receiver.krate),
        ident: receiver.ident,
        generics: receiver.generics,
        skip_display: flags.skip_display,
        from_envelope: flags.from_envelope,
        variants,
    })
}

/// thiserror's attributes on an enum that derives its own `Display` and `Error` (no
/// `skip_display`): they would do nothing here, so each is an error naming ours. The derive
/// declares them as helpers only to say so; with `skip_display` they are thiserror's and left
/// alone.
fn thiserror_attributes(derive: &syn::DeriveInput, errors: &mut darling::error::Accumulator) {
    const BESIDE: &str = "(or, with thiserror deriving `Error` beside this enum, add `#[tool_error(skip_display)]` to the enum)";
    let syn::Data::Enum(data) = &derive.data else {
        return;
    };
    for variant in &data.variants {
        for attr in variant.attrs.iter().filter(|a| a.path().is_ident("error")) {
            errors.push(
                darling::Error::custom(format!(
                    "`#[error(..)]` is thiserror's: write the message in `#[tool_error(CODE, \"...\")]` {BESIDE}"
                ))
                .with_span(attr.path()),
            );
        }
        for field in &variant.fields {
            for (name, ours) in [
                ("from", "#[tool_error(from)]"),
                ("source", "#[tool_error(source)]"),
            ] {
                for attr in field.attrs.iter().filter(|a| a.path().is_ident(name)) {
                    errors.push(
                        darling::Error::custom(format!(
                            "`#[{name}]` is thiserror's: write `{ours}` {BESIDE}"
                        ))
                        .with_span(attr.path()),
                    );
                }
            }
        }
    }
}

/// The enum's options that shape its variants.
#[derive(Clone, Copy)]
struct Flags {
    skip_display: bool,
    from_envelope: bool,
}

fn variant_model(
    variant: &attr::VariantReceiver,
    flags: Flags,
    errors: &mut darling::error::Accumulator,
) -> Option<Variant> {
    let attr = attr::variant_attr(variant, errors)?;
    let fields: Vec<(String, syn::Member)> = variant
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(ident) => (
                ident.to_string().trim_start_matches("r#").to_owned(),
                syn::Member::Named(ident.clone()),
            ),
            None => (i.to_string(), syn::Member::Unnamed(syn::Index::from(i))),
        })
        .collect();
    let names: Vec<String> = fields.iter().map(|(name, _)| name.clone()).collect();
    let mut used = std::collections::BTreeSet::new();
    // A field named by `details(..)` or `retry_after`: its local, or an error on the name.
    let field_ref = |errors: &mut darling::error::Accumulator,
                     used: &mut std::collections::BTreeSet<String>,
                     ident: &syn::Ident,
                     what: &str|
     -> Option<syn::Ident> {
        let name = ident.to_string();
        let name = name.trim_start_matches("r#");
        if names.iter().any(|n| n == name) {
            used.insert(name.to_owned());
            Some(fmt::local(name))
        } else {
            errors.push(
                darling::Error::unknown_field_with_alts(name, &names)
                    .with_span(ident)
                    .at(what),
            );
            None
        }
    };

    let special = attr.transparent.is_some() || attr.internal.is_some();
    if let (Some(_), Some(internal)) = (attr.transparent, attr.internal) {
        errors.push(
            darling::Error::custom("a variant is `transparent` (its field's error) or `internal` (INTERNAL_ERROR), not both")
                .with_span(&internal),
        );
    }
    if let Some(at) = attr.transparent.or(attr.internal) {
        let what = if attr.transparent.is_some() {
            "transparent"
        } else {
            "internal"
        };
        let mut given: Vec<&str> = Vec::new();
        if attr.code.is_some() {
            given.push("its code");
        }
        if attr.transparent.is_some() && attr.message.is_some() {
            given.push("its message");
        }
        for (set, name) in [
            (attr.recovery.is_some(), "recovery"),
            (!attr.actions.is_empty(), "actions"),
            (!attr.details.is_empty(), "details"),
            (attr.severity.is_some(), "severity"),
            (attr.retry_after.is_some(), "retry_after"),
            (attr.no_recovery.is_some(), "no_recovery"),
        ] {
            if set {
                given.push(name);
            }
        }
        if !given.is_empty() {
            let why = match what {
                "transparent" => "the envelope, message and source are its field's",
                _ => {
                    "it is answered INTERNAL_ERROR with an incident id, its message going to the log only"
                }
            };
            errors.push(
                darling::Error::custom(format!(
                    "{} `{what}` variant takes nothing else ({why}): remove {}",
                    if what == "internal" { "an" } else { "a" },
                    given.join(", ")
                ))
                .with_span(&at),
            );
        }
    }
    let code = match &attr.code {
        None if special => None,
        None => {
            errors.push(
                darling::Error::custom(
                    "this variant has no error code: write it first, such as `#[tool_error(NOT_FOUND, \"...\")]`, or `code = \"CUSTOM_CODE\"`",
                )
                .with_span(&variant.ident),
            );
            None
        }
        Some(Code::Canonical(ident)) => {
            let name = ident.to_string();
            if CANONICAL_CODES.contains(&name.as_str()) {
                Some(Code::Canonical(ident.clone()))
            } else {
                // One error: the closest canonical code if one is close, else how to write a
                // custom code.
                let err = if is_close_to_any(&name, &CANONICAL_CODES) || !is_valid_code(&name) {
                    unknown("code", &name, &CANONICAL_CODES, ident.span())
                } else {
                    darling::Error::custom(format!(
                        "`{name}` is not a canonical code; a custom code is written as a string: `code = \"{name}\"`"
                    ))
                    .with_span(ident)
                };
                errors.push(err);
                None
            }
        }
        Some(Code::Custom(lit)) => {
            if is_valid_code(&lit.value()) {
                Some(Code::Custom(lit.clone()))
            } else {
                errors.push(
                    darling::Error::custom(format!(
                        "invalid error code {:?}: codes match [A-Z][A-Z0-9_]*, such as \"PAYMENT_DECLINED\"",
                        lit.value()
                    ))
                    .with_span(lit),
                );
                None
            }
        }
    };

    let message = match &attr.message {
        Some(lit) => errors.handle(fmt::template(lit, &names)),
        None if attr.transparent.is_some() => None,
        None => {
            errors.push(
                darling::Error::custom(
                    "this variant has no message: write it after the code, such as `#[tool_error(NOT_FOUND, \"No invoice with ID {id}\")]`",
                )
                .with_span(&variant.ident),
            );
            None
        }
    };
    let recovery = attr
        .recovery
        .as_ref()
        .and_then(|lit| errors.handle(fmt::template(lit, &names)));

    let actions: Vec<syn::Path> = attr
        .actions
        .iter()
        .filter_map(|path| {
            let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
            match segments.split_last() {
                Some((_, tool)) if !tool.is_empty() => Some(path.clone()),
                _ => {
                    errors.push(
                        darling::Error::custom("name the tool and its action, such as `actions(Billing::list_invoices)`")
                            .with_span(path),
                    );
                    None
                }
            }
        })
        .collect();

    let details = attr
        .details
        .iter()
        .filter_map(|(key, field)| {
            let local = field_ref(errors, &mut used, field, "details")?;
            Some((key.to_string(), local, field.clone()))
        })
        .collect();

    let severity = attr.severity.as_ref().and_then(|ident| {
        Some(match ident.to_string().as_str() {
            "warning" => Severity::Warning,
            "error" => Severity::Error,
            "critical" => Severity::Critical,
            other => {
                errors.push(unknown("severity", other, &SEVERITIES, ident.span()));
                return None;
            }
        })
    });

    if let Some(at) = attr.no_recovery.filter(|_| !special) {
        let given: Vec<&str> = [
            (attr.recovery.is_some(), "`recovery`"),
            (!attr.actions.is_empty(), "`actions`"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect();
        if !given.is_empty() {
            errors.push(
                darling::Error::custom(format!(
                    "`no_recovery` says this variant has neither a recovery nor actions, but it has {}: remove `no_recovery`",
                    given.join(" and ")
                ))
                .with_span(&at),
            );
        }
    }
    let retry_after = match &attr.retry_after {
        None => None,
        Some(RetryAfter::Seconds(n)) => Some(Delay::Seconds(n.clone())),
        Some(RetryAfter::Field(ident)) => {
            field_ref(errors, &mut used, ident, "retry_after").map(|local| Delay::Field {
                field: ident.clone(),
                local,
            })
        }
    };

    // The source: a field marked `from` or `source`, or named `source`.
    let marked: Vec<(usize, &attr::FieldReceiver)> = variant
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.from.is_present()
                || f.source.is_present()
                || f.ident.as_ref().is_some_and(|i| i == "source")
        })
        .collect();
    for (_, extra) in marked.iter().skip(1) {
        errors.push(
            darling::Error::custom("a variant has one source: mark one field `from` or `source`")
                .with_span(
                    &extra
                        .ident
                        .as_ref()
                        .map_or_else(|| extra.ty.span(), |i| i.span()),
                ),
        );
    }
    let source_index = marked.first().map(|(i, _)| *i);
    let from_index = marked
        .first()
        .filter(|(_, f)| f.from.is_present())
        .map(|(i, _)| *i);
    if let Some(index) = from_index.filter(|_| variant.fields.len() > 1) {
        let field = &variant.fields.fields[index];
        errors.push(
            darling::Error::custom(
                "a `from` variant holds only the error it is made from: move the other fields out, or drop `from` and build the variant by hand",
            )
            .with_span(&field.ident.as_ref().map_or_else(|| field.ty.span(), |i| i.span())),
        );
    }
    let transparent = match attr.transparent {
        None => None,
        Some(at) if variant.fields.len() != 1 => {
            errors.push(
                darling::Error::custom(
                    "a `transparent` variant holds exactly one field, the error it forwards to",
                )
                .with_span(&at),
            );
            None
        }
        Some(_) => Some(0),
    };
    for index in source_index.iter().chain(transparent.iter()) {
        used.insert(fields[*index].0.clone());
    }

    if let Some(message) = &message {
        for name in message
            .fields
            .iter()
            .chain(recovery.iter().flat_map(|r| r.fields.iter()))
        {
            used.insert(name.clone());
        }
    }
    if message.is_none() && attr.transparent.is_none() {
        return None;
    }
    let kind = match (transparent, attr.internal) {
        (Some(index), _) => Kind::Transparent {
            member: fields[index].1.clone(),
            local: fmt::local(&fields[index].0),
        },
        (None, Some(_)) if attr.transparent.is_none() => Kind::Internal,
        (None, _) if special => return None,
        (None, _) => Kind::Envelope(code?),
    };
    let unguided = matches!(kind, Kind::Envelope(_))
        && !matches!(severity, Some(Severity::Warning))
        && recovery.is_none()
        && actions.is_empty()
        && attr.no_recovery.is_none();
    let readback = readback(variant, &attr, &kind, &fields, flags, errors);
    let source = source_index.map(|i| fmt::local(&fields[i].0));
    let from = from_index.map(|i| (fields[i].1.clone(), variant.fields.fields[i].ty.clone()));
    let bound = fields
        .into_iter()
        .filter(|(name, _)| used.contains(name))
        .map(|(name, member)| (member, fmt::local(&name)))
        .collect();
    Some(Variant {
        ident: variant.ident.clone(),
        bound,
        kind,
        source,
        from,
        message,
        recovery,
        actions,
        details,
        severity,
        retry_after,
        readback,
        unguided,
    })
}

/// How a client reads the variant back (`from_envelope`): every field of a coded variant must
/// be in a detail or shown plainly (`{field}`) in the message; each one that is not is reported.
fn readback(
    variant: &attr::VariantReceiver,
    attr: &attr::VariantAttr,
    kind: &Kind,
    fields: &[(String, syn::Member)],
    flags: Flags,
    errors: &mut darling::error::Accumulator,
) -> Readback {
    let code = match kind {
        Kind::Internal => return Readback::Never,
        Kind::Transparent { member, .. } => {
            return Readback::Transparent {
                member: member.clone(),
                ty: variant.fields.fields[0].ty.clone(),
            };
        }
        Kind::Envelope(Code::Canonical(ident)) => ident.to_string(),
        Kind::Envelope(Code::Custom(lit)) => lit.value(),
    };
    let pieces = match (&attr.message, flags.skip_display) {
        (Some(message), false) => fmt::pieces(&message.value()),
        _ => Vec::new(),
    };
    let holes: Vec<(&str, bool)> = pieces
        .iter()
        .filter_map(|p| match p {
            fmt::Piece::Hole { name, plain } => Some((name.as_str(), *plain)),
            fmt::Piece::Text(_) => None,
        })
        .collect();
    let mut read = Vec::new();
    for ((name, member), field) in fields.iter().zip(variant.fields.iter()) {
        let detail = attr
            .details
            .iter()
            .find(|(_, f)| f.to_string().trim_start_matches("r#") == name);
        let hole = holes.iter().position(|&(n, plain)| n == name && plain);
        let text = match (detail, hole) {
            (Some((key, _)), _) => FieldText::Detail(key.to_string()),
            (None, Some(index)) => FieldText::Hole(index),
            (None, None) => {
                if flags.from_envelope {
                    let source = field.from.is_present()
                        || field.source.is_present()
                        || field.ident.as_ref().is_some_and(|i| i == "source");
                    let why = if source {
                        "the source error does not travel in an envelope: make the variant `internal`, or leave `from_envelope` off the enum".to_owned()
                    } else if flags.skip_display {
                        "name it in `details(..)`".to_owned()
                    } else {
                        format!(
                            "name it in `details(..)`, or show it as `{{{name}}}` in the message"
                        )
                    };
                    let at = field
                        .ident
                        .as_ref()
                        .map_or_else(|| field.ty.span(), |i| i.span());
                    errors.push(
                        darling::Error::custom(format!(
                            "`{name}` cannot be read back from an envelope (the enum is `from_envelope`): {why}"
                        ))
                        .with_span(&at),
                    );
                }
                continue;
            }
        };
        read.push((member.clone(), text, field.ty.clone()));
    }
    let read_message = read.iter().any(|(_, t, _)| matches!(t, FieldText::Hole(_)));
    Readback::Coded {
        code,
        pieces,
        fields: read,
        read_message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: TokenStream) -> darling::Result<Model> {
        model(&syn::parse2(input).unwrap())
    }

    #[test]
    fn errors_without_recovery_or_actions_are_unguided_unless_said_so() {
        let model = run(quote! {
            enum E {
                #[tool_error(CONFLICT, "Paid.")]
                Bare,
                #[tool_error(CONFLICT, "Paid.", severity = critical)]
                Critical,
                #[tool_error(CONFLICT, "Paid.", severity = warning)]
                Warning,
                #[tool_error(CONFLICT, "Paid.", recovery = "Check first.")]
                Recovered,
                #[tool_error(CONFLICT, "Paid.", actions(Billing::get))]
                Pointed,
                #[tool_error(CONFLICT, "Paid: tell the user.", no_recovery)]
                Deliberate,
                #[tool_error(internal, "ledger: {0}")]
                Internal(String),
                #[tool_error(transparent)]
                Inner(Other),
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let unguided: Vec<String> = model
            .variants
            .iter()
            .filter(|v| v.unguided)
            .map(|v| v.ident.to_string())
            .collect();
        assert_eq!(unguided, ["Bare", "Critical"]);
        // Said with a recovery, or on a variant that takes nothing else: one error each.
        let errors = run(quote! {
            enum E {
                #[tool_error(CONFLICT, "Paid.", recovery = "Check first.", actions(Billing::get), no_recovery)]
                Both,
                #[tool_error(internal, "ledger: {0}", no_recovery)]
                Internal(String),
            }
        })
        .err()
        .map(|e| e.len());
        assert_eq!(errors, Some(2));
    }

    #[test]
    fn a_valid_enum_becomes_its_model() {
        let model = run(quote! {
            enum E {
                #[tool_error(NOT_FOUND, "No {id}", recovery = "List {id}", actions(Billing::list), details(requestedId = id), severity = critical, retry_after = wait)]
                Missing { id: String, wait: u64, unused: u8 },
                #[tool_error(code = "CUSTOM_CODE", "Tuple {0}")]
                Tuple(String),
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let missing = &model.variants[0];
        let bound: Vec<String> = missing
            .bound
            .iter()
            .map(|(_, local)| local.to_string())
            .collect();
        assert_eq!(bound, ["__field_id", "__field_wait"]);
        assert_eq!(missing.message.as_ref().unwrap().literal.value(), "No {id}");
        assert_eq!(missing.details.len(), 1);
        assert!(missing.severity.is_some() && missing.retry_after.is_some());
        assert_eq!(
            model.variants[1].message.as_ref().unwrap().literal.value(),
            "Tuple {__field_0}"
        );
    }

    #[test]
    fn every_mistake_is_reported() {
        let err = run(quote! {
            enum E {
                #[tool_error(NOT_FUOND, "No {idd}", severity = fatal, details(k = nope))]
                A { id: String },
                #[tool_error(code = "bad-code")]
                B,
                C,
            }
        })
        .err()
        .expect("mistakes");
        // unknown code, unknown field, unknown severity, unknown detail field, invalid custom
        // code, missing message, missing attribute
        assert_eq!(err.len(), 7, "{err}");
        let text = err.to_string();
        assert!(text.contains("NOT_FOUND"), "{text}");
        assert!(text.contains("critical"), "{text}");
    }

    #[test]
    fn structs_are_refused() {
        assert!(
            run(quote!(
                struct S;
            ))
            .is_err()
        );
    }
}
