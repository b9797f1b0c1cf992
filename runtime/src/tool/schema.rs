//! The faithful input schema of a grouped tool: every action's fields under one object, a
//! discriminator naming the actions, and their definitions without collisions.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::action::ActionDef;
use super::object_schema::{def_name, is_open, shapes};
use crate::validate::pointer::{escape, to_reference};

fn def_pointer(name: &str) -> String {
    to_reference(&format!("/$defs/{}", escape(name)))
}

/// Every local reference in a schema: `$defs` names, and `"#"` (the root) as `None`.
fn references(schema: &Value, found: &mut Vec<Option<String>>) {
    match schema {
        Value::Object(node) => {
            if let Some(pointer) = node.get("$ref").and_then(Value::as_str) {
                if pointer == "#" {
                    found.push(None);
                } else if let Some(name) = def_name(pointer) {
                    found.push(Some(name));
                }
            }
            node.values().for_each(|v| references(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, found)),
        _ => {}
    }
}

/// Rewrites local references: `$defs` names through `names`, `"#"` to `root`.
fn rewrite(schema: &mut Value, names: &HashMap<String, String>, root: Option<&str>) {
    match schema {
        Value::Object(node) => {
            if let Some(Value::String(pointer)) = node.get_mut("$ref") {
                if pointer == "#" {
                    if let Some(root) = root {
                        *pointer = def_pointer(root);
                    }
                } else if let Some(renamed) = def_name(pointer).and_then(|n| names.get(&n)) {
                    *pointer = def_pointer(renamed);
                }
            }
            node.values_mut().for_each(|v| rewrite(v, names, root));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, names, root)),
        _ => {}
    }
}

/// The name each action's `$defs` entries take in the grouped schema: their own where every
/// action that has one means the same thing by it (the same definition, referring only to
/// names shared the same way), else namespaced by the action (`get.Status`).
fn def_names(actions: &[ActionDef]) -> Vec<HashMap<String, String>> {
    let own = |a: &ActionDef| {
        a.schema_value
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
    };
    let all: Vec<Map<String, Value>> = actions.iter().map(|a| own(a).unwrap_or_default()).collect();
    let mut shared: Vec<String> = Vec::new();
    for defs in &all {
        for (name, def) in defs {
            let same_everywhere = all
                .iter()
                .filter_map(|other| other.get(name))
                .all(|other| other == def);
            if same_everywhere && !shared.contains(name) {
                shared.push(name.clone());
            }
        }
    }
    loop {
        let before = shared.len();
        let keep: Vec<bool> = shared
            .iter()
            .map(|name| {
                let def = all.iter().find_map(|d| d.get(name)).unwrap_or(&Value::Null);
                let mut refs = Vec::new();
                references(def, &mut refs);
                refs.iter()
                    .all(|r| r.as_ref().is_some_and(|n| shared.contains(n)))
            })
            .collect();
        let mut flags = keep.into_iter();
        shared.retain(|_| flags.next().unwrap_or(false));
        if shared.len() == before {
            break;
        }
    }
    actions
        .iter()
        .zip(&all)
        .map(|(action, defs)| {
            defs.keys()
                .map(|name| {
                    let renamed = match shared.contains(name) {
                        true => name.clone(),
                        false => format!("{}.{name}", action.name),
                    };
                    (name.clone(), renamed)
                })
                .collect()
        })
        .collect()
}

/// The input schema of a grouped tool, faithful to what each action validates and flat, so
/// that every MCP client shows it usefully: the discriminator (an enum of the action names, each
/// described with its hints and deprecation), then every action's fields in declaration order.
/// A field several actions declare alike is shown once; one they declare differently is shown
/// as the alternatives (`anyOf`), each noting its actions. `$defs` names never collide (an
/// action's own are namespaced when they differ) and a recursive action's `"#"` points at its
/// own root. Fields no action declares are refused unless an action accepts unknown fields.
pub(super) fn grouped_schema(discriminator: &str, actions: &[ActionDef]) -> Map<String, Value> {
    let renames = def_names(actions);
    let mut defs = Map::new();
    // Per field, in order of first appearance, what each action declares.
    let mut fields: Vec<(String, Vec<Declared>)> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let mut schema = action.schema_value.clone();
        let own_defs = schema
            .as_object_mut()
            .and_then(|root| root.remove("$defs"))
            .and_then(|d| match d {
                Value::Object(d) => Some(d),
                _ => None,
            })
            .unwrap_or_default();
        let mut refs = Vec::new();
        references(&schema, &mut refs);
        own_defs.values().for_each(|d| references(d, &mut refs));
        let root = refs.contains(&None).then(|| action.name.to_string());
        rewrite(&mut schema, &renames[i], root.as_deref());
        for (name, mut def) in own_defs {
            rewrite(&mut def, &renames[i], root.as_deref());
            let renamed = renames[i].get(&name).cloned().unwrap_or(name);
            defs.entry(renamed).or_insert(def);
        }
        if let Some(root) = &root {
            let mut def = schema.clone();
            if let Some(def) = def.as_object_mut() {
                def.remove("$schema");
            }
            defs.insert(root.clone(), def);
        }
        let Some(shapes) = shapes(&schema, &defs) else {
            continue;
        };
        let count = shapes.len();
        let mut seen: Vec<(String, Value, usize)> = Vec::new();
        for shape in shapes {
            let required: Vec<&str> = shape
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (field, field_schema) in shape
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let field_schema = match field_schema {
                    Value::Bool(true) => json!({}),
                    other => other.clone(),
                };
                let req = usize::from(required.contains(&field.as_str()));
                match seen
                    .iter_mut()
                    .find(|(f, s, _)| f == field && *s == field_schema)
                {
                    Some(entry) => entry.2 += req,
                    None => seen.push((field.clone(), field_schema, req)),
                }
            }
        }
        for (field, field_schema, required_in) in seen {
            // Required by the action when every shape requires it.
            let required = count > 0 && required_in == count;
            let entry = match fields.iter_mut().find(|(f, _)| *f == field) {
                Some(entry) => entry,
                None => {
                    fields.push((field.clone(), Vec::new()));
                    fields.last_mut().expect("just pushed")
                }
            };
            entry.1.push((i, field_schema, required));
        }
    }
    let mut properties = Map::new();
    properties.insert(discriminator.to_owned(), discriminator_schema(actions));
    for (field, declared) in fields {
        if field == discriminator {
            // Refused when the tool is registered; never shown as the discriminator.
            continue;
        }
        properties.insert(field, field_schema(actions, declared));
    }
    let mut root = Map::new();
    // The draft every action's schema names, kept as SEP-1613 asks.
    let drafts: Vec<Option<&Value>> = (actions.iter())
        .map(|a| a.schema_value.get("$schema"))
        .collect();
    if let Some(Some(draft)) = drafts.first()
        && drafts.iter().all(|d| *d == Some(*draft))
    {
        root.insert("$schema".into(), (*draft).clone());
    }
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    root.insert("required".into(), json!([discriminator]));
    if !actions.iter().any(|a| is_open(&a.schema_value)) {
        root.insert("additionalProperties".into(), Value::Bool(false));
    }
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    root
}

/// What one action declares of a field: the action's index, the field's schema, and whether
/// the action requires it.
type Declared = (usize, Value, bool);

/// The discriminator: the action names, each described with what the model should know before
/// calling it (read-only, destructive, deprecated and what replaces it).
fn discriminator_schema(actions: &[ActionDef]) -> Value {
    let names: Vec<&str> = actions.iter().map(|a| a.name.as_ref()).collect();
    let listing: Vec<String> = actions
        .iter()
        .map(|a| {
            let mut marks = Vec::new();
            if a.annotations.read_only == Some(true) {
                marks.push("read-only".to_owned());
            }
            if a.annotations.destructive == Some(true) {
                marks.push("destructive".to_owned());
            }
            if let Some(deprecated) = &a.deprecated {
                marks.push(match &deprecated.replacement {
                    Some(r) => format!("deprecated, use {r} instead"),
                    None => "deprecated".to_owned(),
                });
            }
            let mut line = a.name.to_string();
            if !marks.is_empty() {
                line.push_str(&format!(" ({})", marks.join("; ")));
            }
            if let Some(d) = &a.description {
                line.push_str(&format!(": {}", first_line(d)));
            }
            line
        })
        .collect();
    json!({
        "type": "string",
        "enum": names,
        "description": format!("The action to run. {}", listing.join("; ")),
    })
}

/// One field of the grouped schema from what each action declares for it.
fn field_schema(actions: &[ActionDef], declared: Vec<Declared>) -> Value {
    let takes: Vec<&str> = dedup(declared.iter().map(|(i, ..)| actions[*i].name.as_ref()));
    let requires: Vec<&str> = dedup(
        declared
            .iter()
            .filter(|(.., r)| *r)
            .map(|(i, ..)| actions[*i].name.as_ref()),
    );
    let note = |takes: &[&str], requires: &[&str]| {
        let mut note = format!("For {}", takes.join(", "));
        if !requires.is_empty() {
            note.push_str(&format!("; required by {}", requires.join(", ")));
        }
        note.push('.');
        note
    };
    // The distinct schemas, each with the actions that declare it.
    let mut alternatives: Vec<(Value, Vec<&str>, Vec<&str>)> = Vec::new();
    for (i, schema, required) in &declared {
        let name = actions[*i].name.as_ref();
        let at = match alternatives.iter().position(|(s, ..)| s == schema) {
            Some(at) => at,
            None => {
                alternatives.push((schema.clone(), Vec::new(), Vec::new()));
                alternatives.len() - 1
            }
        };
        let (_, takes, requires) = &mut alternatives[at];
        if !takes.contains(&name) {
            takes.push(name);
        }
        if *required && !requires.contains(&name) {
            requires.push(name);
        }
    }
    let described = |mut schema: Value, note: String| {
        if let Value::Object(node) = &mut schema {
            let description = match node.get("description").and_then(Value::as_str) {
                Some(d) => format!("{d} ({note})"),
                None => note,
            };
            node.insert("description".into(), Value::String(description));
        }
        schema
    };
    if alternatives.len() == 1 {
        let (schema, ..) = alternatives.remove(0);
        return described(schema, note(&takes, &requires));
    }
    let any_of: Vec<Value> = alternatives
        .into_iter()
        .map(|(schema, takes, requires)| described(schema, note(&takes, &requires)))
        .collect();
    json!({
        "anyOf": any_of,
        "description": format!(
            "{} Its accepted values depend on the action: one alternative per schema, each saying its actions.",
            note(&takes, &requires)
        ),
    })
}

fn dedup<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}
