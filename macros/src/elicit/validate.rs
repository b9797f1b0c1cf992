//! Checks of the models that the values written out allow, whatever the field's type: names
//! used twice, bounds that contradict each other, a default outside its bounds, whole numbers a
//! form's integers (`i64`) cannot hold, empty titles. Whether a value fits the field's type is
//! rustc's, where `codegen` passes it.

use proc_macro2::Span;

use super::model::{Choice, Field, Form, Num, PresetKind, Value};

pub(super) fn form(form: &Form, errors: &mut darling::error::Accumulator) {
    for (i, field) in form.fields.iter().enumerate() {
        if form.fields[..i].iter().any(|f| f.name == field.name) {
            errors.push(
                darling::Error::custom(format!(
                    "the form already has a field named \"{}\", as serde reads the names, so the answer could not tell them apart; rename one (`#[serde(rename = \"...\")]`)",
                    field.name,
                ))
                .with_span(&field.at),
            );
        }
        self::field(field, errors);
    }
}

fn field(field: &Field, errors: &mut darling::error::Accumulator) {
    if let Some(title) = field.title.as_ref().filter(|t| t.trim().is_empty()) {
        errors.push(
            darling::Error::custom(
                "an empty title shows the user nothing: write the field's name as they should read it, or leave `title` out (the property's name is shown)",
            )
            .with_span(&title.span()),
        );
    }
    for num in [&field.min, &field.max].into_iter().flatten() {
        integer_range(num.value, num.key, errors);
    }
    if let (Some(min), Some(max)) = (&field.min, &field.max)
        && min.value.as_f64() > max.value.as_f64()
    {
        errors.push(
            darling::Error::custom(format!(
                "`min` is above `max`, so no value fits: {} > {}",
                shown(min.value),
                shown(max.value)
            ))
            .with_span(&max.key),
        );
    }
    if let (Some(min), Some(max)) = (&field.min_length, &field.max_length)
        && **min > **max
    {
        errors.push(
            darling::Error::custom(format!(
                "`min_length` is above `max_length`, so no text fits: {} > {}",
                **min, **max
            ))
            .with_span(&max.span()),
        );
    }
    if let (Some(min), Some(max)) = (&field.min_items, &field.max_items)
        && **min > **max
    {
        errors.push(
            darling::Error::custom(format!(
                "`min_items` is above `max_items`, so no choice fits: {} > {}",
                **min, **max
            ))
            .with_span(&max.span()),
        );
    }
    let Some(default) = &field.default else {
        return;
    };
    let outside = |what: String| {
        darling::Error::custom(format!(
            "the default is outside what the field allows ({what}), so the form would start with a value the user could not send"
        ))
        .with_span(&default.expr)
    };
    match &default.kind {
        PresetKind::Number(value) => {
            integer_range(*value, default.key, errors);
            let below = |bound: &Num| value.as_f64() < bound.value.as_f64();
            if let Some(min) = field.min.as_ref().filter(|min| below(min)) {
                errors.push(outside(format!("`min = {}`", shown(min.value))));
            }
            let above = |bound: &Num| value.as_f64() > bound.value.as_f64();
            if let Some(max) = field.max.as_ref().filter(|max| above(max)) {
                errors.push(outside(format!("`max = {}`", shown(max.value))));
            }
        }
        PresetKind::Text(text) => {
            let length = text.chars().count();
            if let Some(min) = field
                .min_length
                .as_deref()
                .filter(|m| length < **m as usize)
            {
                errors.push(outside(format!("`min_length = {min}`")));
            }
            if let Some(max) = field
                .max_length
                .as_deref()
                .filter(|m| length > **m as usize)
            {
                errors.push(outside(format!("`max_length = {max}`")));
            }
        }
        PresetKind::Items(count) => {
            let count = *count as u64;
            if let Some(min) = field.min_items.as_deref().filter(|m| count < **m) {
                errors.push(outside(format!("`min_items = {min}`")));
            }
            if let Some(max) = field.max_items.as_deref().filter(|m| count > **m) {
                errors.push(outside(format!("`max_items = {max}`")));
            }
        }
        PresetKind::Other => {}
    }
}

/// A whole number a form's integers hold: JSON Schema integers as MCP elicitation sends them,
/// 64-bit signed.
fn integer_range(value: Value, at: Span, errors: &mut darling::error::Accumulator) {
    if let Value::Whole(n) = value
        && i64::try_from(n).is_err()
    {
        errors.push(
            darling::Error::custom(format!(
                "{n} is beyond the whole numbers a form holds (a 64-bit signed integer, {} to {})",
                i64::MIN,
                i64::MAX
            ))
            .with_span(&at),
        );
    }
}

fn shown(value: Value) -> String {
    match value {
        Value::Whole(n) => n.to_string(),
        Value::Fraction(x) => x.to_string(),
    }
}

pub(super) fn choice(choice: &Choice, errors: &mut darling::error::Accumulator) {
    for (i, variant) in choice.variants.iter().enumerate() {
        if let Some(first) = choice.variants[..i]
            .iter()
            .find(|v| v.value == variant.value)
        {
            errors.push(
                darling::Error::custom(format!(
                    "`{}` is sent as \"{}\", as `{}` is, so the answer could not tell them apart; rename one (`#[serde(rename = \"...\")]`)",
                    variant.ident, variant.value, first.ident
                ))
                .with_span(&variant.ident),
            );
        }
        if let Some(title) = variant.title.as_ref().filter(|t| t.trim().is_empty()) {
            errors.push(
                darling::Error::custom(
                    "an empty title shows the user nothing: write the choice as they should read it, or leave `title` out (the doc comment, or else the value, is shown)",
                )
                .with_span(&title.span()),
            );
        }
    }
}
