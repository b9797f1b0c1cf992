//! An action's output schema compared for the host that reads `structuredContent`: the
//! reverse of its arguments' comparison (a field the host relied on that is gone or may be
//! absent breaks it; a new one does not). Changes are named `(output)`, `(output).total`,
//! `(output).lines[].amount`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::walk::{
    MAX_DEPTH, Roots, Sink, child, followed, list, properties_of, required_set, types, values,
};
use crate::contract::ChangeSeverity::{Breaking, Risky, Safe};

/// Where an output change is: the prefix of every output change's field.
pub(crate) const OUTPUT: &str = "(output)";

/// Keywords that describe without constraining: their changes concern no host.
const ANNOTATIONS: [&str; 8] = [
    "description",
    "title",
    "examples",
    "default",
    "deprecated",
    "$schema",
    "$comment",
    "readOnly",
];

pub(super) fn compare(name: &str, old: Option<&Value>, new: Option<&Value>, sink: &mut Sink<'_>) {
    match (old, new) {
        (None, None) => {}
        (None, Some(_)) => sink.push(
            Safe,
            OUTPUT,
            format!("\"{name}\" now declares its output: its results carry structuredContent."),
        ),
        (Some(_), None) => sink.push(
            Breaking,
            OUTPUT,
            format!(
                "\"{name}\" no longer declares its output: its results carry no structuredContent."
            ),
        ),
        (Some(old), Some(new)) => node(Roots::of(old, new), old, new, "", 0, sink),
    }
}

fn field(path: &str) -> String {
    match path {
        "" => OUTPUT.to_owned(),
        items if items.starts_with('[') => format!("{OUTPUT}{items}"),
        path => format!("{OUTPUT}.{path}"),
    }
}

fn who(path: &str) -> String {
    if path.is_empty() {
        "The output".to_owned()
    } else {
        format!("The output field \"{path}\"")
    }
}

fn node(roots: Roots<'_>, old: &Value, new: &Value, path: &str, depth: usize, sink: &mut Sink<'_>) {
    followed(roots, old, new, sink, |old, new, sink| {
        object(roots, old, new, path, depth, sink);
    });
}

fn object(
    roots: Roots<'_>,
    old: &Value,
    new: &Value,
    path: &str,
    depth: usize,
    sink: &mut Sink<'_>,
) {
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        if old != new {
            sink.push(Risky, &field(path), format!("{} changed.", who(path)));
        }
        return;
    };
    if depth >= MAX_DEPTH {
        if old != new {
            sink.push(Risky, &field(path), format!("{} changed.", who(path)));
        }
        return;
    }
    let (was, is) = (types(o.get("type")), types(n.get("type")));
    if was != is {
        // A reader handles the types it was told of: fewer is safe, any other is not.
        let narrowed = !is.is_empty() && (was.is_empty() || is.is_subset(&was));
        sink.push_values(
            if narrowed { Safe } else { Breaking },
            &field(path),
            format!("{} may now be {}.", who(path), list(&is)),
            Some(list(&was)),
            Some(list(&is)),
        );
    }
    properties(roots, o, n, path, depth, sink);
    match (o.get("items"), n.get("items")) {
        (Some(a), Some(b)) => node(roots, a, b, &format!("{path}[]"), depth + 1, sink),
        (None, None) => {}
        _ => sink.push(
            Risky,
            &field(path),
            format!("The items of {} changed.", who(path).to_lowercase()),
        ),
    }
    let enumerated = |m: &Map<String, Value>| -> Option<Vec<Value>> {
        m.get("enum").and_then(Value::as_array).cloned()
    };
    match (enumerated(o), enumerated(n)) {
        (Some(a), Some(b)) => {
            let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).collect();
            let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).collect();
            if !added.is_empty() {
                sink.push(
                    Risky,
                    &field(path),
                    format!("{} may now hold {}.", who(path), values(added.into_iter())),
                );
            }
            if !removed.is_empty() {
                sink.push(
                    Safe,
                    &field(path),
                    format!(
                        "{} no longer holds {}.",
                        who(path),
                        values(removed.into_iter())
                    ),
                );
            }
        }
        (Some(_), None) => sink.push(
            Breaking,
            &field(path),
            format!("{} is no longer one of a fixed set of values.", who(path)),
        ),
        (None, Some(_)) => sink.push(
            Safe,
            &field(path),
            format!("{} is now one of a fixed set of values.", who(path)),
        ),
        (None, None) => {}
    }
    let handled = [
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "$ref",
        "$defs",
        "definitions",
    ];
    let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    for key in keys {
        if handled.contains(&key.as_str()) || ANNOTATIONS.contains(&key.as_str()) {
            continue;
        }
        if o.get(key) != n.get(key) {
            sink.push_values(
                Risky,
                &field(path),
                format!("The \"{key}\" of {} changed.", who(path).to_lowercase()),
                o.get(key).map(Value::to_string),
                n.get(key).map(Value::to_string),
            );
        }
    }
}

fn properties(
    roots: Roots<'_>,
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    depth: usize,
    sink: &mut Sink<'_>,
) {
    let empty = Map::new();
    let (old_props, new_props) = (
        properties_of(o).unwrap_or(&empty),
        properties_of(n).unwrap_or(&empty),
    );
    let (was_required, is_required) = (required_set(o), required_set(n));
    let names: BTreeSet<&String> = old_props.keys().chain(new_props.keys()).collect();
    for name in names {
        let at = child(path, name);
        match (old_props.get(name), new_props.get(name)) {
            (Some(_), None) => {
                sink.push(Breaking, &field(&at), format!("{} was removed.", who(&at)))
            }
            (None, Some(_)) => {
                sink.push(Safe, &field(&at), format!("{} was added.", who(&at)));
            }
            (Some(a), Some(b)) => {
                match (was_required.contains(name), is_required.contains(name)) {
                    (true, false) => sink.push(
                        Breaking,
                        &field(&at),
                        format!("{} may now be absent.", who(&at)),
                    ),
                    (false, true) => sink.push(
                        Safe,
                        &field(&at),
                        format!("{} is now always present.", who(&at)),
                    ),
                    _ => {}
                }
                node(roots, a, b, &at, depth + 1, sink);
            }
            (None, None) => {}
        }
    }
}
