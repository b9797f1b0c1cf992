//! How much each difference between two contracts can break a caller that learned the old one
//! (the table in the module documentation). Schemas are compared keyword by keyword, following
//! `$ref`s, so a tightened bound deep inside an array item is named as such.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{ActionContract, ToolContract};
use crate::contract::{ChangeSeverity, ContractChange};

use ChangeSeverity::{Breaking, Cosmetic, Risky, Safe};

mod output;
mod walk;

pub(crate) use output::OUTPUT;
use walk::{
    MAX_DEPTH, Roots, Sink, capital, child, compact, followed, list, properties_of, quoted,
    required_set, shown, types, values,
};

pub(super) fn tool(
    locked: Option<&ToolContract>,
    running: Option<&ToolContract>,
    out: &mut Vec<ContractChange>,
) {
    let mut sink = Sink {
        out,
        action: None,
        following: Vec::new(),
    };
    let (locked, running) = match (locked, running) {
        (Some(locked), Some(running)) => (locked, running),
        (Some(locked), None) => {
            let name = &locked.name;
            sink.push(
                Breaking,
                "(tool)",
                format!("The tool \"{name}\" was removed."),
            );
            return;
        }
        (None, Some(running)) => {
            let name = &running.name;
            sink.push(Safe, "(tool)", format!("The tool \"{name}\" was added."));
            return;
        }
        (None, None) => return,
    };
    let owner = format!("the tool \"{}\"", running.name);
    sink.wording(
        &owner,
        "description",
        &locked.description,
        &running.description,
    );
    sink.wording(&owner, "title", &locked.title, &running.title);
    let names: BTreeSet<&str> = locked
        .actions
        .iter()
        .chain(&running.actions)
        .map(|a| a.name.as_str())
        .collect();
    for name in names {
        let mut sink = Sink {
            out: sink.out,
            action: Some(name),
            following: Vec::new(),
        };
        match (named(locked, name), named(running, name)) {
            (Some(old), Some(new)) => action(old, new, &mut sink),
            (Some(_), None) => {
                sink.push(
                    Breaking,
                    "(action)",
                    format!("The action \"{name}\" was removed."),
                );
            }
            (None, Some(_)) => {
                sink.push(
                    Safe,
                    "(action)",
                    format!("The action \"{name}\" was added."),
                );
            }
            (None, None) => {}
        }
    }
}

fn named<'a>(tool: &'a ToolContract, action: &str) -> Option<&'a ActionContract> {
    tool.actions.iter().find(|a| a.name == action)
}

fn action(old: &ActionContract, new: &ActionContract, sink: &mut Sink<'_>) {
    let name = &new.name;
    let owner = format!("\"{name}\"");
    sink.wording(&owner, "description", &old.description, &new.description);
    sink.wording(&owner, "title", &old.title, &new.title);
    let (was, is) = (old.annotations, new.annotations);
    let on = |hint: Option<bool>| hint == Some(true);
    if on(was.read_only) != on(is.read_only) {
        let (severity, text) = if on(was.read_only) {
            (Breaking, format!("\"{name}\" is no longer read-only."))
        } else {
            (Safe, format!("\"{name}\" is now read-only."))
        };
        sink.push(severity, "(read_only)", text);
    }
    if on(was.destructive) != on(is.destructive) {
        let (severity, text) = if on(is.destructive) {
            (Breaking, format!("\"{name}\" is now destructive."))
        } else {
            (Safe, format!("\"{name}\" is no longer destructive."))
        };
        sink.push(severity, "(destructive)", text);
    }
    if was.idempotent != is.idempotent {
        let text = if on(is.idempotent) {
            format!("\"{name}\" is now idempotent.")
        } else {
            format!("\"{name}\" is no longer declared idempotent: a repeated call may act again.")
        };
        sink.push(Risky, "(idempotent)", text);
    }
    if on(was.open_world) != on(is.open_world) {
        let (severity, text) = if on(is.open_world) {
            (
                Risky,
                format!("\"{name}\" now reaches outside systems (open world)."),
            )
        } else {
            (
                Safe,
                format!("\"{name}\" no longer reaches outside systems."),
            )
        };
        sink.push(severity, "(open_world)", text);
    }
    // A scope the action now needs refuses the callers whose tokens lack it; one it no longer
    // needs refuses no one.
    for scope in new.scopes.iter().filter(|s| !old.scopes.contains(s)) {
        sink.push(
            Breaking,
            "(scopes)",
            format!("\"{name}\" now needs the scope \"{scope}\"."),
        );
    }
    for scope in old.scopes.iter().filter(|s| !new.scopes.contains(s)) {
        sink.push(
            Safe,
            "(scopes)",
            format!("\"{name}\" no longer needs the scope \"{scope}\"."),
        );
    }
    match (&old.deprecation, &new.deprecation) {
        (None, Some(d)) => {
            let instead = d
                .replacement
                .as_deref()
                .map(|r| format!(" Use \"{r}\" instead."))
                .unwrap_or_default();
            sink.push(
                Safe,
                "(deprecated)",
                format!("\"{name}\" is now deprecated.{instead}"),
            );
        }
        (Some(_), None) => sink.push(
            Safe,
            "(deprecated)",
            format!("\"{name}\" is no longer deprecated."),
        ),
        (Some(a), Some(b)) if a != b => sink.push(
            Cosmetic,
            "(deprecated)",
            format!("The deprecation note of \"{name}\" changed."),
        ),
        _ => {}
    }
    let roots = Roots::of(&old.input_schema, &new.input_schema);
    schema(roots, &old.input_schema, &new.input_schema, "", 0, sink);
    output::compare(
        name,
        old.output_schema.as_ref(),
        new.output_schema.as_ref(),
        sink,
    );
}

/// Compares two schema nodes at `path`.
fn schema(
    roots: Roots<'_>,
    old: &Value,
    new: &Value,
    path: &str,
    depth: usize,
    sink: &mut Sink<'_>,
) {
    followed(roots, old, new, sink, |old, new, sink| {
        compare(roots, old, new, path, depth, sink);
    });
}

/// [`schema`] once references are followed.
fn compare(
    roots: Roots<'_>,
    old: &Value,
    new: &Value,
    path: &str,
    depth: usize,
    sink: &mut Sink<'_>,
) {
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        // Boolean schemas, or something that is not a schema.
        let severity = if new == &Value::Bool(true) {
            Safe
        } else {
            Breaking
        };
        sink.push_values(
            severity,
            shown(path),
            format!("The schema of {} changed.", quoted(path)),
            Some(compact(old)),
            Some(compact(new)),
        );
        return;
    };
    if depth >= MAX_DEPTH {
        sink.push(
            Risky,
            shown(path),
            format!("The schema of {} changed.", quoted(path)),
        );
        return;
    }
    let keys: BTreeSet<&str> = o.keys().chain(n.keys()).map(String::as_str).collect();
    for key in keys {
        let (a, b) = (o.get(key), n.get(key));
        // Equal subschemas can still refer to definitions that changed.
        let nested = matches!(
            key,
            "properties"
                | "items"
                | "additionalProperties"
                | "anyOf"
                | "oneOf"
                | "allOf"
                | "contains"
                | "not"
                | "propertyNames"
        );
        if a == b && (roots.same_defs || !nested) {
            continue;
        }
        keyword(roots, key, a, b, o, n, path, depth, sink);
    }
}

#[allow(clippy::too_many_arguments)]
fn keyword(
    roots: Roots<'_>,
    key: &str,
    a: Option<&Value>,
    b: Option<&Value>,
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    depth: usize,
    sink: &mut Sink<'_>,
) {
    let field = shown(path);
    let who = quoted(path);
    let text = |v: Option<&Value>| v.map(compact);
    match key {
        // Followed through `resolve`, and compared where they are used.
        "$ref" | "$defs" | "definitions" | "$schema" | "$id" => {}
        "description" | "title" | "examples" | "$comment" => sink.push_values(
            Cosmetic,
            field,
            format!("The {key} of {who} changed."),
            a.and_then(Value::as_str).map(str::to_owned).or(text(a)),
            b.and_then(Value::as_str).map(str::to_owned).or(text(b)),
        ),
        "type" => {
            let (was, is) = (types(a), types(b));
            let widened = was.iter().all(|t| {
                is.contains(t) || (t == "integer" && is.contains("number")) || is.is_empty()
            });
            let (severity, what) = if widened {
                (Safe, "now accepts more types")
            } else {
                (Breaking, "changed type")
            };
            sink.push_values(
                severity,
                field,
                format!("{} {what}.", capital(&who)),
                Some(list(&was)),
                Some(list(&is)),
            );
        }
        "enum" => match (a.and_then(Value::as_array), b.and_then(Value::as_array)) {
            (Some(was), Some(is)) => {
                let removed: Vec<&Value> = was.iter().filter(|v| !is.contains(v)).collect();
                let added: Vec<&Value> = is.iter().filter(|v| !was.contains(v)).collect();
                if !removed.is_empty() {
                    sink.push_values(
                        Breaking,
                        field,
                        format!(
                            "{who} no longer accepts {}.",
                            values(removed.iter().copied())
                        ),
                        Some(values(was.iter())),
                        Some(values(is.iter())),
                    );
                }
                if !added.is_empty() {
                    sink.push_values(
                        Safe,
                        field,
                        format!("{who} now also accepts {}.", values(added.iter().copied())),
                        Some(values(was.iter())),
                        Some(values(is.iter())),
                    );
                }
            }
            (None, Some(is)) => sink.push_values(
                Breaking,
                field,
                format!("{who} is now limited to {}.", values(is.iter())),
                None,
                Some(values(is.iter())),
            ),
            _ => sink.push_values(
                Safe,
                field,
                format!("{who} is no longer limited to a list of values."),
                text(a),
                None,
            ),
        },
        "const" => {
            let severity = if b.is_none() { Safe } else { Breaking };
            sink.push_values(
                severity,
                field,
                format!("The fixed value of {who} changed."),
                text(a),
                text(b),
            );
        }
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => {
            bound(key, a, b, true, field, &who, sink);
        }
        "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => {
            bound(key, a, b, false, field, &who, sink);
        }
        "pattern" | "format" | "multipleOf" => {
            let severity = if b.is_none() { Safe } else { Risky };
            let what = match key {
                "pattern" => "pattern",
                "format" => "format",
                _ => "multiple it must be of",
            };
            sink.push_values(
                severity,
                field,
                format!("The {what} of {who} changed."),
                a.and_then(Value::as_str).map(str::to_owned).or(text(a)),
                b.and_then(Value::as_str).map(str::to_owned).or(text(b)),
            );
        }
        "default" => sink.push_values(
            Risky,
            field,
            format!("The default of {who} changed."),
            text(a),
            text(b),
        ),
        "uniqueItems" => {
            let now = b == Some(&Value::Bool(true));
            let (severity, what) = if now {
                (Breaking, "must now hold distinct items")
            } else {
                (Safe, "may now hold repeated items")
            };
            sink.push(severity, field, format!("{} {what}.", capital(&who)));
        }
        "additionalProperties" => {
            let closed = |v: Option<&Value>| v == Some(&Value::Bool(false));
            match (a, b) {
                (Some(x), Some(y)) if x.is_object() && y.is_object() => {
                    schema(roots, x, y, &child(path, "*"), depth + 1, sink);
                }
                // Visited only because definitions changed elsewhere.
                _ if a == b => {}
                _ if closed(b) => sink.push(
                    Breaking,
                    field,
                    format!("Unknown fields of {who} are now rejected."),
                ),
                _ if closed(a) => sink.push(
                    Safe,
                    field,
                    format!("Unknown fields of {who} are now accepted."),
                ),
                _ => sink.push_values(
                    Risky,
                    field,
                    format!("What {who} accepts besides its fields changed."),
                    text(a),
                    text(b),
                ),
            }
        }
        "properties" | "required" => properties(roots, key, o, n, path, depth, sink),
        "items" | "contains" | "not" | "propertyNames" => {
            let at = if key == "items" {
                format!("{path}[]")
            } else {
                format!("{path}({key})")
            };
            match (a, b) {
                (Some(x), Some(y)) => schema(roots, x, y, &at, depth + 1, sink),
                _ => sink.push_values(
                    if b.is_none() { Safe } else { Breaking },
                    field,
                    format!("The {key} rule of {who} changed."),
                    text(a),
                    text(b),
                ),
            }
        }
        "anyOf" | "oneOf" | "allOf" => {
            match (a.and_then(Value::as_array), b.and_then(Value::as_array)) {
                (Some(x), Some(y)) if x.len() == y.len() => {
                    for (x, y) in x.iter().zip(y) {
                        schema(roots, x, y, path, depth + 1, sink);
                    }
                }
                _ => sink.push_values(
                    Risky,
                    field,
                    format!("The alternatives ({key}) of {who} changed."),
                    text(a),
                    text(b),
                ),
            }
        }
        other => sink.push_values(
            Risky,
            field,
            format!("The \"{other}\" rule of {who} changed."),
            text(a),
            text(b),
        ),
    }
}

/// `properties` and `required` together, once per object (the walk meets both keys).
fn properties(
    roots: Roots<'_>,
    key: &str,
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    depth: usize,
    sink: &mut Sink<'_>,
) {
    // Handled when the walk reaches `properties`, or at `required` when it skips `properties`.
    let (a, b) = (o.get("properties"), n.get("properties"));
    let properties_visited = a != b || (!roots.same_defs && (a.is_some() || b.is_some()));
    if key == "required" && properties_visited {
        return;
    }
    let empty = Map::new();
    let (was, is) = (
        properties_of(o).unwrap_or(&empty),
        properties_of(n).unwrap_or(&empty),
    );
    let (was_required, is_required) = (required_set(o), required_set(n));
    let closed = n.get("additionalProperties") == Some(&Value::Bool(false));
    let names: BTreeSet<&String> = was
        .keys()
        .chain(is.keys())
        .chain(&was_required)
        .chain(&is_required)
        .collect();
    for name in names {
        let at = child(path, name);
        let who = format!("\"{at}\"");
        let (req_before, req_now) = (was_required.contains(name), is_required.contains(name));
        match (was.get(name), is.get(name)) {
            (Some(_), None) if closed => sink.push(
                Breaking,
                &at,
                format!("The field {who} was removed: calls that send it are rejected."),
            ),
            (Some(_), None) => sink.push(
                Risky,
                &at,
                format!("The field {who} was removed: a value sent for it is ignored."),
            ),
            (None, Some(_)) if req_now => sink.push(
                Breaking,
                &at,
                format!("The field {who} was added and is required."),
            ),
            (None, Some(_)) => {
                sink.push(Safe, &at, format!("The optional field {who} was added."));
            }
            (old, new) => {
                if let (Some(x), Some(y)) = (old, new) {
                    schema(roots, x, y, &at, depth + 1, sink);
                }
                if req_now && !req_before {
                    sink.push(Breaking, &at, format!("The field {who} is now required."));
                } else if req_before && !req_now {
                    sink.push(Safe, &at, format!("The field {who} is no longer required."));
                }
            }
        }
    }
}

/// A lower (`lower`) or upper bound: tightened or added is BREAKING, loosened or removed SAFE.
fn bound(
    key: &str,
    a: Option<&Value>,
    b: Option<&Value>,
    lower: bool,
    field: &str,
    who: &str,
    sink: &mut Sink<'_>,
) {
    let tightened = match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
        (Some(x), Some(y)) => {
            if lower {
                y > x
            } else {
                y < x
            }
        }
        (None, Some(_)) => true,
        _ => false,
    };
    let (severity, what) = if tightened {
        (Breaking, "tightened")
    } else {
        (Safe, "loosened")
    };
    sink.push_values(
        severity,
        field,
        format!("The {key} of {who} was {what}."),
        a.map(compact),
        b.map(compact),
    );
}

#[cfg(test)]
mod tests;
