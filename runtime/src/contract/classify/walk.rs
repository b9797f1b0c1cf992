//! What comparing two schemas side by side needs at every step: the changes collected
//! ([`Sink`]), the whole schemas for `$ref`s ([`Roots`], [`followed`]), how deep to go, and how
//! fields, types and values are written in a change's text.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::contract::{ChangeSeverity, ContractChange};
use crate::validate::pointer::of_reference;

use ChangeSeverity::Cosmetic;

/// How deep `$ref`s and nesting are followed; deeper schemas are compared as a whole.
pub(super) const MAX_DEPTH: usize = 32;

/// Changes are collected for one owner: an action, or the tool (`action: None`).
pub(super) struct Sink<'a> {
    pub(super) out: &'a mut Vec<ContractChange>,
    pub(super) action: Option<&'a str>,
    /// The `$ref` pairs being compared along the current path.
    pub(super) following: Vec<(String, String)>,
}

impl Sink<'_> {
    pub(super) fn push(&mut self, severity: ChangeSeverity, field: &str, description: String) {
        self.push_values(severity, field, description, None, None);
    }

    /// A changed description or title of `owner`: COSMETIC, with both texts.
    pub(super) fn wording(
        &mut self,
        owner: &str,
        what: &str,
        before: &Option<String>,
        after: &Option<String>,
    ) {
        if before != after {
            self.push_values(
                Cosmetic,
                &format!("({what})"),
                format!("The {what} of {owner} changed."),
                before.clone(),
                after.clone(),
            );
        }
    }

    pub(super) fn push_values(
        &mut self,
        severity: ChangeSeverity,
        field: &str,
        description: String,
        before: Option<String>,
        after: Option<String>,
    ) {
        self.out.push(ContractChange {
            severity,
            field: field.to_owned(),
            description,
            before,
            after,
            action: self.action.map(str::to_owned),
        });
    }
}

/// The two whole schemas, for `$ref`s.
#[derive(Clone, Copy)]
pub(super) struct Roots<'a> {
    pub(super) old: &'a Value,
    pub(super) new: &'a Value,
    /// Whether their definitions are equal: then equal nodes are equal whatever they refer to.
    pub(super) same_defs: bool,
}

impl<'a> Roots<'a> {
    pub(super) fn of(old: &'a Value, new: &'a Value) -> Self {
        let defs = |v: &Value| (v.get("$defs").cloned(), v.get("definitions").cloned());
        Roots {
            old,
            new,
            same_defs: defs(old) == defs(new),
        }
    }
}

/// Follows `#/...` references within `root`; the node, and the last reference followed.
pub(super) fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> (&'a Value, Option<&'a str>) {
    let mut via = None;
    for _ in 0..MAX_DEPTH {
        let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match of_reference(reference).and_then(|p| root.pointer(&p)) {
            Some(target) => {
                node = target;
                via = Some(reference);
            }
            None => break,
        }
    }
    (node, via)
}

/// How a field is named in a change: `(root)`, `currency`, `lines[].quantity`.
pub(super) fn shown(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

pub(super) fn quoted(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("\"{path}\"")
    }
}

pub(super) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

pub(super) fn compact(value: &Value) -> String {
    value.to_string()
}

/// Runs `compare` on the nodes `old` and `new` point to through their `$ref`s, unless they are
/// equal (with equal definitions), and once per pair of references along a path: a recursive
/// definition is compared once.
pub(super) fn followed(
    roots: Roots<'_>,
    old: &Value,
    new: &Value,
    sink: &mut Sink<'_>,
    compare: impl FnOnce(&Value, &Value, &mut Sink<'_>),
) {
    let (old, old_ref) = resolve(roots.old, old);
    let (new, new_ref) = resolve(roots.new, new);
    if old == new && roots.same_defs {
        return;
    }
    if let (Some(a), Some(b)) = (old_ref, new_ref) {
        let pair = (a.to_owned(), b.to_owned());
        if sink.following.contains(&pair) {
            return;
        }
        sink.following.push(pair);
        compare(old, new, sink);
        sink.following.pop();
    } else {
        compare(old, new, sink);
    }
}

/// An object schema's `properties`.
pub(super) fn properties_of(schema: &Map<String, Value>) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

/// An object schema's `required` names, as a set.
pub(super) fn required_set(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The `type` keyword as a set (empty: any type).
pub(super) fn types(value: Option<&Value>) -> BTreeSet<String> {
    match value {
        Some(Value::String(t)) => BTreeSet::from([t.clone()]),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

pub(super) fn list(types: &BTreeSet<String>) -> String {
    if types.is_empty() {
        "any".to_owned()
    } else {
        types.iter().cloned().collect::<Vec<_>>().join(" | ")
    }
}

/// Enum values as ERRORS.md writes them: strings single-quoted, others as JSON.
pub(super) fn values<'a>(values: impl Iterator<Item = &'a Value>) -> String {
    values
        .map(|v| match v {
            Value::String(s) => format!("'{s}'"),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn capital(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
