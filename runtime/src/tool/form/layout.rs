//! A form laid out: each [`Field`] as the derive describes it, then the schema MCP elicitation
//! sends ([`Form::build`]), choices titled as SEP-1330 writes them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use rmcp::model::{
    BooleanSchema, ElicitationSchema, EnumSchema, IntegerSchema, NumberSchema,
    PrimitiveSchemaDefinition, StringFormat, StringSchema,
};

use super::{
    Choice, ChoicesField, FloatField, FormField, Format, Number, NumberField, Preset, Shape,
    TextField,
};

/// A field of type `T`: the one place the derive requires [`FormField`], spanned at the field's
/// type, so that a field a form cannot show is reported there, once.
pub fn field<T: FormField>() -> Field<T> {
    Field {
        required: T::REQUIRED,
        shape: T::shape(),
        options: Options::default(),
        field: PhantomData,
    }
}

/// A field being described: [`field`], then what its attribute says.
#[derive(Debug)]
#[must_use = "a field is described for Form::field"]
pub struct Field<T> {
    required: bool,
    shape: Shape,
    options: Options,
    field: PhantomData<fn() -> T>,
}

/// What a field's attribute and doc comment say.
#[derive(Debug, Default)]
pub(crate) struct Options {
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) default: Option<Preset>,
    pub(crate) min: Option<Number>,
    pub(crate) max: Option<Number>,
    pub(crate) min_length: Option<u32>,
    pub(crate) max_length: Option<u32>,
    pub(crate) format: Option<Format>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
}

// Options that every kind takes need no bound: the type was required once by `field`, and a
// second bound would report a field a form cannot show a second time.
impl<T> Field<T> {
    /// What the user sees as the field's name (`#[form(title = "..")]`).
    pub fn title(mut self, title: &str) -> Self {
        self.options.title = (!title.is_empty()).then(|| title.to_owned());
        self
    }

    /// What the field is for (its doc comment).
    pub fn description(mut self, description: String) -> Self {
        self.options.description = (!description.is_empty()).then_some(description);
        self
    }

    /// The value the form starts with (`#[form(default = ..)]`).
    pub fn default(mut self, value: T::Default) -> Self
    where
        T: FormField,
    {
        self.options.default = Some(T::preset(value));
        self
    }

    /// A default written as a whole number.
    pub fn default_whole(mut self, value: T::Whole) -> Self
    where
        T: NumberField,
    {
        self.options.default = Some(Preset::Number(T::whole(value)));
        self
    }

    /// A default written with a fraction.
    pub fn default_fraction(mut self, value: f64) -> Self
    where
        T: FloatField,
    {
        self.options.default = Some(Preset::Number(Number::Fraction(value)));
        self
    }

    /// The least value, written as a whole number.
    pub fn min_whole(mut self, value: T::Whole) -> Self
    where
        T: NumberField,
    {
        self.options.min = Some(T::whole(value));
        self
    }

    /// The greatest value, written as a whole number.
    pub fn max_whole(mut self, value: T::Whole) -> Self
    where
        T: NumberField,
    {
        self.options.max = Some(T::whole(value));
        self
    }

    /// The least value, written with a fraction.
    pub fn min_fraction(mut self, value: f64) -> Self
    where
        T: FloatField,
    {
        self.options.min = Some(Number::Fraction(value));
        self
    }

    /// The greatest value, written with a fraction.
    pub fn max_fraction(mut self, value: f64) -> Self
    where
        T: FloatField,
    {
        self.options.max = Some(Number::Fraction(value));
        self
    }

    /// The text's format.
    pub fn format(mut self, format: Format) -> Self
    where
        T: TextField,
    {
        self.options.format = Some(format);
        self
    }

    /// The text's least length, in characters.
    pub fn min_length(mut self, length: u32) -> Self
    where
        T: TextField,
    {
        self.options.min_length = Some(length);
        self
    }

    /// The text's greatest length, in characters.
    pub fn max_length(mut self, length: u32) -> Self
    where
        T: TextField,
    {
        self.options.max_length = Some(length);
        self
    }

    /// The least number of choices picked.
    pub fn min_items(mut self, count: u64) -> Self
    where
        T: ChoicesField,
    {
        self.options.min_items = Some(count);
        self
    }

    /// The greatest number of choices picked.
    pub fn max_items(mut self, count: u64) -> Self
    where
        T: ChoicesField,
    {
        self.options.max_items = Some(count);
        self
    }
}

/// A form being laid out, field by field in the order they are declared.
///
/// ```
/// # use mcp_fusion::__private::form::{Form, field};
/// let schema = Form::new()
///     .field("confirm", field::<bool>().description("Delete for good.".into()))
///     .field("reason", field::<Option<String>>().title("Reason"))
///     .build();
/// assert_eq!(schema.required, Some(vec!["confirm".to_owned()]));
/// ```
#[derive(Debug, Default)]
#[must_use = "a form is laid out until it is built"]
pub struct Form {
    properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    order: Vec<String>,
    required: Vec<String>,
}

impl Form {
    /// A form without fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field (a field already added under `name` is replaced).
    pub fn field<T>(self, name: &str, field: Field<T>) -> Self {
        self.shaped(name, field.shape, field.options, field.required)
    }

    /// Adds a field of this shape.
    pub(crate) fn shaped(
        mut self,
        name: &str,
        shape: Shape,
        options: Options,
        required: bool,
    ) -> Self {
        let schema = property(shape, options);
        self.order.retain(|n| n != name);
        self.required.retain(|n| n != name);
        self.order.push(name.to_owned());
        if required {
            self.required.push(name.to_owned());
        }
        self.properties.insert(name.to_owned(), schema);
        self
    }

    /// The schema, its properties in the order they were added.
    pub fn build(self) -> ElicitationSchema {
        let mut schema = ElicitationSchema::new(self.properties);
        schema.property_order = Some(self.order);
        if !self.required.is_empty() {
            schema = schema.with_required(self.required);
        }
        schema
    }
}

/// One property of a form's schema.
fn property(shape: Shape, options: Options) -> PrimitiveSchemaDefinition {
    let Options {
        title,
        description,
        default,
        min,
        max,
        min_length,
        max_length,
        format,
        min_items,
        max_items,
    } = options;
    match shape {
        Shape::Text => {
            let mut text = StringSchema::new();
            text.title = title.map(Cow::Owned);
            text.description = description.map(Cow::Owned);
            text.min_length = min_length;
            text.max_length = max_length;
            text.format = format.map(StringFormat::from);
            if let Some(Preset::Text(value)) = default {
                text = text.with_default(value);
            }
            PrimitiveSchemaDefinition::String(text)
        }
        Shape::Boolean => {
            let mut boolean = BooleanSchema::new();
            boolean.title = title.map(Cow::Owned);
            boolean.description = description.map(Cow::Owned);
            if let Some(Preset::Boolean(value)) = default {
                boolean = boolean.with_default(value);
            }
            PrimitiveSchemaDefinition::Boolean(boolean)
        }
        Shape::Integer {
            min: least,
            max: greatest,
        } => {
            let mut integer = IntegerSchema::new();
            integer.title = title.map(Cow::Owned);
            integer.description = description.map(Cow::Owned);
            integer.minimum = min.and_then(Number::whole).or(least);
            integer.maximum = max.and_then(Number::whole).or(greatest);
            if let Some(value) = preset_number(default).and_then(Number::whole) {
                integer = integer.with_default(value);
            }
            PrimitiveSchemaDefinition::Integer(integer)
        }
        Shape::Number => {
            let mut number = NumberSchema::new();
            number.title = title.map(Cow::Owned);
            number.description = description.map(Cow::Owned);
            number.minimum = min.map(Number::fraction);
            number.maximum = max.map(Number::fraction);
            if let Some(value) = preset_number(default) {
                number = number.with_default(value.fraction());
            }
            PrimitiveSchemaDefinition::Number(number)
        }
        Shape::Choice(choices) => {
            let default = match default {
                Some(Preset::Choice(value)) => Some(value),
                _ => None,
            };
            PrimitiveSchemaDefinition::Enum(one_of(choices, title, description, default))
        }
        Shape::Choices(choices) => {
            let default = match default {
                Some(Preset::Choices(values)) => values,
                _ => Vec::new(),
            };
            let items = (min_items, max_items);
            PrimitiveSchemaDefinition::Enum(any_of(choices, title, description, default, items))
        }
    }
}

fn preset_number(default: Option<Preset>) -> Option<Number> {
    match default {
        Some(Preset::Number(n)) => Some(n),
        _ => None,
    }
}

/// The values and, when any choice has one, the titles (a choice without one is shown as its
/// value).
fn values_and_titles(choices: Vec<Choice>) -> (Vec<String>, Option<Vec<String>>) {
    let titled = choices.iter().any(|c| c.title.is_some());
    let mut values = Vec::with_capacity(choices.len());
    let mut titles = Vec::with_capacity(choices.len());
    for choice in choices {
        let value = choice.value.into_owned();
        titles.push(choice.title.unwrap_or_else(|| value.clone()));
        values.push(value);
    }
    (values, titled.then_some(titles))
}

/// A single-select (SEP-1330: `oneOf` of `const` and `title` when titled, else `enum`). A
/// default that is not one of the values is left out.
fn one_of(
    choices: Vec<Choice>,
    title: Option<String>,
    description: Option<String>,
    default: Option<Cow<'static, str>>,
) -> EnumSchema {
    let (values, titles) = values_and_titles(choices);
    let default = default.filter(|d| values.iter().any(|v| v == d));
    let laid_out = || -> Result<EnumSchema, String> {
        let mut builder = EnumSchema::builder(values.clone());
        if let Some(title) = title {
            builder = builder.title(title);
        }
        if let Some(description) = description {
            builder = builder.description(description);
        }
        if let Some(titles) = titles {
            builder = builder.enum_titles(titles)?;
        }
        if let Some(default) = default {
            builder = builder.with_default(default)?;
        }
        Ok(builder.build())
    };
    // The builder's checks hold (as many titles as values, a default among them), so the bare
    // values are never what is sent.
    laid_out().unwrap_or_else(|_| EnumSchema::builder(values.clone()).build())
}

/// A multi-select (SEP-1330: an array whose `items` are `anyOf` of `const` and `title` when
/// titled, else `enum`). Bounds that contradict each other, and a default with a value that is
/// not a choice or with too few or too many values, are left out.
fn any_of(
    choices: Vec<Choice>,
    title: Option<String>,
    description: Option<String>,
    default: Vec<Cow<'static, str>>,
    (min_items, max_items): (Option<u64>, Option<u64>),
) -> EnumSchema {
    let (values, titles) = values_and_titles(choices);
    let (min_items, max_items) = match (min_items, max_items) {
        (Some(min), Some(max)) if min > max => (None, None),
        bounds => bounds,
    };
    let count = default.len() as u64;
    let fits = default.iter().all(|d| values.iter().any(|v| v == d))
        && min_items.is_none_or(|min| count >= min)
        && max_items.is_none_or(|max| count <= max);
    let laid_out = || -> Result<EnumSchema, String> {
        let mut builder = EnumSchema::builder(values.clone());
        if let Some(title) = title {
            builder = builder.title(title);
        }
        if let Some(description) = description {
            builder = builder.description(description);
        }
        if let Some(titles) = titles {
            builder = builder.enum_titles(titles)?;
        }
        let mut builder = builder.multiselect();
        if let Some(min) = min_items {
            builder = builder.min_items(min)?;
        }
        if let Some(max) = max_items {
            builder = builder.max_items(max)?;
        }
        if fits && !default.is_empty() {
            builder = builder.with_default(default.into_iter().map(Cow::into_owned).collect())?;
        }
        Ok(builder.build())
    };
    // As in `one_of`: what is checked above is what the builder checks.
    laid_out().unwrap_or_else(|_| EnumSchema::builder(values.clone()).multiselect().build())
}
