//! The checked models of both derives: owned values with the spans errors point at, and the
//! user's own syntax where rustc is to check it (field types, values written in attributes).
//! No tokens are produced here.

use darling::util::SpannedValue;
use proc_macro2::Span;

use crate::common::paths::Krate;

/// A `#[derive(ElicitForm)]` struct.
pub(super) struct Form {
    pub(super) krate: Krate,
    pub(super) ident: syn::Ident,
    pub(super) generics: syn::Generics,
    /// The fields serde reads (`skip` ones are not in the form), in declaration order.
    pub(super) fields: Vec<Field>,
}

/// One field of a form.
pub(super) struct Field {
    /// The property's name: the field's, as serde reads it.
    pub(super) name: String,
    /// Where the field's name is written.
    pub(super) at: Span,
    pub(super) ty: syn::Type,
    /// Its doc comment, as written (the property's description).
    pub(super) doc: Vec<syn::Expr>,
    pub(super) title: Option<SpannedValue<String>>,
    pub(super) format: Option<SpannedValue<Format>>,
    pub(super) min_length: Option<SpannedValue<u32>>,
    pub(super) max_length: Option<SpannedValue<u32>>,
    pub(super) min: Option<Num>,
    pub(super) max: Option<Num>,
    pub(super) min_items: Option<SpannedValue<u64>>,
    pub(super) max_items: Option<SpannedValue<u64>>,
    pub(super) default: Option<Preset>,
}

/// A text field's format, among those MCP elicitation allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

pub(super) const FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

impl Format {
    pub(super) fn named(name: &str) -> Option<Format> {
        Some(match name {
            "email" => Format::Email,
            "uri" => Format::Uri,
            "date" => Format::Date,
            "date-time" => Format::DateTime,
            _ => return None,
        })
    }
}

/// A number written in an attribute: its value for the checks, the literal as written for
/// rustc (which reads it as the field's own type), and where its key is.
pub(super) struct Num {
    pub(super) value: Value,
    pub(super) expr: syn::Expr,
    pub(super) key: Span,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Value {
    Whole(i128),
    Fraction(f64),
}

impl Value {
    pub(super) fn as_f64(self) -> f64 {
        match self {
            Value::Whole(n) => n as f64,
            Value::Fraction(x) => x,
        }
    }
}

/// A default as written: its kind as far as the literal tells, the value as written, and where
/// its key is.
pub(super) struct Preset {
    pub(super) kind: PresetKind,
    pub(super) expr: syn::Expr,
    pub(super) key: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum PresetKind {
    /// A number.
    Number(Value),
    /// A string.
    Text(String),
    /// A list of variants, of this length (a multi-select's).
    Items(usize),
    /// `true`, `false`, or a path (a choice's variant).
    Other,
}

/// A `#[derive(ElicitChoice)]` enum.
pub(super) struct Choice {
    pub(super) krate: Krate,
    pub(super) ident: syn::Ident,
    pub(super) generics: syn::Generics,
    pub(super) variants: Vec<Variant>,
}

/// One value of a choice.
pub(super) struct Variant {
    pub(super) ident: syn::Ident,
    /// The value it is sent as: its name, as serde reads it.
    pub(super) value: String,
    /// `#[choice(title = "..")]`.
    pub(super) title: Option<SpannedValue<String>>,
    /// Its doc comment, as written (the title without `title`).
    pub(super) doc: Vec<syn::Expr>,
}
