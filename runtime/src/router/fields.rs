//! Which fields an action takes (ERRORS.md §11.1): those its argument schema declares, read
//! once from the schema as it is advertised.

use serde_json::{Map, Value};

use crate::validate::pointer::of_reference;

/// The fields one action takes: the names of its `properties`, and the patterns of its
/// `patternProperties` (ECMA-262, as validation reads them).
#[derive(Default)]
pub(super) struct Takes {
    names: Vec<String>,
    patterns: Vec<jsonschema::Validator>,
}

impl std::fmt::Debug for Takes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Takes")
            .field("names", &self.names)
            .field("patterns", &self.patterns.len())
            .finish()
    }
}

impl Takes {
    /// What `schema` declares, read as its target when it holds a `$ref` (through any chain;
    /// one that comes back on itself declares nothing). A pattern that does not compile takes
    /// no field (the schema would not have compiled for validation either).
    pub(super) fn of(schema: &Value) -> Self {
        let Some(declaring) = target(schema, schema) else {
            return Takes::default();
        };
        let names = match declaring.get("properties") {
            Some(Value::Object(properties)) => properties.keys().cloned().collect(),
            _ => Vec::new(),
        };
        let patterns = match declaring.get("patternProperties") {
            Some(Value::Object(patterns)) => patterns
                .keys()
                .filter_map(|pattern| {
                    jsonschema::options()
                        .with_draft(jsonschema::Draft::Draft202012)
                        .build(&serde_json::json!({"pattern": pattern}))
                        .ok()
                })
                .collect(),
            _ => Vec::new(),
        };
        Takes { names, patterns }
    }

    /// Whether the action takes the field `name`.
    pub(super) fn takes(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
            || (!self.patterns.is_empty() && {
                let name = Value::String(name.to_owned());
                self.patterns.iter().any(|p| p.is_valid(&name))
            })
    }
}

/// The schema `schema` stands for: itself, or the end of its chain of local references into
/// `root`; `None` when the chain comes back on itself or names no place.
fn target<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Map<String, Value>> {
    let mut at = schema.as_object()?;
    let mut followed: Vec<&str> = Vec::new();
    while let Some(reference) = at.get("$ref").and_then(Value::as_str) {
        if followed.contains(&reference) {
            return None;
        }
        followed.push(reference);
        at = root.pointer(&of_reference(reference)?)?.as_object()?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn declared_fields_names_and_patterns_behind_a_reference() {
        let schema = json!({
            "$ref": "#/$defs/Args",
            "$defs": {"Args": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "patternProperties": {"^x-": {"type": "string"}}
            }}
        });
        let takes = Takes::of(&schema);
        assert!(takes.takes("id"));
        assert!(takes.takes("x-trace"));
        assert!(!takes.takes("limit"));
        // A map (`additionalProperties` schema) and an empty schema declare nothing.
        for nothing in [
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            json!({}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}),
            json!({"$ref": "#/$defs/Missing"}),
        ] {
            assert!(!Takes::of(&nothing).takes("id"), "{nothing}");
        }
    }
}
