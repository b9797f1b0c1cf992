//! A field only the user can give (`ActionDefBuilder::user_field`, `#[action(ask_user(..))]`):
//! whether the arguments have it as an optional field a form can show, and the form that asks
//! the user for it, read from the arguments' JSON Schema.

use std::borrow::Cow;

use rmcp::model::ElicitationSchema;
use serde_json::{Map, Value};

use super::form::{Choice, Form, Format, Number, Options, Preset, Shape};
use super::object_schema::shapes;
use crate::closest::Names;

/// Why a user field does not fit the arguments.
#[derive(Debug, PartialEq)]
pub(super) enum Unfit {
    /// No shape of the arguments has the field; the closest property, if one is close.
    Missing { closest: Option<String> },
    /// The arguments require it, so a call never leaves it out.
    Required,
    /// A form cannot show it; what it is instead.
    Unshowable { found: String },
}

/// Whether `name` is an optional field a form can show, in every shape of the arguments that
/// has it.
pub(super) fn check(
    shapes: &[&Map<String, Value>],
    defs: &Map<String, Value>,
    name: &str,
) -> Result<(), Unfit> {
    let mut found = false;
    for shape in shapes {
        let Some(property) = shape.get("properties").and_then(|p| p.get(name)) else {
            continue;
        };
        found = true;
        let required = (shape.get("required").and_then(Value::as_array))
            .is_some_and(|required| required.iter().any(|r| r == name));
        if required {
            return Err(Unfit::Required);
        }
        if read(property, defs).is_none() {
            return Err(Unfit::Unshowable {
                found: describe(property, defs),
            });
        }
    }
    if found {
        return Ok(());
    }
    let properties: Vec<String> = shapes
        .iter()
        .filter_map(|shape| shape.get("properties").and_then(Value::as_object))
        .flat_map(|properties| properties.keys().cloned())
        .collect();
    let closest = Names::new(&properties)
        .closest(name)
        .map(|i| properties[i].clone());
    Err(Unfit::Missing { closest })
}

/// The form that asks for `names`, fields of the arguments `schema`: one field each, required
/// in the form, as the arguments describe it; `None` when one of them is no field a form can
/// show.
pub(super) fn form(schema: &Value, names: &[&str]) -> Option<ElicitationSchema> {
    let empty = Map::new();
    let defs = (schema.get("$defs").and_then(Value::as_object)).unwrap_or(&empty);
    let shapes = shapes(schema, defs)?;
    let mut form = Form::new();
    for name in names {
        let property = (shapes.iter()).find_map(|shape| shape.get("properties")?.get(*name))?;
        let (shape, options) = read(property, defs)?;
        form = form.shaped(name, shape, options, true);
    }
    Some(form.build())
}

/// A `$ref` into `$defs` resolved (one step at a time, at most a few).
fn resolve<'a>(mut node: &'a Value, defs: &'a Map<String, Value>) -> Option<&'a Value> {
    for _ in 0..8 {
        let Some(pointer) = node.get("$ref").and_then(Value::as_str) else {
            return Some(node);
        };
        let name = pointer.strip_prefix("#/$defs/")?;
        node = defs.get(name)?;
    }
    None
}

fn is_null(node: &Value, defs: &Map<String, Value>) -> bool {
    resolve(node, defs).is_some_and(|n| n.get("type").is_some_and(|t| t == "null"))
}

fn text(node: &Map<String, Value>, key: &str) -> Option<String> {
    node.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A property as a form field, when a form can show it: text, a number, a boolean, one choice
/// among strings or several; an `Option` of one of these (`anyOf` with `null`, or `null` among
/// its types) is the same field.
fn read(property: &Value, defs: &Map<String, Value>) -> Option<(Shape, Options)> {
    let node = resolve(property, defs)?.as_object()?;
    let mut options = Options {
        title: text(node, "title"),
        description: text(node, "description"),
        ..Options::default()
    };
    // `Option<T>`: `T` or null, the property's own words kept over `T`'s.
    for key in ["anyOf", "oneOf"] {
        let Some(alternatives) = node.get(key).and_then(Value::as_array) else {
            continue;
        };
        let others: Vec<&Value> = (alternatives.iter())
            .filter(|a| !is_null(a, defs))
            .collect();
        if let ([inner], true) = (others.as_slice(), alternatives.len() == 2) {
            let (shape, mut inner_options) = read(inner, defs)?;
            inner_options.title = options.title.or(inner_options.title);
            inner_options.description = options.description.or(inner_options.description);
            if let Some(default) = node.get("default") {
                inner_options.default = preset(&shape, default);
            }
            return Some((shape, inner_options));
        }
    }
    let kind = match node.get("type") {
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = (kinds.iter().filter_map(Value::as_str))
                .filter(|k| *k != "null")
                .collect();
            match kinds.as_slice() {
                [kind] => Some(*kind),
                _ => return None,
            }
        }
        Some(_) => return None,
        None => None,
    };
    let shape = if let Some(choices) = choices(node, defs) {
        Shape::Choice(choices)
    } else {
        match kind? {
            "string" => {
                options.format = node.get("format").and_then(|f| match f.as_str()? {
                    "email" => Some(Format::Email),
                    "uri" => Some(Format::Uri),
                    "date" => Some(Format::Date),
                    "date-time" => Some(Format::DateTime),
                    _ => None,
                });
                options.min_length = length(node, "minLength");
                options.max_length = length(node, "maxLength");
                Shape::Text
            }
            "boolean" => Shape::Boolean,
            "integer" => {
                let bound = |key| node.get(key).and_then(Value::as_i64).map(Number::Whole);
                options.min = bound("minimum");
                options.max = bound("maximum");
                Shape::Integer {
                    min: None,
                    max: None,
                }
            }
            "number" => {
                let bound = |key| node.get(key).and_then(Value::as_f64).map(Number::Fraction);
                options.min = bound("minimum");
                options.max = bound("maximum");
                Shape::Number
            }
            "array" => {
                let items = resolve(node.get("items")?, defs)?.as_object()?;
                let count = |key| node.get(key).and_then(Value::as_u64);
                options.min_items = count("minItems");
                options.max_items = count("maxItems");
                Shape::Choices(choices(items, defs)?)
            }
            _ => return None,
        }
    };
    options.default = node.get("default").and_then(|d| preset(&shape, d));
    Some((shape, options))
}

fn length(node: &Map<String, Value>, key: &str) -> Option<u32> {
    node.get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// The choices of a property that is one of a set of strings: `enum` (null left out), or
/// `oneOf`/`anyOf` of constants, titled by their `title` or else their `description` (as
/// schemars writes an enum whose variants have doc comments).
fn choices(node: &Map<String, Value>, defs: &Map<String, Value>) -> Option<Vec<Choice>> {
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
        return values
            .into_iter()
            .map(|v| v.as_str().map(|v| Choice::new(v.to_owned())))
            .collect::<Option<Vec<_>>>()
            .filter(|choices| !choices.is_empty());
    }
    let alternatives = ["oneOf", "anyOf"]
        .into_iter()
        .find_map(|key| node.get(key).and_then(Value::as_array))?;
    let mut found = Vec::new();
    for alternative in alternatives.iter().filter(|a| !is_null(a, defs)) {
        let alternative = resolve(alternative, defs)?.as_object()?;
        let value = match (alternative.get("const"), alternative.get("enum")) {
            (Some(Value::String(value)), _) => value.clone(),
            (None, Some(Value::Array(values))) => match values.as_slice() {
                [Value::String(value)] => value.clone(),
                _ => return None,
            },
            _ => return None,
        };
        let title = text(alternative, "title").or_else(|| text(alternative, "description"));
        let choice = Choice::new(value);
        found.push(match title {
            Some(title) => choice.titled(title),
            None => choice,
        });
    }
    (!found.is_empty()).then_some(found)
}

/// A default from the schema, when it fits the field.
fn preset(shape: &Shape, default: &Value) -> Option<Preset> {
    let owned = |v: &str| Cow::Owned(v.to_owned());
    Some(match shape {
        Shape::Text => Preset::Text(owned(default.as_str()?)),
        Shape::Boolean => Preset::Boolean(default.as_bool()?),
        Shape::Integer { .. } => Preset::Number(Number::Whole(default.as_i64()?)),
        Shape::Number => Preset::Number(Number::Fraction(default.as_f64()?)),
        Shape::Choice(_) => Preset::Choice(owned(default.as_str()?)),
        Shape::Choices(_) => Preset::Choices(
            (default.as_array()?.iter())
                .map(|v| v.as_str().map(owned))
                .collect::<Option<_>>()?,
        ),
    })
}

/// What a property a form cannot show is, for the message.
fn describe(property: &Value, defs: &Map<String, Value>) -> String {
    let node = resolve(property, defs).and_then(Value::as_object);
    match node.and_then(|n| n.get("type")) {
        Some(kind) => format!("of type {kind}"),
        None if node.is_some_and(|n| n.contains_key("anyOf") || n.contains_key("oneOf")) => {
            "one of several schemas".to_owned()
        }
        None => "a schema without a type".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Plan {
        /// Free
        Free,
        /// Pro
        Pro,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Address {
        city: String,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        note: String,
        /// Delete for good.
        confirm: Option<bool>,
        plan: Option<Plan>,
        count: Option<u8>,
        address: Option<Address>,
        tags: Option<Vec<String>>,
    }

    /// `Args`'s schema as `ActionDef::new` lists it (integer bounds, closed objects), made
    /// here so that these tests do not depend on the action's definition, which depends on
    /// this file.
    fn args() -> Value {
        let mut schema = schemars::SchemaGenerator::default()
            .into_root_schema_for::<Args>()
            .to_value();
        super::super::object_schema::bound_integers(&mut schema);
        super::super::object_schema::close(&mut schema);
        schema
    }

    fn checked(name: &str) -> Result<(), Unfit> {
        let schema = args();
        let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
        let shapes = shapes(&schema, &defs).expect("an object");
        check(&shapes, &defs, name)
    }

    #[test]
    fn optional_fields_a_form_can_show_fit() {
        for name in ["confirm", "plan", "count"] {
            assert_eq!(checked(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn other_fields_are_told_apart() {
        assert_eq!(checked("note"), Err(Unfit::Required));
        assert_eq!(
            checked("confrim"),
            Err(Unfit::Missing {
                closest: Some("confirm".to_owned())
            })
        );
        assert_eq!(checked("zzz"), Err(Unfit::Missing { closest: None }));
        assert!(matches!(checked("address"), Err(Unfit::Unshowable { .. })));
        assert!(matches!(checked("tags"), Err(Unfit::Unshowable { .. })));
    }

    #[test]
    fn the_form_asks_for_the_field_as_the_arguments_describe_it() {
        let schema = args();
        let form = |name| serde_json::to_value(super::form(&schema, &[name]).unwrap()).unwrap();
        assert_eq!(
            form("confirm"),
            json!({
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "description": "Delete for good."}},
                "required": ["confirm"],
            })
        );
        assert_eq!(
            form("plan")["properties"]["plan"],
            json!({"type": "string", "oneOf": [
                {"const": "free", "title": "Free"},
                {"const": "pro", "title": "Pro"},
            ]})
        );
        assert_eq!(
            form("count")["properties"]["count"],
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert!(super::form(&schema, &["address"]).is_none());
        assert!(super::form(&schema, &["confirm", "address"]).is_none());
        let both = serde_json::to_value(super::form(&schema, &["plan", "confirm"]).unwrap());
        let both = both.unwrap();
        assert_eq!(both["required"], json!(["plan", "confirm"]));
    }
}
