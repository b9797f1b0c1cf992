//! The faithful input schema of a grouped tool: every action's fields under one object, a
//! discriminator naming the actions, and their definitions without collisions.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::action::ActionDef;
use super::object_schema::{def_name, is_open, shapes};
use super::scope::{Listed, scoped};
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

/// How one action's schema is renamed in the grouped one: its `$defs` names, its anchors, and
/// the definition its `"#"` points at.
struct Renames<'a> {
    defs: &'a HashMap<String, String>,
    anchors: &'a HashMap<String, String>,
    root: Option<&'a str>,
}

/// Rewrites local references: `$defs` names and anchors (`#name`) through `renames`, `"#"` to
/// its root; and the anchors themselves.
fn rewrite(schema: &mut Value, renames: &Renames<'_>) {
    match schema {
        Value::Object(node) => {
            if let Some(Value::String(pointer)) = node.get_mut("$ref") {
                if pointer == "#" {
                    if let Some(root) = renames.root {
                        *pointer = def_pointer(root);
                    }
                } else if let Some(renamed) = def_name(pointer).and_then(|n| renames.defs.get(&n)) {
                    *pointer = def_pointer(renamed);
                } else if let Some(renamed) =
                    (pointer.strip_prefix('#')).and_then(|anchor| renames.anchors.get(anchor))
                {
                    *pointer = format!("#{renamed}");
                }
            }
            for key in ANCHORS {
                if let Some(Value::String(anchor)) = node.get_mut(key)
                    && let Some(renamed) = renames.anchors.get(anchor.as_str())
                {
                    *anchor = renamed.clone();
                }
            }
            node.values_mut().for_each(|v| rewrite(v, renames));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, renames)),
        _ => {}
    }
}

/// The keywords that name a place of a schema for `$ref` (`#name`).
const ANCHORS: [&str; 2] = ["$anchor", "$dynamicAnchor"];

/// Every anchor a schema names.
fn anchors(schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(node) => {
            for key in ANCHORS {
                if let Some(Value::String(anchor)) = node.get(key) {
                    found.push(anchor.clone());
                }
            }
            node.values().for_each(|v| anchors(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| anchors(v, found)),
        _ => {}
    }
}

/// The name each action's anchors take in the grouped schema: their own, unless the anchor is
/// named in another place too (another action's own parts, or a definition they share), then
/// namespaced by the action (`get.addressDef`), as its `$defs` are. An anchor in a definition
/// the actions share is one place, kept as it is.
fn anchor_names(
    actions: &[ActionDef],
    defs: &[HashMap<String, String>],
) -> Vec<HashMap<String, String>> {
    let mut counted: HashMap<String, usize> = HashMap::new();
    let mut shared_seen: Vec<&str> = Vec::new();
    let mut own: Vec<Vec<String>> = Vec::new();
    for (action, renames) in actions.iter().zip(defs) {
        let mut mine = Vec::new();
        let Some(root) = action.schema_value.as_object() else {
            own.push(mine);
            continue;
        };
        for (key, value) in root {
            if key != "$defs" {
                anchors(value, &mut mine);
            }
        }
        for key in ANCHORS {
            if let Some(Value::String(anchor)) = root.get(key) {
                mine.push(anchor.clone());
            }
        }
        let own_defs = root.get("$defs").and_then(Value::as_object);
        for (name, def) in own_defs.into_iter().flatten() {
            let shared = renames.get(name) == Some(name);
            match shared {
                true if shared_seen.contains(&name.as_str()) => {}
                true => {
                    shared_seen.push(name);
                    let mut found = Vec::new();
                    anchors(def, &mut found);
                    found
                        .into_iter()
                        .for_each(|a| *counted.entry(a).or_default() += 1);
                }
                false => anchors(def, &mut mine),
            }
        }
        mine.iter()
            .for_each(|a| *counted.entry(a.clone()).or_default() += 1);
        own.push(mine);
    }
    actions
        .iter()
        .zip(own)
        .map(|(action, mine)| {
            mine.into_iter()
                .filter(|a| counted.get(a).is_some_and(|n| *n > 1))
                .map(|a| (a.clone(), format!("{}.{a}", anchor_safe(&action.name))))
                .collect()
        })
        .collect()
}

/// An action's name as the start of an anchor (`[A-Za-z_][-A-Za-z0-9._]*`).
fn anchor_safe(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-._".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
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
/// action's own are namespaced when they differ, and so are their anchors) and a recursive
/// action's `"#"` points at its own root. Fields no action declares are refused unless an
/// action accepts unknown fields. What the fields do not say of an action (its required fields,
/// its own closure, its `allOf`, `if`/`then`/`else`, ...) is under `allOf`, each applying only
/// when the call chooses that action: the schema accepts a call exactly when the server does.
pub(super) fn grouped_schema(discriminator: &str, actions: &[ActionDef]) -> Map<String, Value> {
    let renames = def_names(actions);
    let anchor_renames = anchor_names(actions, &renames);
    let none = HashMap::new();
    let mut defs = Map::new();
    // Each action's root as renamed, for its own rules.
    let mut roots: Vec<Value> = Vec::with_capacity(actions.len());
    // Per field, in order of first appearance, what each action declares.
    let mut fields: Vec<(String, Vec<Declared>)> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let mut schema = action.listed_value().into_owned();
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
        let own = Renames {
            defs: &renames[i],
            anchors: &anchor_renames[i],
            root: root.as_deref(),
        };
        rewrite(&mut schema, &own);
        for (name, mut def) in own_defs {
            // A definition the actions share keeps its anchors.
            let anchors = match renames[i].get(&name) == Some(&name) {
                true => &none,
                false => &anchor_renames[i],
            };
            let renamed = renames[i].get(&name).cloned().unwrap_or(name);
            rewrite(&mut def, &Renames { anchors, ..own });
            defs.entry(renamed).or_insert(def);
        }
        let mut rules = schema.clone();
        if root.is_some()
            && let Some(rules) = rules.as_object_mut()
        {
            // Named once, on the copy in `$defs` that `"#"` points at.
            ANCHORS.iter().for_each(|k| _ = rules.remove(*k));
        }
        roots.push(rules);
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
    // Each field with its one schema, where every action that declares it declares it alike.
    let alike: Vec<(String, Option<Value>)> = (fields.iter())
        .map(|(field, declared)| {
            let first = declared.first().map(|(_, s, _)| s);
            let one = declared.iter().all(|(_, s, _)| Some(s) == first);
            (field.clone(), first.filter(|_| one).cloned())
        })
        .collect();
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
    let closed = !actions.iter().any(|a| is_open(&a.schema_value));
    if closed {
        root.insert("additionalProperties".into(), Value::Bool(false));
    }
    // What the fields do not say of an action, applying when the call chooses it.
    let listed = Listed {
        discriminator,
        fields: (alike.iter())
            .map(|(field, schema)| (field.as_str(), schema.as_ref()))
            .collect(),
        closed,
        defs: &defs,
    };
    let rules: Vec<Value> = (actions.iter().zip(&roots))
        .filter_map(|(action, schema)| scoped(&action.name, schema, &listed))
        .collect();
    if !rules.is_empty() {
        root.insert("allOf".into(), Value::Array(rules));
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
