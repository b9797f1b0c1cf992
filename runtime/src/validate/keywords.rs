//! What JSON Schema keywords are to the contract: which hold subschemas, which only annotate,
//! the asserted formats, and the shapes of alternatives read as one thing (nullable, constants).

use serde_json::{Map, Value};

/// Keywords whose value is a map of names to subschemas (`properties` aside).
pub(super) const NAMED_SUBSCHEMAS: [&str; 4] = [
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// Keywords whose value is one subschema (`items` aside).
pub(super) const SINGLE_SUBSCHEMAS: [&str; 10] = [
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];

/// The noun of an asserted format (its expectation without `Expected ` and the period).
pub(super) fn format_noun(format: &str) -> Option<&'static str> {
    Some(match format {
        "email" => "a valid email address",
        "uri" => "a valid URL (e.g. https://example.com)",
        "uuid" => "a valid UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
        "date-time" => "an ISO 8601 date-time (e.g. 2024-01-15T10:30:00Z)",
        "date" => "an ISO 8601 date (e.g. 2024-01-15)",
        "ipv4" => "a valid IPv4 address",
        "ipv6" => "a valid IPv6 address",
        _ => return None,
    })
}

/// Keywords that only annotate a schema (ERRORS.md §5), `format` aside.
const ANNOTATIONS: [&str; 10] = [
    "title",
    "description",
    "$comment",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
];

pub(super) fn is_annotation(keyword: &str, value: &Value) -> bool {
    ANNOTATIONS.contains(&keyword)
        || (keyword == "format" && value.as_str().is_none_or(|f| format_noun(f).is_none()))
}

/// A nullable alternative: `anyOf` / `oneOf` of exactly two, one exactly `{"type": "null"}`.
/// Gives the keyword and T.
/// Not when the schema already uses `if`/`then`/`else` (the validator's copy needs them).
pub(super) fn nullable(map: &Map<String, Value>) -> Option<(&'static str, &Value)> {
    if ["if", "then", "else"].iter().any(|k| map.contains_key(*k)) {
        return None;
    }
    let null = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type") == Some(&Value::String("null".into())))
    };
    ["anyOf", "oneOf"].into_iter().find_map(|keyword| {
        let [a, b] = map.get(keyword)?.as_array()?.as_slice() else {
            return None;
        };
        match (null(a), null(b)) {
            (false, true) => Some((keyword, a)),
            (true, false) => Some((keyword, b)),
            _ => None,
        }
    })
}

/// Alternatives of constants: `anyOf` / `oneOf` whose alternatives each hold a `const` or an
/// `enum` beside annotations and a `type`. Gives their values, in order.
pub(super) fn constants(map: &Map<String, Value>) -> Option<Vec<Value>> {
    ["anyOf", "oneOf"].into_iter().find_map(|keyword| {
        let alternatives = map.get(keyword)?.as_array()?;
        let mut values = Vec::new();
        for alternative in alternatives {
            let alternative = alternative.as_object()?;
            let mut found = false;
            for (key, value) in alternative {
                match (key.as_str(), value) {
                    ("const", value) => values.push(value.clone()),
                    ("enum", Value::Array(list)) => values.extend(list.iter().cloned()),
                    ("type", _) => continue,
                    (key, value) if is_annotation(key, value) => continue,
                    _ => return None,
                }
                found = true;
            }
            if !found {
                return None;
            }
        }
        (!alternatives.is_empty()).then_some(values)
    })
}
