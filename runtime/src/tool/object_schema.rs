//! One schema as MCP and the contract want it: the root object MCP requires, the bounds of Rust
//! integer types, arguments closed by default, and the shapes arguments may take.

use serde_json::{Map, Value, json};

use crate::validate::pointer::{of_reference, unescape};

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

/// Closes an action's arguments where the schema does not say otherwise: `additionalProperties:
/// false` on a root object schema, or on each object alternative of a `oneOf` / `anyOf` root (a
/// tagged enum). `allOf` parts are left alone (each would refuse the others' fields). Returns
/// whether anything was added.
pub(super) fn close(schema: &mut Value) -> bool {
    let Some(root) = schema.as_object_mut() else {
        return false;
    };
    if is_object_shape(root) {
        return close_one(root);
    }
    let mut closed = false;
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(alternatives)) = root.get_mut(key) {
            for alternative in alternatives.iter_mut().filter_map(Value::as_object_mut) {
                if is_object_shape(alternative) {
                    closed |= close_one(alternative);
                }
            }
        }
    }
    closed
}

fn close_one(node: &mut Map<String, Value>) -> bool {
    if node.contains_key("additionalProperties") || node.contains_key("unevaluatedProperties") {
        return false;
    }
    node.insert("additionalProperties".into(), Value::Bool(false));
    true
}

/// An object with its own `properties`, not a composition or a reference.
fn is_object_shape(node: &Map<String, Value>) -> bool {
    has_fields(node)
        && !["allOf", "anyOf", "oneOf"]
            .iter()
            .any(|k| node.contains_key(*k))
}

/// Whether a call may send fields the arguments do not declare.
pub(super) fn is_open(schema: &Value) -> bool {
    let closed = |node: &Map<String, Value>| {
        node.get("additionalProperties") == Some(&Value::Bool(false))
            || node.get("unevaluatedProperties") == Some(&Value::Bool(false))
    };
    let Some(root) = schema.as_object() else {
        return true;
    };
    if closed(root) {
        return false;
    }
    let alternatives: Vec<&Map<String, Value>> = ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| root.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_object)
        .collect();
    alternatives.is_empty() || !alternatives.iter().all(|a| closed(a))
}

/// The shapes an action's arguments may take: the root object, or each object alternative of
/// a `oneOf` / `anyOf` root (a `$ref` alternative looked up in `defs`); a root object with
/// rules beside its fields (`allOf`, `if`/`then`/`else`, `not`, alternatives that are no
/// objects of their own) is its one shape. `None` when the root is no object at all (a string,
/// an array, an `allOf` of parts): the arguments of a call are an object.
pub(super) fn shapes<'a>(
    schema: &'a Value,
    defs: &'a Map<String, Value>,
) -> Option<Vec<&'a Map<String, Value>>> {
    let root = schema.as_object()?;
    if is_object_shape(root) || is_empty_object(root) {
        return Some(vec![root]);
    }
    alternatives(root, defs).or_else(|| has_fields(root).then(|| vec![root]))
}

/// An object with its own `properties`, whatever rules stand beside them (no `$ref`, which
/// the server reads as its target alone).
fn has_fields(node: &Map<String, Value>) -> bool {
    let typed_object = match node.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
    };
    typed_object
        && node.get("properties").is_some_and(Value::is_object)
        && !node.contains_key("$ref")
}

/// Each object alternative of a `oneOf` / `anyOf` root, when every alternative is one.
fn alternatives<'a>(
    root: &'a Map<String, Value>,
    defs: &'a Map<String, Value>,
) -> Option<Vec<&'a Map<String, Value>>> {
    let mut found = Vec::new();
    for key in ["oneOf", "anyOf"] {
        for alternative in root
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let resolved = match alternative.get("$ref").and_then(Value::as_str) {
                Some(pointer) => def_name(pointer).and_then(|name| defs.get(&name)),
                None => Some(alternative),
            };
            let node = resolved.and_then(Value::as_object)?;
            if !(is_object_shape(node) || is_empty_object(node)) {
                return None;
            }
            found.push(node);
        }
    }
    (!found.is_empty()).then_some(found)
}

/// `{"type": "object"}` with no properties (an action whose arguments are a unit struct).
fn is_empty_object(node: &Map<String, Value>) -> bool {
    node.get("type").and_then(Value::as_str) == Some("object")
        && !["properties", "allOf", "anyOf", "oneOf", "$ref"]
            .iter()
            .any(|k| node.contains_key(*k))
}

/// The `$defs` entry a local reference names (`#/$defs/Status` → `Status`).
pub(super) fn def_name(reference: &str) -> Option<String> {
    let pointer = of_reference(reference)?;
    let escaped = pointer.strip_prefix("/$defs/")?;
    (!escaped.contains('/')).then(|| unescape(escaped).into_owned())
}
