//! The copy of a schema the validator compiles, adjusted to the contract (ERRORS.md §5), and
//! the map from a `$ref` in the schema as advertised to the same subschema in that copy.
//!
//! - A nullable alternative (`anyOf: [T, {"type": "null"}]`) becomes `if: {"type": "null"}`,
//!   `else: T`: null passes, any other value gets T's own problems where it stands.
//! - Alternatives of constants become an `enum` of their values (their originals are kept
//!   under [`STASH`], where a `$ref` may still point).
//! - `additionalProperties: false` without `properties` gets an empty `properties`, so every
//!   unexpected key is reported by name rather than as one failing `false` subschema.
//! - `format` is asserted only for the seven formats the contract names.
//! - Keywords beside a `$ref`, annotations aside, are dropped: the schema is read as its target.
//!
//! A `$ref` that points into alternatives moved this way is rewritten to the place they moved
//! to, so that any schema the validator accepts as advertised compiles here too.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::keywords::{NAMED_SUBSCHEMAS, SINGLE_SUBSCHEMAS, constants, is_annotation, nullable};
use super::pointer::{of_reference, to_reference, unescape};

/// Where the copy keeps alternatives of constants (`x-mcp-fusion-anyOf`): a keyword no
/// validator reads, so that a `$ref` into them still resolves.
pub(super) const STASH: &str = "x-mcp-fusion-";

const ASSERTED_FORMATS: [&str; 7] = ["email", "uri", "uuid", "date-time", "date", "ipv4", "ipv6"];

/// The validator's copy of `schema`.
pub(super) fn for_validator(schema: &Value) -> Value {
    let mut copy = schema.clone();
    adjust(&mut copy);
    redirect(&mut copy, schema, 0);
    copy
}

fn adjust(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if map.contains_key("$ref") {
        // Read as its target: keywords beside it other than annotations are ignored.
        map.retain(|k, v| k == "$ref" || k == "$defs" || k == "definitions" || is_annotation(k, v));
    }
    if let Some((keyword, t)) = nullable(map) {
        // T or null: null passes `if`; any other value is checked against T where it stands.
        let t = t.clone();
        map.remove(keyword);
        map.insert("if".into(), serde_json::json!({"type": "null"}));
        map.insert("else".into(), t);
    } else if let Some(values) = constants(map).filter(|_| !map.contains_key("enum")) {
        // An enum of the constants (the `type` beside each is not checked on its own).
        for keyword in ["anyOf", "oneOf"] {
            if let Some(alternatives) = map.remove(keyword) {
                map.insert(format!("{STASH}{keyword}"), alternatives);
            }
        }
        map.insert("enum".into(), Value::Array(values));
    }
    if map.get("additionalProperties") == Some(&Value::Bool(false))
        && !map.contains_key("properties")
    {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !ASSERTED_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    for (keyword, value) in map.iter_mut() {
        match (keyword.as_str(), value) {
            (k, Value::Object(named)) if k == "properties" || NAMED_SUBSCHEMAS.contains(&k) => {
                named.values_mut().for_each(adjust);
            }
            ("items" | "prefixItems" | "allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                list.iter_mut().for_each(adjust)
            }
            (k, sub) if k == "items" || SINGLE_SUBSCHEMAS.contains(&k) => adjust(sub),
            _ => {}
        }
    }
}

/// Rewrites every local `$ref` of the copy that points into moved alternatives.
fn redirect(value: &mut Value, original: &Value, depth: usize) {
    if depth > 256 {
        return;
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some(pointer) = of_reference(reference)
                && let Cow::Owned(moved) = in_copy(original, &pointer)
            {
                *reference = to_reference(&moved);
            }
            map.values_mut()
                .for_each(|v| redirect(v, original, depth + 1));
        }
        Value::Array(list) => list
            .iter_mut()
            .for_each(|v| redirect(v, original, depth + 1)),
        _ => {}
    }
}

/// Where the subschema at `pointer` (a JSON pointer into the schema as advertised) sits in the
/// validator's copy: the same pointer, except through alternatives the copy moved (a nullable
/// alternative's T is at `else`, its null at `if`; alternatives of constants under [`STASH`]).
pub(super) fn in_copy<'p>(schema: &Value, pointer: &'p str) -> Cow<'p, str> {
    let mut node = Some(schema);
    let mut out = String::new();
    let mut moved = false;
    let mut segments = pointer.split('/').skip(1);
    while let Some(segment) = segments.next() {
        let map = node.and_then(Value::as_object);
        let name = unescape(segment);
        if let Some((keyword, t)) = map.and_then(nullable).filter(|(k, _)| *k == name) {
            let index = segments.next().unwrap_or_default();
            let chosen = map
                .and_then(|m| m.get(keyword))
                .and_then(|v| v.get(index.parse::<usize>().ok()?));
            let is_t = chosen.is_some_and(|c| std::ptr::eq(c, t));
            out.push_str(if is_t { "/else" } else { "/if" });
            node = chosen;
            moved = true;
            continue;
        }
        let constants_here = map.is_some_and(|m| {
            (name == "anyOf" || name == "oneOf")
                && !m.contains_key("enum")
                && !m.contains_key("$ref")
                && nullable(m).is_none()
                && constants(m).is_some()
        });
        out.push('/');
        if constants_here {
            out.push_str(STASH);
            moved = true;
        }
        out.push_str(segment);
        node = match node {
            Some(Value::Object(m)) => m.get(&*name),
            Some(Value::Array(list)) => segment.parse::<usize>().ok().and_then(|i| list.get(i)),
            _ => None,
        };
    }
    if moved {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(pointer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_through_moved_alternatives_follow_them() {
        let schema = json!({"$defs": {
            "Opt": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"a/b": {"type": "string"}}}]},
            "Level": {"oneOf": [{"const": 1}, {"const": 2}]},
            "Plain": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        }});
        assert_eq!(
            in_copy(&schema, "/$defs/Opt/anyOf/1/properties/a~1b"),
            "/$defs/Opt/else/properties/a~1b"
        );
        assert_eq!(in_copy(&schema, "/$defs/Opt/anyOf/0"), "/$defs/Opt/if");
        assert_eq!(
            in_copy(&schema, "/$defs/Level/oneOf/1"),
            format!("/$defs/Level/{STASH}oneOf/1")
        );
        assert!(matches!(
            in_copy(&schema, "/$defs/Plain/anyOf/1"),
            Cow::Borrowed(_)
        ));
    }
}
