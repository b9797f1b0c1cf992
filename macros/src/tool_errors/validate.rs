//! The checks of one variant's options on their own: `transparent` and `internal` alone, the
//! code, the actions, the severity, `no_recovery`, the source; and thiserror's attributes where
//! they would do nothing. Each mistake is pushed to `errors`, and what is right is returned.

use syn::spanned::Spanned;

use super::attr::{self, Code};
use super::model::Severity;
use mcp_fusion_rules::close::closest;
use mcp_fusion_rules::codes::{CANONICAL_CODES, is_canonical, is_valid_code};

use crate::common::diag::unknown;

const SEVERITIES: [&str; 3] = ["warning", "error", "critical"];

/// Whether the variant is `transparent` or `internal`, each of which takes no other option.
pub(super) fn special(attr: &attr::VariantAttr, errors: &mut darling::error::Accumulator) -> bool {
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
    special
}

/// The variant's code: a canonical one, or a custom one that is well formed (none for a
/// `transparent` or `internal` variant).
pub(super) fn code(
    attr: &attr::VariantAttr,
    variant: &attr::VariantReceiver,
    special: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<Code> {
    match &attr.code {
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
            if is_canonical(&name) {
                Some(Code::Canonical(ident.clone()))
            } else {
                // One error: the closest canonical code if one is close, else how to write a
                // custom code.
                // The suggestion is the runtime's own "close" rule (containment and
                // abbreviation included), not only darling's similarity.
                let err = if let Some(best) = closest(&name, &CANONICAL_CODES) {
                    darling::Error::custom(format!(
                        "Unknown value: `{name}`. Did you mean `{best}`?"
                    ))
                    .with_span(ident)
                } else if !is_valid_code(&name) {
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
    }
}

/// The actions named: each a path to a tool and its action.
pub(super) fn actions(
    attr: &attr::VariantAttr,
    errors: &mut darling::error::Accumulator,
) -> Vec<syn::Path> {
    attr
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
        .collect()
}

/// The severity, when one is given.
pub(super) fn severity(
    attr: &attr::VariantAttr,
    errors: &mut darling::error::Accumulator,
) -> Option<Severity> {
    attr.severity.as_ref().and_then(|ident| {
        Some(match ident.to_string().as_str() {
            "warning" => Severity::Warning,
            "error" => Severity::Error,
            "critical" => Severity::Critical,
            other => {
                errors.push(unknown("severity", other, &SEVERITIES, ident.span()));
                return None;
            }
        })
    })
}

/// `no_recovery` on a variant that has a recovery or actions.
pub(super) fn no_recovery(
    attr: &attr::VariantAttr,
    special: bool,
    errors: &mut darling::error::Accumulator,
) {
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
}

/// The variant's source field, its `from` field, and its `transparent` field, as indices.
pub(super) fn sources(
    variant: &attr::VariantReceiver,
    attr: &attr::VariantAttr,
    errors: &mut darling::error::Accumulator,
) -> (Option<usize>, Option<usize>, Option<usize>) {
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
    (source_index, from_index, transparent)
}

/// thiserror's attributes on an enum that derives its own `Display` and `Error` (no
/// `skip_display`): they would do nothing here, so each is an error naming ours. The derive
/// declares them as helpers only to say so; with `skip_display` they are thiserror's and left
/// alone.
pub(super) fn thiserror_attributes(
    derive: &syn::DeriveInput,
    errors: &mut darling::error::Accumulator,
) {
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
