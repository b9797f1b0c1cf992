//! What detection needs to know about a schema, read once when it is compiled: each
//! subschema's declared fields in order, its types, its item schemas, its local `$ref`.
//! Lookups per call are then a hash of a schema location or a short scan, never a walk of JSON.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

use super::JsonType;

/// Subschemas by index; `by_location` maps a JSON pointer into the schema to its index.
#[derive(Debug, Default)]
pub(super) struct Layout {
    nodes: Vec<Node>,
    by_location: HashMap<String, usize>,
}

#[derive(Debug, Default)]
pub(super) struct Node {
    /// A local `$ref` (`#/$defs/Line`), resolved after the walk.
    reference: Option<String>,
    target: Option<usize>,
    /// The `type` keyword, if present.
    types: Option<Vec<JsonType>>,
    alternatives: Vec<usize>,
    /// Declared fields in declaration order, with their subschemas.
    fields: Vec<(String, usize)>,
    /// The same names, shared by every "unrecognized field" problem of this object.
    pub(super) known: Arc<[String]>,
    /// Positions of the declared fields, for objects too large to scan.
    index: Option<HashMap<String, usize>>,
    items: Option<usize>,
    prefix_items: Vec<usize>,
    pub(super) multiple_of: Option<Number>,
    pub(super) allowed: Option<Arc<[Value]>>,
}

/// Keywords whose value is a map of names to subschemas (`properties` aside).
const NAMED_SUBSCHEMAS: [&str; 4] = [
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// Keywords whose value is one subschema (`items` aside).
const SINGLE_SUBSCHEMAS: [&str; 10] = [
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

/// Objects with more declared fields than this get a hash index.
const SCAN_MAX: usize = 16;

impl Layout {
    pub(super) fn new(schema: &Value) -> Self {
        let mut layout = Layout::default();
        layout.walk(schema, String::new());
        for i in 0..layout.nodes.len() {
            let target = layout.nodes[i]
                .reference
                .as_deref()
                .and_then(|r| layout.by_location.get(r))
                .copied();
            layout.nodes[i].target = target;
        }
        layout
    }

    fn walk(&mut self, schema: &Value, location: String) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.by_location.insert(location.clone(), id);
        let Value::Object(map) = schema else {
            return id;
        };
        let mut node = Node {
            reference: map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .map(str::to_owned),
            types: map.get("type").map(types_of),
            multiple_of: map.get("multipleOf").and_then(Value::as_number).cloned(),
            allowed: map
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| values.clone().into()),
            ..Node::default()
        };
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, sub) in props {
                let child = self.walk(sub, format!("{location}/properties/{}", escape(name)));
                node.fields.push((name.clone(), child));
            }
        }
        node.known = node.fields.iter().map(|(name, _)| name.clone()).collect();
        if node.fields.len() > SCAN_MAX {
            node.index = Some(
                node.fields
                    .iter()
                    .enumerate()
                    .map(|(i, (name, _))| (name.clone(), i))
                    .collect(),
            );
        }
        match map.get("items") {
            Some(items @ Value::Object(_)) => {
                node.items = Some(self.walk(items, format!("{location}/items")))
            }
            Some(Value::Array(tuple)) => {
                node.prefix_items = self.walk_all(tuple, &format!("{location}/items"))
            }
            _ => {}
        }
        if let Some(Value::Array(prefix)) = map.get("prefixItems") {
            node.prefix_items = self.walk_all(prefix, &format!("{location}/prefixItems"));
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alternatives)) = map.get(keyword) {
                node.alternatives
                    .extend(self.walk_all(alternatives, &format!("{location}/{keyword}")));
            }
        }
        self.walk_rest(map, &location);
        self.nodes[id] = node;
        id
    }

    /// Registers the other places a subschema can sit, so that any failing keyword's location
    /// finds its node.
    fn walk_rest(&mut self, map: &Map<String, Value>, location: &str) {
        for (keyword, value) in map {
            match (keyword.as_str(), value) {
                (k, Value::Object(named)) if NAMED_SUBSCHEMAS.contains(&k) => {
                    for (name, sub) in named {
                        self.walk(sub, format!("{location}/{keyword}/{}", escape(name)));
                    }
                }
                ("allOf", Value::Array(list)) => {
                    self.walk_all(list, &format!("{location}/{keyword}"));
                }
                (k, Value::Object(_)) if SINGLE_SUBSCHEMAS.contains(&k) => {
                    self.walk(value, format!("{location}/{keyword}"));
                }
                _ => {}
            }
        }
    }

    fn walk_all(&mut self, list: &[Value], location: &str) -> Vec<usize> {
        list.iter()
            .enumerate()
            .map(|(i, sub)| self.walk(sub, format!("{location}/{i}")))
            .collect()
    }

    /// The node at a schema location (a JSON pointer, as the validator reports it), `$ref` followed.
    pub(super) fn at(&self, location: &str) -> Option<&Node> {
        self.by_location.get(location).map(|&id| self.resolve(id))
    }

    pub(super) fn root(&self) -> Option<&Node> {
        self.nodes.first().map(|_| self.resolve(0))
    }

    fn resolve(&self, mut id: usize) -> &Node {
        // Bounded: a cycle of references must not loop forever.
        for _ in 0..32 {
            match self.nodes[id].target {
                Some(next) if next != id => id = next,
                _ => break,
            }
        }
        &self.nodes[id]
    }

    /// A declared field's position and subschema.
    pub(super) fn field<'a>(&'a self, node: &Node, name: &str) -> Option<(usize, &'a Node)> {
        let position = match &node.index {
            Some(index) => index.get(name).copied(),
            None => node.fields.iter().position(|(n, _)| n == name),
        }?;
        let (_, child) = node.fields.get(position)?;
        Some((position, self.resolve(*child)))
    }

    /// The subschema of an array's element `index`.
    pub(super) fn item<'a>(&'a self, node: &Node, index: usize) -> Option<&'a Node> {
        node.prefix_items
            .get(index)
            .or(node.items.as_ref())
            .map(|&id| self.resolve(id))
    }

    /// A schema's declared types: its `type`, or else the union of its alternatives' types.
    pub(super) fn types(&self, node: &Node) -> Vec<JsonType> {
        if let Some(types) = &node.types {
            return types.clone();
        }
        let mut out = Vec::new();
        for &alternative in &node.alternatives {
            for t in self.resolve(alternative).types.iter().flatten() {
                if !out.contains(t) {
                    out.push(*t);
                }
            }
        }
        out
    }
}

fn types_of(value: &Value) -> Vec<JsonType> {
    let names: Vec<&str> = match value {
        Value::String(name) => vec![name],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<JsonType> = Vec::with_capacity(names.len());
    for t in names.into_iter().filter_map(JsonType::from_name) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// A key as a JSON pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The copy of a schema the validator compiles, adjusted to the contract (ERRORS.md §5):
/// - `additionalProperties: false` without `properties` gets an empty `properties`, so every
///   unexpected key is reported by name rather than as one failing `false` subschema;
/// - `format` is asserted only for the seven formats the contract names; others are annotations.
pub(super) fn for_validator(schema: &Value) -> Value {
    let mut copy = schema.clone();
    adjust(&mut copy);
    copy
}

const ASSERTED_FORMATS: [&str; 7] = ["email", "uri", "uuid", "date-time", "date", "ipv4", "ipv6"];

fn adjust(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
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
