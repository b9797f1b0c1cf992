//! The checked model of `#[derive(ToolErrors)]`: what each variant becomes, with no tokens of
//! the input left to read.

use super::attr::Code;
use super::fmt;
use crate::common::paths::Krate;

/// The checked model of the derive.
pub(super) struct Model {
    pub(super) krate: Krate,
    pub(super) ident: syn::Ident,
    pub(super) generics: syn::Generics,
    pub(super) skip_display: bool,
    /// `from_envelope`: `FromEnvelope` is generated.
    pub(super) from_envelope: bool,
    pub(super) variants: Vec<Variant>,
}

pub(super) struct Variant {
    pub(super) ident: syn::Ident,
    /// The fields the generated code reads, as `(member, local)`.
    pub(super) bound: Vec<(syn::Member, syn::Ident)>,
    /// What the variant becomes: its own envelope, its field's, or INTERNAL_ERROR.
    pub(super) kind: Kind,
    /// The field that is `Error::source`, as its local.
    pub(super) source: Option<syn::Ident>,
    /// `From<type>` for the enum, through this field (the variant's only one).
    pub(super) from: Option<(syn::Member, syn::Type)>,
    /// The `Display` text; `None` for a transparent variant (its field's).
    pub(super) message: Option<fmt::Template>,
    pub(super) recovery: Option<fmt::Template>,
    /// `Tool::action` paths, each with at least a tool and an action.
    pub(super) actions: Vec<syn::Path>,
    /// `(key, local, the field as written)`.
    pub(super) details: Vec<(String, syn::Ident, syn::Ident)>,
    pub(super) severity: Option<Severity>,
    pub(super) retry_after: Option<Delay>,
    /// How a client reads the variant back from its envelope (`from_envelope`).
    pub(super) readback: Readback,
    /// An error (severity `error` or `critical`) with neither a recovery nor actions, not
    /// marked `no_recovery`: the model is told what failed but not what to do, which the
    /// expansion warns of.
    pub(super) unguided: bool,
}

/// How `FromEnvelope` makes a variant from an envelope.
pub(super) enum Readback {
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
pub(super) enum FieldText {
    /// The value of this detail.
    Detail(String),
    /// The text of the n-th hole of the message template.
    Hole(usize),
}

/// What a variant becomes.
pub(super) enum Kind {
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
pub(super) enum Severity {
    Warning,
    Error,
    Critical,
}

/// A variant's retry delay: seconds written out, or a field holding the delay.
pub(super) enum Delay {
    Seconds(syn::LitInt),
    /// The field as written, and the local it is bound to.
    Field {
        field: syn::Ident,
        local: syn::Ident,
    },
}
