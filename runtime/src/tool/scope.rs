//! An action's own rules in a grouped tool's schema: what the merged fields do not say of it
//! (its `required`, its closure, its composition and conditionals: `allOf`, `anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, ...), each applying only
//! when the call chooses it: `allOf: [{"if": {action is "get"}, "then": {get's rules}}]`. With
//! them, the listed schema accepts a call exactly when the server does.

use serde_json::{Map, Value, json};

use super::object_schema::def_name;

/// Root keywords the merged schema states for every action already, or that say nothing of a
/// value (annotations): left out of an action's rules.
const MERGED: [&str; 14] = [
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "properties",
    "type",
];

/// How a grouped schema lists the fields: for each field shown as one schema (every action
/// that declares it declares it alike), that schema.
pub(super) struct Listed<'a> {
    /// The discriminator's name.
    pub(super) discriminator: &'a str,
    /// The fields shown, each with its one schema, or `None` where actions differ.
    pub(super) fields: Vec<(&'a str, Option<&'a Value>)>,
    /// Whether the root refuses undeclared fields.
    pub(super) closed: bool,
    /// The grouped `$defs`, where a `$ref` of the rules is looked up.
    pub(super) defs: &'a Map<String, Value>,
}

/// The `allOf` entry that applies `schema` (an action's root, its references already renamed
/// as the grouped schema names them) when the call chooses `action`; `None` when the merged
/// fields say all of it.
pub(super) fn scoped(action: &str, schema: &Value, listed: &Listed<'_>) -> Option<Value> {
    let root = schema.as_object()?;
    let mut rules: Map<String, Value> = root
        .iter()
        .filter(|(k, _)| !MERGED.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(t) = root.get("type").filter(|t| *t != "object") {
        rules.insert("type".into(), t.clone());
    }
    if rules
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        rules.remove("required");
    }
    let own: Map<String, Value> = root
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // Closed alike by the root: every listed field is the action's own, and nothing else can
    // be declared by a pattern.
    let closed_alike = listed.closed
        && rules.get("additionalProperties") == Some(&Value::Bool(false))
        && !rules.contains_key("patternProperties")
        && listed
            .fields
            .iter()
            .all(|(f, _)| *f == listed.discriminator || own.contains_key(*f));
    if closed_alike {
        rules.remove("additionalProperties");
    }
    let closes = ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|k| rules.get(*k).is_some_and(|v| *v != Value::Bool(true)));
    // A field listed as this action declares it says nothing more here; one listed as each
    // action's alternative is checked as this one declares it.
    let mut properties = Map::new();
    for (field, declared) in own {
        let declared = match declared {
            Value::Bool(true) => json!({}),
            other => other,
        };
        let alike = (listed.fields.iter()).any(|(f, s)| *f == field && *s == Some(&declared));
        match alike {
            true if closes => {
                properties.insert(field, Value::Bool(true));
            }
            true => {}
            false => {
                // Its words are the listed alternative's already.
                let mut declared = declared;
                let shown = listed.fields.iter().any(|(f, _)| *f == field);
                if let Value::Object(node) = &mut declared
                    && shown
                {
                    node.remove("description");
                    node.remove("title");
                }
                properties.insert(field, declared);
            }
        }
    }
    if !properties.is_empty() {
        rules.insert("properties".into(), Value::Object(properties));
    }
    let mut rules = Value::Object(rules);
    admit(&mut rules, listed.discriminator, listed.defs, 0);
    if rules.as_object().is_some_and(Map::is_empty) {
        return None;
    }
    Some(json!({
        "if": {
            "properties": {listed.discriminator: {"const": action}},
            "required": [listed.discriminator],
        },
        "then": rules,
    }))
}

/// How deep references are followed (and copied in) before a chain is left as it is.
const MAX_DEPTH: usize = 16;

/// Makes every schema that applies to the arguments object itself (the rules, and in place
/// below them: `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`) read
/// the discriminator as the server does, which removes it before validating: declared (so not
/// unknown, nor checked by `additionalProperties`), any key for `propertyNames`, not counted by
/// `minProperties` / `maxProperties`. A `$ref` to a definition that needs this is replaced
/// by a copy of it (the definition itself also serves nested values, which have no
/// discriminator).
fn admit(node: &mut Value, discriminator: &str, defs: &Map<String, Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Value::Object(map) = node else { return };
    if let Some(target) = (map.get("$ref").and_then(Value::as_str))
        .and_then(def_name)
        .and_then(|name| defs.get(&name))
        .filter(|target| needs(target, defs, depth + 1))
    {
        // The server reads a `$ref` as its target, keywords beside it aside.
        let mut copy = target.clone();
        if let Value::Object(copy) = &mut copy {
            // An identifier names one place.
            for key in ["$anchor", "$dynamicAnchor", "$id"] {
                copy.remove(key);
            }
        }
        *node = copy;
        return admit(node, discriminator, defs, depth + 1);
    }
    if ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|k| map.get(*k).is_some_and(|v| *v != Value::Bool(true)))
    {
        let properties = map
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert(discriminator.to_owned(), Value::Bool(true));
        }
    }
    if let Some(names) = map.remove("propertyNames") {
        map.insert(
            "propertyNames".into(),
            json!({"anyOf": [{"const": discriminator}, names]}),
        );
    }
    for key in ["minProperties", "maxProperties"] {
        if let Some(n) = map.get_mut(key)
            && let Some(count) = n.as_u64()
        {
            *n = json!(count + 1);
        }
    }
    for (keyword, value) in map.iter_mut() {
        match (keyword.as_str(), value) {
            ("allOf" | "anyOf" | "oneOf", Value::Array(list)) => list
                .iter_mut()
                .for_each(|v| admit(v, discriminator, defs, depth + 1)),
            ("not" | "if" | "then" | "else", sub) => admit(sub, discriminator, defs, depth + 1),
            ("dependentSchemas", Value::Object(named)) => named
                .values_mut()
                .for_each(|v| admit(v, discriminator, defs, depth + 1)),
            _ => {}
        }
    }
}

/// Whether a schema, or one in place below it, counts or closes the keys of the object it
/// applies to (see [`admit`]).
fn needs(node: &Value, defs: &Map<String, Value>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Value::Object(map) = node else {
        return false;
    };
    if let Some(target) = (map.get("$ref").and_then(Value::as_str))
        .and_then(def_name)
        .and_then(|name| defs.get(&name))
    {
        return needs(target, defs, depth + 1);
    }
    let counts = ["propertyNames", "minProperties", "maxProperties"]
        .iter()
        .any(|k| map.contains_key(*k))
        || ["additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|k| map.get(*k).is_some_and(|v| *v != Value::Bool(true)));
    counts
        || map
            .iter()
            .any(|(keyword, value)| match (keyword.as_str(), value) {
                ("allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                    list.iter().any(|v| needs(v, defs, depth + 1))
                }
                ("not" | "if" | "then" | "else", sub) => needs(sub, defs, depth + 1),
                ("dependentSchemas", Value::Object(named)) => {
                    named.values().any(|v| needs(v, defs, depth + 1))
                }
                _ => false,
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed<'a>(
        defs: &'a Map<String, Value>,
        fields: Vec<(&'a str, Option<&'a Value>)>,
    ) -> Listed<'a> {
        Listed {
            discriminator: "action",
            fields,
            closed: true,
            defs,
        }
    }

    #[test]
    fn rules_the_merged_fields_say_are_left_out() {
        let defs = Map::new();
        let id = json!({"type": "string"});
        let schema = json!({"type": "object", "properties": {"id": {"type": "string"}},
                            "additionalProperties": false, "description": "Gets."});
        assert_eq!(
            scoped("get", &schema, &listed(&defs, vec![("id", Some(&id))])),
            None
        );
    }

    #[test]
    fn an_action_closed_among_wider_fields_declares_the_discriminator() {
        let defs = Map::new();
        let id = json!({"type": "string"});
        let schema = json!({"type": "object", "properties": {"id": {"type": "string"}},
                            "required": ["id"], "additionalProperties": false,
                            "allOf": [{"not": {"maxProperties": 0}}]});
        let fields = vec![("id", Some(&id)), ("note", None)];
        let entry = scoped("get", &schema, &listed(&defs, fields)).unwrap();
        assert_eq!(
            entry,
            json!({
                "if": {"properties": {"action": {"const": "get"}}, "required": ["action"]},
                "then": {
                    "required": ["id"],
                    "additionalProperties": false,
                    "allOf": [{"not": {"maxProperties": 1}}],
                    "properties": {"id": true, "action": true},
                },
            })
        );
    }

    #[test]
    fn a_field_listed_as_alternatives_is_checked_as_the_action_declares_it() {
        let defs = Map::new();
        let schema = json!({"type": "object",
                            "properties": {"id": {"type": "integer", "description": "The number."}}});
        let entry = scoped("get", &schema, &listed(&defs, vec![("id", None)])).unwrap();
        // Described once, by the listed alternative.
        assert_eq!(
            entry["then"],
            json!({"properties": {"id": {"type": "integer"}}})
        );
    }

    #[test]
    fn a_reference_in_place_to_a_closed_definition_is_copied_in() {
        let mut defs = Map::new();
        defs.insert(
            "A".into(),
            json!({"$anchor": "a", "properties": {"x": {}}, "additionalProperties": false}),
        );
        let schema = json!({"oneOf": [{"$ref": "#/$defs/A"}, {"required": ["y"]}]});
        let entry = scoped("get", &schema, &listed(&defs, vec![])).unwrap();
        assert_eq!(
            entry["then"]["oneOf"][0],
            json!({"properties": {"x": {}, "action": true}, "additionalProperties": false})
        );
        assert_eq!(entry["then"]["oneOf"][1], json!({"required": ["y"]}));
    }
}
