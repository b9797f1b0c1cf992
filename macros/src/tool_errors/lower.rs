//! The checked model of the derive, built from the receivers: each variant's fields bound,
//! its texts parsed, its options checked (`validate`), how it is read back.

use darling::{FromDeriveInput, FromVariant};
use syn::spanned::Spanned;

use super::attr::{self, Code, EnumReceiver, RetryAfter};
use super::fmt;
use super::model::{Delay, FieldText, Kind, Model, Readback, Severity, Variant};
use super::validate;
use crate::common::paths::Krate;

pub(super) fn model(derive: &syn::DeriveInput) -> darling::Result<Model> {
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
        validate::thiserror_attributes(derive, &mut errors);
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

    let special = validate::special(&attr, errors);
    let code = validate::code(&attr, variant, special, errors);

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

    let actions = validate::actions(&attr, errors);

    let details = attr
        .details
        .iter()
        .filter_map(|(key, field)| {
            let local = field_ref(errors, &mut used, field, "details")?;
            Some((key.to_string(), local, field.clone()))
        })
        .collect();

    let severity = validate::severity(&attr, errors);
    validate::no_recovery(&attr, special, errors);
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

    let (source_index, from_index, transparent) = validate::sources(variant, &attr, errors);
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
mod tests;
