//! Shaping schemas: the bounds of Rust integer types, the root object MCP requires, and the
//! flat input schema of a grouped tool.

use serde_json::{Map, Value, json};

use super::action::ActionDef;

/// Gives each integer whose Rust type schemars names in `format` (`uint32`, `int64`, ...) the
/// bounds of that type, unless the schema already has them: a value the type cannot hold is then
/// a field's "Too big" (with the limit), not a decoding failure of the whole arguments.
pub(super) fn bound_integers(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            let integer = match node.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            let range: Option<(Value, Value)> = match node.get("format").and_then(Value::as_str) {
                _ if !integer => None,
                Some("uint8") => Some((0.into(), u8::MAX.into())),
                Some("uint16") => Some((0.into(), u16::MAX.into())),
                Some("uint32") => Some((0.into(), u32::MAX.into())),
                Some("uint64" | "uint") => Some((0.into(), u64::MAX.into())),
                Some("int8") => Some((i8::MIN.into(), i8::MAX.into())),
                Some("int16") => Some((i16::MIN.into(), i16::MAX.into())),
                Some("int32") => Some((i32::MIN.into(), i32::MAX.into())),
                Some("int64" | "int") => Some((i64::MIN.into(), i64::MAX.into())),
                _ => None,
            };
            if let Some((min, max)) = range {
                if !node.contains_key("exclusiveMinimum") {
                    node.entry("minimum").or_insert(min);
                }
                if !node.contains_key("exclusiveMaximum") {
                    node.entry("maximum").or_insert(max);
                }
            }
            node.values_mut().for_each(bound_integers);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integers),
        _ => {}
    }
}

/// A schema as a root object schema (MCP requires `type: object` at the root).
pub(super) fn object_schema(schema: &Value) -> Map<String, Value> {
    let mut root = schema.as_object().cloned().unwrap_or_default();
    root.entry("type").or_insert_with(|| json!("object"));
    root
}

/// The input schema of a grouped tool, flat so that every MCP client shows it usefully: the
/// discriminator (an enum of the action names, each described), then every action's fields in
/// declaration order, each saying which actions take it and which require it.
pub(super) fn grouped_schema(discriminator: &str, actions: &[ActionDef]) -> Map<String, Value> {
    let names: Vec<&str> = actions.iter().map(|a| a.name.as_ref()).collect();
    let listing: Vec<String> = actions
        .iter()
        .map(|a| match &a.description {
            Some(d) => format!("{}: {}", a.name, first_line(d)),
            None => a.name.to_string(),
        })
        .collect();
    let mut properties = Map::new();
    properties.insert(
        discriminator.to_owned(),
        json!({"type": "string", "enum": names, "description": format!("The action to run. {}", listing.join("; "))}),
    );
    let mut used_by: Vec<(String, Vec<&str>, Vec<&str>)> = Vec::new();
    let mut defs = Map::new();
    for action in actions {
        let schema = &action.schema_value;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (field, field_schema) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if !properties.contains_key(field) {
                properties.insert(field.clone(), field_schema.clone());
                used_by.push((field.clone(), Vec::new(), Vec::new()));
            }
            if let Some((_, takes, requires)) = used_by.iter_mut().find(|(f, ..)| f == field) {
                takes.push(&action.name);
                if required.contains(&field.as_str()) {
                    requires.push(&action.name);
                }
            }
        }
        for (name, def) in schema
            .get("$defs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            defs.entry(name.clone()).or_insert_with(|| def.clone());
        }
    }
    for (field, takes, requires) in used_by {
        let Some(Value::Object(field_schema)) = properties.get_mut(&field) else {
            continue;
        };
        let mut note = format!("For {}", takes.join(", "));
        if !requires.is_empty() {
            note.push_str(&format!("; required by {}", requires.join(", ")));
        }
        note.push('.');
        let description = match field_schema.get("description").and_then(Value::as_str) {
            Some(d) => format!("{d} ({note})"),
            None => note,
        };
        field_schema.insert("description".into(), Value::String(description));
    }
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    root.insert("required".into(), json!([discriminator]));
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    root
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}
