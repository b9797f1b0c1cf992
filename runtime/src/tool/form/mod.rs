//! What a form is made of. `#[derive(ElicitForm)]` names each field, its type and what its
//! `#[form(..)]` says; the schema is laid out here. Each kind of field a form can show is a
//! trait the generated code requires of the field's type ([`FormField`], and for the kind's own
//! options [`TextField`], [`NumberField`], [`FloatField`], [`ChoicesField`]), so that a field a
//! form cannot show, or an option its kind does not take, is refused by rustc on the user's
//! tokens with a hint, never guessed from a type's name.
//!
//! A form is what MCP elicitation shows (`requestedSchema`): a flat object of text, numbers,
//! booleans, one choice among strings (SEP-1330: titled with `oneOf`/`const`/`title`) or several
//! (an array of them, titled with `anyOf`), each with an optional default (SEP-1034).

use std::borrow::Cow;

use rmcp::model::StringFormat;
use serde::de::DeserializeOwned;

mod layout;

pub(crate) use layout::Options;
pub use layout::{Field, Form, field};

/// The values an enum offers in a form: one choice (a field of the enum's type) or several (a
/// `Vec` of it). `#[derive(ElicitChoice)]` writes it for an enum of unit variants, and makes the
/// enum a field a form can show.
///
/// Each variant's value is the string serde reads it from (its name, after the enum's
/// `#[serde(rename_all = "..")]` or its own `#[serde(rename = "..")]`); its title, what the user
/// sees, is `#[choice(title = "..")]` or its doc comment. When no variant has a title, the form
/// lists the bare values.
///
/// ```
/// use mcp_fusion::tools::ElicitChoice;
///
/// #[derive(serde::Deserialize, ElicitChoice)]
/// #[serde(rename_all = "snake_case")]
/// enum Plan {
///     /// Free, for one person
///     Free,
///     #[choice(title = "Team, billed monthly")]
///     SmallTeam,
/// }
///
/// assert_eq!(Plan::SmallTeam.value(), "small_team");
/// let titles: Vec<_> = Plan::choices().iter().map(|c| c.title().unwrap_or_default().to_owned()).collect();
/// assert_eq!(titles, ["Free, for one person", "Team, billed monthly"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a choice a form can offer",
    label = "a list in a form is a choice of several of an enum's values",
    note = "derive `ElicitChoice` on an enum of unit variants (`#[derive(serde::Deserialize, mcp_fusion::tools::ElicitChoice)]`) and make this a `Vec` of it",
    note = "a form cannot show a list of free text or numbers: ask for it as one text field, or as separate fields"
)]
pub trait ElicitChoice: Sized {
    /// The choices, in the order the form shows them.
    fn choices() -> Vec<Choice>;

    /// The value this variant is sent as: one of the [`choices`](ElicitChoice::choices)'
    /// values.
    fn value(&self) -> &'static str;
}

/// One value a choice offers, and what the user sees for it.
///
/// ```
/// use mcp_fusion::tools::Choice;
///
/// let pro = Choice::new("pro").titled("Pro, billed monthly");
/// assert_eq!((pro.value(), pro.title()), ("pro", Some("Pro, billed monthly")));
/// assert_eq!(Choice::new("free").title(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    value: Cow<'static, str>,
    title: Option<String>,
}

impl Choice {
    /// A choice sent as `value`, shown as it is.
    pub fn new(value: impl Into<Cow<'static, str>>) -> Self {
        Choice {
            value: value.into(),
            title: None,
        }
    }

    /// Shows the choice as `title` (an empty title is none).
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        let title = title.into();
        self.title = (!title.is_empty()).then_some(title);
        self
    }

    /// The value it is sent as.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// What the user sees, when it has a title.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
}

/// A type a form can show as a field. The derive requires it of each field's type; its hint is
/// the list of what a form shows.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "a form shows text, numbers, booleans and choices, not this",
    note = "a form field is a `String`, a `bool`, an integer (`i8` to `i64`, `u8` to `u64`), an `f32` or an `f64`, an enum of unit variants with `#[derive(ElicitChoice)]` (one choice) or a `Vec` of one (several), or an `Option` of any of these (a field the user may leave empty)",
    note = "MCP elicitation shows a flat form: put the fields of a nested struct in this form, or ask for them in a second one"
)]
pub trait FormField {
    /// What `#[form(default = ..)]` is written as (the field's own type, `&'static str` for
    /// text).
    type Default;

    /// Whether the user must fill it in (an `Option` need not be).
    const REQUIRED: bool = true;

    /// What the field is.
    fn shape() -> Shape;

    /// A default, as the form sends it.
    fn preset(value: Self::Default) -> Preset;
}

/// A text field: `format`, `min_length` and `max_length` are for it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not text: `format`, `min_length` and `max_length` are for a `String` field",
    label = "an option of text fields",
    note = "a number takes `min` and `max`; a list of choices takes `min_items` and `max_items`"
)]
pub trait TextField: FormField {}

/// A number field: `min` and `max`, and a default written as a whole number, are for it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number: `min`, `max` and a numeric `default` are for integer and float fields",
    label = "an option of number fields",
    note = "text takes `min_length` and `max_length`; a list of choices takes `min_items` and `max_items`"
)]
pub trait NumberField: FormField {
    /// What a whole number written in the attribute is read as: the field's own integer type,
    /// so that rustc refuses a bound or default it cannot hold (`i64` for a float field).
    type Whole;

    /// A whole number written in the attribute.
    fn whole(value: Self::Whole) -> Number;
}

/// A float field: a bound or default with a fraction is for it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` holds whole numbers: a bound or default with a fraction is for an `f32` or `f64` field",
    label = "a number with a fraction",
    note = "write a whole number, or make the field an `f64`"
)]
pub trait FloatField: NumberField {}

/// A field of several choices: `min_items` and `max_items` are for it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a list of choices: `min_items` and `max_items` are for a `Vec` of an enum with `#[derive(ElicitChoice)]`",
    label = "an option of multi-select fields"
)]
pub trait ChoicesField: FormField {}

/// What a field is, as a form shows it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// Text.
    Text,
    /// Yes or no.
    Boolean,
    /// A whole number, within the type's own range where it is narrower than `i64`.
    Integer {
        /// The type's least value.
        min: Option<i64>,
        /// The type's greatest value.
        max: Option<i64>,
    },
    /// A number with a fraction.
    Number,
    /// One of these values.
    Choice(Vec<Choice>),
    /// Any of these values.
    Choices(Vec<Choice>),
}

/// A number written in an attribute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A whole number.
    Whole(i64),
    /// A number with a fraction.
    Fraction(f64),
}

impl Number {
    pub(crate) fn whole(self) -> Option<i64> {
        match self {
            Number::Whole(n) => Some(n),
            Number::Fraction(_) => None,
        }
    }

    fn fraction(self) -> f64 {
        match self {
            Number::Whole(n) => n as f64,
            Number::Fraction(x) => x,
        }
    }
}

/// A default, as the form sends it.
#[derive(Debug, Clone, PartialEq)]
pub enum Preset {
    /// Text.
    Text(Cow<'static, str>),
    /// Yes or no.
    Boolean(bool),
    /// A number.
    Number(Number),
    /// One choice's value.
    Choice(Cow<'static, str>),
    /// Several choices' values.
    Choices(Vec<Cow<'static, str>>),
}

/// A text field's format, among those MCP elicitation allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An email address.
    Email,
    /// A URI.
    Uri,
    /// A date (`2026-07-28`).
    Date,
    /// A date and time (`2026-07-28T09:30:00Z`).
    DateTime,
}

impl From<Format> for StringFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Email => StringFormat::Email,
            Format::Uri => StringFormat::Uri,
            Format::Date => StringFormat::Date,
            Format::DateTime => StringFormat::DateTime,
        }
    }
}

impl FormField for String {
    type Default = &'static str;
    fn shape() -> Shape {
        Shape::Text
    }
    fn preset(value: &'static str) -> Preset {
        Preset::Text(Cow::Borrowed(value))
    }
}

impl TextField for String {}

impl FormField for bool {
    type Default = bool;
    fn shape() -> Shape {
        Shape::Boolean
    }
    fn preset(value: bool) -> Preset {
        Preset::Boolean(value)
    }
}

/// Integer fields: each type's range, where it is narrower than the `i64` a form's integers
/// are, and whole numbers of the type itself.
macro_rules! integers {
    ($($ty:ty => $min:expr, $max:expr;)*) => {$(
        impl FormField for $ty {
            type Default = $ty;
            fn shape() -> Shape {
                Shape::Integer { min: $min, max: $max }
            }
            fn preset(value: $ty) -> Preset {
                Preset::Number(<$ty as NumberField>::whole(value))
            }
        }

        impl NumberField for $ty {
            type Whole = $ty;
            fn whole(value: $ty) -> Number {
                // Only `u64` can be past `i64::MAX`; the derive refuses such a literal.
                Number::Whole(i64::try_from(value).unwrap_or(i64::MAX))
            }
        }
    )*};
}

integers! {
    i8 => Some(i8::MIN.into()), Some(i8::MAX.into());
    i16 => Some(i16::MIN.into()), Some(i16::MAX.into());
    i32 => Some(i32::MIN.into()), Some(i32::MAX.into());
    i64 => None, None;
    u8 => Some(0), Some(u8::MAX.into());
    u16 => Some(0), Some(u16::MAX.into());
    u32 => Some(0), Some(u32::MAX.into());
    u64 => Some(0), None;
}

macro_rules! floats {
    ($($ty:ty),*) => {$(
        impl FormField for $ty {
            type Default = $ty;
            fn shape() -> Shape {
                Shape::Number
            }
            fn preset(value: $ty) -> Preset {
                Preset::Number(Number::Fraction(value.into()))
            }
        }

        impl NumberField for $ty {
            type Whole = i64;
            fn whole(value: i64) -> Number {
                Number::Fraction(value as f64)
            }
        }

        impl FloatField for $ty {}
    )*};
}

floats!(f32, f64);

impl<T: FormField> FormField for Option<T> {
    type Default = T::Default;
    const REQUIRED: bool = false;
    fn shape() -> Shape {
        T::shape()
    }
    fn preset(value: T::Default) -> Preset {
        T::preset(value)
    }
}

impl<T: TextField> TextField for Option<T> {}

impl<T: NumberField> NumberField for Option<T> {
    type Whole = T::Whole;
    fn whole(value: T::Whole) -> Number {
        T::whole(value)
    }
}

impl<T: FloatField> FloatField for Option<T> {}

impl<T: ChoicesField> ChoicesField for Option<T> {}

impl<T: ElicitChoice> FormField for Vec<T> {
    type Default = Vec<T>;
    fn shape() -> Shape {
        Shape::Choices(T::choices())
    }
    fn preset(value: Vec<T>) -> Preset {
        Preset::Choices(value.iter().map(|v| Cow::Borrowed(v.value())).collect())
    }
}

impl<T: ElicitChoice> ChoicesField for Vec<T> {}

/// The shape of an enum with `#[derive(ElicitChoice)]`, as a field of one choice.
pub fn choice_shape<T: ElicitChoice>() -> Shape {
    Shape::Choice(T::choices())
}

/// A default of an enum with `#[derive(ElicitChoice)]`.
pub fn choice_preset<T: ElicitChoice>(value: &T) -> Preset {
    Preset::Choice(Cow::Borrowed(value.value()))
}

/// What a generic struct with `#[derive(ElicitForm)]` is required to be, so that a field of a
/// type parameter is reported once, at the field. A trait of ours rather than serde's own, so
/// that rustc's notes elsewhere keep naming serde's `DeserializeOwned` where it lives.
pub trait Answer: DeserializeOwned + Send {}

impl<T: DeserializeOwned + Send> Answer for T {}
