//! What detection needs to know about a schema, read once when it is compiled: each
//! subschema's declared fields in order, its types, its item schemas, its local `$ref`.
//! Lookups per call are then a hash of a schema location or a short scan, never a walk of JSON.
//!
//! A subschema that holds a `$ref` stands for the end of its chain of references: once the
//! chains are followed, it is a copy of that end (its lists shared, not copied) with a `{desc}`
//! and a pattern example of its own, since the annotations on the way (`examples` beside a
//! `$ref`, ERRORS.md §11.5) belong to the place that refers, not to the definition.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

use super::copy::{STASH, in_copy};
use super::keywords::{NAMED_SUBSCHEMAS, SINGLE_SUBSCHEMAS, constants, format_noun, nullable};
use super::pointer::{escape, of_reference};
use super::{JsonType, message};
use crate::closest::Names;
use crate::envelope::{itoa, text};
use foldhash::fast::FixedState;

/// Subschemas by index; `by_location` maps a JSON pointer into the schema to its index (the
/// schema's own names, hashed with fixed keys).
#[derive(Debug, Default)]
pub(super) struct Layout {
    nodes: Vec<Node>,
    by_location: HashMap<String, usize, FixedState>,
    /// Whether any subschema uses a keyword whose failures are reported below it
    /// (`patternProperties`, `prefixItems`, `dependentRequired`).
    pub(super) collapses: bool,
}

#[derive(Debug, Default, Clone)]
pub(super) struct Node {
    /// A local `$ref` (`#/$defs/Line`), resolved after the walk.
    reference: Option<String>,
    /// The end of that reference's chain, while the chains are followed.
    target: Option<usize>,
    /// The node whose keywords this one carries: its own index, or the end of its chain of
    /// references (a copy stands there once the chains are followed).
    pub(super) origin: usize,
    /// The string `examples` of the schema as written (at most 50 characters each), in order.
    examples: Vec<String>,
    /// The `pattern` keyword, if present, and the schema that holds it (as advertised), which
    /// an example must satisfy.
    pattern: Option<String>,
    own: Option<Box<Map<String, Value>>>,
    /// The example of the pattern this node's chain ends at (ERRORS.md §11.5), with the index
    /// of the node holding that pattern.
    pub(super) example: Option<(usize, Arc<str>)>,
    /// The `type` keyword, if present.
    types: Option<Vec<JsonType>>,
    alternatives: Vec<usize>,
    /// T of a nullable alternative (`anyOf: [T, {"type": "null"}]`), walked where the validator
    /// sees it: at `else` (see [`for_validator`]).
    nullable: Option<usize>,
    /// Declared fields in declaration order, with their subschemas.
    fields: Arc<[(String, usize)]>,
    /// The same names, shared by every "unrecognized field" problem of this object.
    pub(super) known: Arc<[String]>,
    /// The same, prepared for the did-you-mean search.
    pub(super) names: Arc<Names>,
    /// Positions of the declared fields, for objects too large to scan.
    index: Option<Arc<HashMap<String, usize>>>,
    items: Option<usize>,
    prefix_items: Vec<usize>,
    /// The `additionalProperties` schema (a map's values), when it is one.
    additional: Option<usize>,
    pub(super) property_names: Option<usize>,
    pub(super) multiple_of: Option<Number>,
    /// The `enum` values, or the constants of alternatives of constants.
    pub(super) allowed: Option<Arc<[Value]>>,
    constant: Option<Value>,
    /// The asserted format's noun (`a valid email address`).
    format: Option<&'static str>,
    /// The phrases of this node's own keywords after the pattern's (lengths, bounds, multiple,
    /// item counts).
    constraints: String,
    /// The items phrase of `{desc}` (`, each an object with fields a, b`), or empty: also what
    /// a count of items names (ERRORS.md §11.3).
    pub(super) each: Arc<str>,
    /// `{desc}` (ERRORS.md §5), complete once the walk is done.
    pub(super) desc: Arc<str>,
    /// `{desc}` with `a string` as the noun of a schema without `type`; set only on the
    /// schemas that `propertyNames` names.
    pub(super) key_desc: Arc<str>,
}

/// Objects with more declared fields than this get a hash index.
const SCAN_MAX: usize = 16;

/// Whether a pattern's schema (given as advertised) accepts an example: decided by the
/// validator, with the schema's definitions at hand.
pub(super) type Accepts<'a> = &'a dyn Fn(&Map<String, Value>, &str) -> bool;

/// Where a node's chain of references (and, for T or null, T's chain) leads.
struct Chain {
    /// The nodes on the way, as written, nearest first.
    way: Vec<usize>,
    /// The first node that is no reference, if the chain ends (`None`: it comes back on
    /// itself, or names no place of the schema).
    end: Option<usize>,
    /// The node a value is checked against: T's end for T or null, else `end`.
    value: Option<usize>,
}

impl Layout {
    pub(super) fn new(schema: &Value, accepts: Accepts<'_>) -> Self {
        let mut layout = Layout::default();
        layout.walk(schema, String::new());
        // A reference names a place in the schema as advertised; the walk registered each
        // subschema where the validator's copy has it.
        let first: Vec<Option<usize>> = layout
            .nodes
            .iter()
            .map(|n| {
                let pointer = n.reference.as_deref()?;
                layout.by_location.get(&*in_copy(schema, pointer)).copied()
            })
            .collect();
        let chains: Vec<Chain> = (0..layout.nodes.len())
            .map(|i| layout.chain(i, &first))
            .collect();
        // Each reference reads as the end of its chain, however long; a chain that comes back on
        // itself (or names no place) reads as nothing: `{}`, ERRORS.md §11.7.
        for (i, chain) in chains.iter().enumerate() {
            layout.nodes[i].origin = i;
            if layout.nodes[i].reference.is_some() {
                layout.nodes[i].target = chain.end;
            }
        }
        // The examples, each node's `{desc}` and, where a `propertyNames` schema sits (whose
        // noun defaults to `a string`), its keys' `{desc}`, all read through the chains.
        let mut decided = HashMap::new();
        let examples: Vec<Option<(usize, Arc<str>)>> = chains
            .iter()
            .map(|chain| layout.example(chain, accepts, &mut decided))
            .collect();
        let mut key_schemas = vec![false; layout.nodes.len()];
        for id in layout.nodes.iter().filter_map(|n| n.property_names) {
            key_schemas[id] = true;
        }
        let mut texts = Vec::with_capacity(layout.nodes.len());
        for (i, example) in examples.iter().enumerate() {
            let example = example.as_ref().map(|(_, e)| &**e);
            let each: Arc<str> = layout.each(layout.resolve(i)).into();
            let desc: Arc<str> = layout.describe(i, None, example).into();
            let key_desc: Arc<str> = match key_schemas[i] {
                true => layout.describe(i, Some(JsonType::String), example).into(),
                false => Arc::from(""),
            };
            texts.push((each, desc, key_desc));
        }
        // Then each reference becomes a copy of its end, with the texts of its own place.
        for (i, chain) in chains.iter().enumerate() {
            if let (Some(end), Some(_)) = (chain.end, &layout.nodes[i].reference) {
                let mut copy = layout.nodes[end].clone();
                copy.examples = std::mem::take(&mut layout.nodes[i].examples);
                layout.nodes[i] = copy;
            }
        }
        for (i, ((each, desc, key_desc), example)) in texts.into_iter().zip(examples).enumerate() {
            let node = &mut layout.nodes[i];
            node.target = None;
            (node.each, node.desc, node.key_desc, node.example) = (each, desc, key_desc, example);
        }
        layout
    }

    /// The chain of node `id`: the references followed from it, then for T or null, T's.
    fn chain(&self, id: usize, first: &[Option<usize>]) -> Chain {
        let mut way = Vec::new();
        let mut at = id;
        let mut end = None;
        loop {
            // A chain longer than the nodes has come back on itself.
            if way.len() > first.len() {
                return Chain {
                    way,
                    end,
                    value: None,
                };
            }
            way.push(at);
            if self.nodes[at].reference.is_some() {
                match first[at] {
                    Some(next) => at = next,
                    None => {
                        return Chain {
                            way,
                            end,
                            value: None,
                        };
                    }
                }
                continue;
            }
            end.get_or_insert(at);
            match self.nodes[at].nullable {
                // T's chain follows S's.
                Some(t) if Some(at) == end => at = t,
                _ => {
                    return Chain {
                        way,
                        end,
                        value: Some(at),
                    };
                }
            }
        }
    }

    /// The example of the pattern a chain ends at (ERRORS.md §11.5): the first string of at most
    /// 50 characters among the `examples` of the schemas on the way, nearest first, that the
    /// pattern's schema accepts. `decided` keeps each pattern's decision per example.
    fn example(
        &self,
        chain: &Chain,
        accepts: Accepts<'_>,
        decided: &mut HashMap<(usize, String), bool>,
    ) -> Option<(usize, Arc<str>)> {
        let value = chain.value?;
        let holder = self.nodes[value].own.as_deref()?;
        let candidates = chain.way.iter().flat_map(|&i| &self.nodes[i].examples);
        for candidate in candidates {
            let accepted = *decided
                .entry((value, candidate.clone()))
                .or_insert_with(|| accepts(holder, candidate));
            if accepted {
                return Some((value, Arc::from(candidate.as_str())));
            }
        }
        None
    }

    fn walk(&mut self, schema: &Value, location: String) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.by_location.insert(location.clone(), id);
        let Value::Object(map) = schema else {
            return id;
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            // Read as its target: keywords beside it are ignored (ERRORS.md §5), annotations
            // aside (its `examples` come first, §11.5).
            let node = Node {
                reference: of_reference(reference),
                examples: examples_of(map),
                ..Node::default()
            };
            self.walk_rest(map, &location, true);
            self.nodes[id] = node;
            return id;
        }
        self.collapses |= ["patternProperties", "prefixItems", "dependentRequired"]
            .iter()
            .any(|k| map.contains_key(*k));
        let mut node = Node {
            types: map.get("type").map(types_of),
            multiple_of: map.get("multipleOf").and_then(Value::as_number).cloned(),
            allowed: map
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| values.clone().into()),
            constant: map.get("const").cloned(),
            format: map
                .get("format")
                .and_then(Value::as_str)
                .and_then(format_noun),
            constraints: constraints(map),
            examples: examples_of(map),
            pattern: map
                .get("pattern")
                .and_then(Value::as_str)
                .map(str::to_owned),
            own: map.contains_key("pattern").then(|| Box::new(map.clone())),
            ..Node::default()
        };
        let mut fields = Vec::new();
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, sub) in props {
                let child = self.walk(sub, format!("{location}/properties/{}", escape(name)));
                fields.push((name.clone(), child));
            }
        }
        node.known = fields.iter().map(|(name, _)| name.clone()).collect();
        node.names = Arc::new(Names::new(&node.known));
        if fields.len() > SCAN_MAX {
            node.index = Some(Arc::new(
                fields
                    .iter()
                    .enumerate()
                    .map(|(i, (name, _))| (name.clone(), i))
                    .collect(),
            ));
        }
        node.fields = fields.into();
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
        if let Some(additional @ Value::Object(_)) = map.get("additionalProperties") {
            node.additional =
                Some(self.walk(additional, format!("{location}/additionalProperties")));
        }
        if let Some(names @ Value::Object(_)) = map.get("propertyNames") {
            node.property_names = Some(self.walk(names, format!("{location}/propertyNames")));
        }
        if let Some((_, t)) = nullable(map) {
            // Where the validator's copy has them: T at `else`, null at `if`.
            node.nullable = Some(self.walk(t, format!("{location}/else")));
            self.walk(
                &serde_json::json!({"type": "null"}),
                format!("{location}/if"),
            );
        } else if let Some(constants) = constants(map).filter(|_| node.allowed.is_none()) {
            node.allowed = Some(constants.into());
            for keyword in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alternatives)) = map.get(keyword) {
                    self.walk_all(alternatives, &format!("{location}/{STASH}{keyword}"));
                }
            }
        } else {
            for keyword in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alternatives)) = map.get(keyword) {
                    node.alternatives
                        .extend(self.walk_all(alternatives, &format!("{location}/{keyword}")));
                }
            }
        }
        self.walk_rest(map, &location, false);
        self.nodes[id] = node;
        id
    }

    /// Registers the other places a subschema can sit, so that any failing keyword's location
    /// finds its node (beside a `$ref`, only its definitions).
    fn walk_rest(&mut self, map: &Map<String, Value>, location: &str, definitions_only: bool) {
        for (keyword, value) in map {
            match (keyword.as_str(), value) {
                (k, Value::Object(named))
                    if NAMED_SUBSCHEMAS.contains(&k)
                        && (!definitions_only || k == "$defs" || k == "definitions") =>
                {
                    for (name, sub) in named {
                        self.walk(sub, format!("{location}/{keyword}/{}", escape(name)));
                    }
                }
                _ if definitions_only => {}
                ("allOf", Value::Array(list)) => {
                    self.walk_all(list, &format!("{location}/{keyword}"));
                }
                ("additionalProperties" | "propertyNames", _) => {}
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

    fn resolve(&self, id: usize) -> &Node {
        &self.nodes[self.resolve_id(id)]
    }

    fn resolve_id(&self, id: usize) -> usize {
        self.nodes[id].target.unwrap_or(id)
    }

    /// T of a nullable alternative, `$ref` followed.
    pub(super) fn nullable<'a>(&'a self, node: &Node) -> Option<&'a Node> {
        node.nullable.map(|t| self.resolve(t))
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

    /// The schema of an undeclared key's value (`additionalProperties`), if it has one.
    pub(super) fn additional<'a>(&'a self, node: &Node) -> Option<&'a Node> {
        node.additional.map(|id| self.resolve(id))
    }

    /// The `propertyNames` schema, if any.
    pub(super) fn property_names<'a>(&'a self, node: &Node) -> Option<&'a Node> {
        node.property_names.map(|id| self.resolve(id))
    }

    /// The subschema of an array's element `index`.
    pub(super) fn item<'a>(&'a self, node: &Node, index: usize) -> Option<&'a Node> {
        node.prefix_items
            .get(index)
            .or(node.items.as_ref())
            .map(|&id| self.resolve(id))
    }

    /// The node a value at this node is checked against: T for a nullable alternative.
    fn value_node<'a>(&'a self, node: &'a Node) -> &'a Node {
        self.nullable(node).unwrap_or(node)
    }

    /// Whether an integer may stand at this node (its type, or T's for a nullable alternative).
    pub(super) fn takes_integer(&self, node: &Node) -> bool {
        self.types(self.value_node(node))
            .contains(&JsonType::Integer)
    }

    /// A schema's declared types: its `type`, or else the union of its alternatives' types
    /// (an alternative that is itself alternatives gives theirs; a nullable one, T's and null).
    pub(super) fn types(&self, node: &Node) -> Vec<JsonType> {
        let mut out = Vec::new();
        self.union(node, &mut out, 0);
        out
    }

    fn union(&self, node: &Node, out: &mut Vec<JsonType>, depth: usize) {
        // Bounded: alternatives may refer back to themselves.
        if depth > 32 {
            return;
        }
        if let Some(types) = &node.types {
            for t in types {
                if !out.contains(t) {
                    out.push(*t);
                }
            }
        } else if depth > 0 && node.nullable.is_some() {
            if let Some(t) = self.nullable(node) {
                self.union(t, out, depth + 1);
            }
            out.retain(|t| *t != JsonType::Null);
            out.push(JsonType::Null);
        } else {
            for &alternative in &node.alternatives {
                self.union(self.resolve(alternative), out, depth + 1);
            }
        }
    }

    /// `{desc}` of node `id` (ERRORS.md §5); `noun` stands in for a missing `type`, `example`
    /// is its pattern's (§11.5).
    fn describe(&self, id: usize, noun: Option<JsonType>, example: Option<&str>) -> String {
        let node = self.resolve(id);
        match self.nullable(node) {
            Some(t) => {
                let mut out = self.describe_plain(t, noun, example);
                out.push_str(" or null");
                out
            }
            None => self.describe_plain(node, noun, example),
        }
    }

    /// The items phrase of `{desc}` for `node`'s `items` I (after `$ref`, and T for a nullable
    /// I): `, each an object with fields {names}`, `, each one of: {values}`, `, each {type}`,
    /// or nothing.
    fn each(&self, node: &Node) -> String {
        let mut out = String::new();
        if let Some(items) = node.items.map(|id| self.value_node(self.resolve(id))) {
            if !items.known.is_empty() {
                out.push_str(", each an object with fields ");
                message::write_list(&mut out, items.known.iter(), |out, n| out.push_str(n));
            } else if let Some(allowed) = &items.allowed {
                out.push_str(", each one of: ");
                message::write_list(&mut out, allowed.iter(), message::write_literal);
            } else if let Some(types) = &items.types {
                out.push_str(", each ");
                message::write_types(&mut out, types.iter().copied());
            }
        }
        out
    }

    fn describe_plain(&self, node: &Node, noun: Option<JsonType>, example: Option<&str>) -> String {
        let mut out = String::new();
        if let Some(value) = &node.constant {
            out.push_str("exactly ");
            message::write_literal(&mut out, value);
            return out;
        }
        let mut types = self.types(node);
        if let Some(allowed) = &node.allowed {
            // ` or null` only where null is valid: never where the type excludes it (§10 rule 2).
            let null_valid = types.is_empty() || types.contains(&JsonType::Null);
            let (values, or_null) = match null_valid {
                true => without_null(allowed, Value::is_null),
                false => (allowed.iter().collect(), false),
            };
            out.push_str("one of: ");
            message::write_list(&mut out, values.into_iter(), message::write_literal);
            if or_null {
                out.push_str(" or null");
            }
            return out;
        }
        if types.is_empty() {
            types.extend(noun);
        }
        let (types, or_null) = without_null(&types, |t| *t == JsonType::Null);
        match (types.as_slice(), node.format) {
            ([JsonType::String], Some(format)) => out.push_str(format),
            ([], _) => out.push_str("a value"),
            (types, _) => message::write_types(&mut out, types.iter().copied().copied()),
        }
        if let Some(pattern) = &node.pattern {
            message::write_pattern(&mut out, " matching the pattern ", pattern, example);
        }
        out.push_str(&node.constraints);
        out.push_str(&self.each(node));
        if !node.known.is_empty() {
            out.push_str(" with fields ");
            message::write_list(&mut out, node.known.iter(), |out, n| out.push_str(n));
        }
        if or_null {
            out.push_str(" or null");
        }
        out
    }
}

/// Rule 4 of `{desc}`: when `null` is one of several accepted values, it is left out of the
/// list and ` or null` ends the description. The values to list, and whether it ends so.
fn without_null<T>(all: &[T], is_null: impl Fn(&T) -> bool) -> (Vec<&T>, bool) {
    let rest: Vec<&T> = all.iter().filter(|v| !is_null(v)).collect();
    if !rest.is_empty() && rest.len() < all.len() {
        (rest, true)
    } else {
        (all.iter().collect(), false)
    }
}

/// The phrases of a schema's own keywords after its pattern's, in the order `{desc}` writes
/// them.
fn constraints(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    let count = |key: &str| map.get(key).and_then(Value::as_u64);
    range(
        &mut out,
        count("minLength"),
        count("maxLength"),
        "character",
    );
    let mut first = true;
    for (key, op) in [
        ("minimum", " >= "),
        ("exclusiveMinimum", " > "),
        ("maximum", " <= "),
        ("exclusiveMaximum", " < "),
    ] {
        // The ranges of 64-bit integers are the type's, not rules of the field (§11.4).
        if let Some(n) = map
            .get(key)
            .and_then(Value::as_number)
            .filter(|n| !is_64_bit(n))
        {
            if !first {
                out.push_str(" and");
            }
            first = false;
            out.push_str(op);
            text::write_number(&mut out, n);
        }
    }
    if let Some(m) = map.get("multipleOf").and_then(Value::as_number) {
        out.push_str(" that is a multiple of ");
        text::write_number(&mut out, m);
    }
    range(&mut out, count("minItems"), count("maxItems"), "item");
    out
}

/// Whether a bound's absolute value is at least 2^53 (ERRORS.md §11.4): the range of Rust's
/// `u64`, `usize` or `i64`, which no double holds every integer of.
fn is_64_bit(n: &Number) -> bool {
    const LIMIT: u64 = 1 << 53;
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u >= LIMIT,
        (None, Some(i)) => i.unsigned_abs() >= LIMIT,
        (None, None) => n.as_f64().is_some_and(|x| x.abs() >= LIMIT as f64),
    }
}

/// The string `examples` of a schema that could be shown whole (at most 50 characters).
fn examples_of(map: &Map<String, Value>) -> Vec<String> {
    let Some(Value::Array(examples)) = map.get("examples") else {
        return Vec::new();
    };
    examples
        .iter()
        .filter_map(Value::as_str)
        .filter(|e| e.chars().nth(50).is_none())
        .map(str::to_owned)
        .collect()
}

/// ` of at least {n} items`, ` of at most {m} items`, ` of {n} to {m} items`, ` of exactly {n} items`.
fn range(out: &mut String, min: Option<u64>, max: Option<u64>, noun: &str) {
    let mut buf = [0; 20];
    let last = match (min, max) {
        (Some(n), Some(m)) if n == m => {
            out.push_str(" of exactly ");
            out.push_str(itoa(n, &mut buf));
            n
        }
        (Some(n), Some(m)) => {
            out.push_str(" of ");
            out.push_str(itoa(n, &mut buf));
            out.push_str(" to ");
            out.push_str(itoa(m, &mut buf));
            m
        }
        (Some(n), None) => {
            out.push_str(" of at least ");
            out.push_str(itoa(n, &mut buf));
            n
        }
        (None, Some(m)) => {
            out.push_str(" of at most ");
            out.push_str(itoa(m, &mut buf));
            m
        }
        (None, None) => return,
    };
    out.push(' ');
    out.push_str(noun);
    if last != 1 {
        out.push('s');
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
