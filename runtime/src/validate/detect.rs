//! Detection: the `jsonschema` crate finds the failing keywords; this module maps each one to a
//! [`ProblemKind`] at a [`FieldPath`] and puts them in the contract's order.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use jsonschema::error::{ValidationError as Failure, ValidationErrorKind as K};
use serde_json::{Map, Number, Value};

use super::copy::for_validator;
use super::flat::Flat;
use super::group::{Groups, merge};
use super::layout::{Layout, Node};
use super::pointer::unescape;
use super::problem::Sent;
use super::{
    Field, FieldPath, Format, MAX_FIELDS, PathSegment, Problem, ProblemKind, ValidationError,
};
use foldhash::fast::RandomState;

/// An action's input schema, compiled once and used for every call.
///
/// ```
/// use mcp_fusion::validate::Schema;
/// use serde_json::json;
///
/// let schema = Schema::new(&json!({"type": "object", "properties": {"id": {"type": "string"}}})).unwrap();
/// assert!(schema.problems(&json!({"id": "inv_1"})).is_empty());
/// let problems = schema.problems(&json!({"id": 7}));
/// assert_eq!(problems[0].line(), "Invalid type. You sent: 7. Expected a string.");
/// ```
pub struct Schema {
    validator: jsonschema::Validator,
    schema: Value,
    layout: Layout,
    /// A walk of our own, when the schema is a flat object (see [`Flat`]).
    flat: Option<Flat>,
}

/// How every validator of a schema is compiled: draft 2020-12, the contract's formats asserted,
/// `multipleOf` as the contract defines it.
pub(super) type Options = jsonschema::ValidationOptions<'static>;

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// A schema the validator cannot compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError(String);

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON Schema: {}", self.0)
    }
}

impl std::error::Error for SchemaError {}

impl Schema {
    /// Compiles a JSON Schema (draft 2020-12) with the contract's rules: `format` asserted for
    /// email, uri, uuid, date-time, date, ipv4 and ipv6; `multipleOf` exact for integers.
    ///
    /// ```
    /// use mcp_fusion::validate::Schema;
    /// assert!(Schema::new(&serde_json::json!({"type": "object"})).is_ok());
    /// assert!(Schema::new(&serde_json::json!({"type": 12})).is_err());
    /// // A `$ref` must be a JSON Pointer into the schema (`~` written `~0`).
    /// let coord = serde_json::json!({"properties": {"at": {"$ref": "#/$defs/Coord~Inner"}},
    ///                                "$defs": {"Coord~Inner": {"type": "string"}}});
    /// assert!(Schema::new(&coord).is_err());
    /// ```
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        // A reference that is no JSON Pointer would be followed by the validator, but not
        // described: the same field checked against its target and described as `a value`.
        if let Some((reference, why)) = super::pointer::invalid_references(schema).first() {
            return Err(SchemaError(format!(
                "the $ref {reference:?} is no JSON Pointer: {why}"
            )));
        }
        let options = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .with_keyword("multipleOf", multiple_of::keyword);
        let copy = for_validator(schema);
        let validator = options
            .build(&copy)
            .map_err(|e| SchemaError(e.to_string()))?;
        let accepts = |holder: &Map<String, Value>, example: &str| {
            accepts_example(&options, schema, holder, example)
        };
        let layout = Layout::new(schema, &accepts);
        Ok(Schema {
            validator,
            schema: schema.clone(),
            flat: Flat::new(&copy, &layout, &options),
            layout,
        })
    }

    /// The schema as given: the one the tool advertises.
    pub fn as_value(&self) -> &Value {
        &self.schema
    }

    /// Whether `args` has no problem at all (the fast path of a valid call).
    pub fn is_valid(&self, args: &Value) -> bool {
        self.validator.is_valid(args)
    }

    /// Every problem in `args`, in the contract's order (§5). Unbounded: a call's arguments are
    /// checked with [`validate`](Self::validate), which builds only the problems it shows.
    pub fn problems(&self, args: &Value) -> Vec<Problem> {
        self.collect(args, usize::MAX).0
    }

    /// Checks a call's arguments (discriminator already removed) for the qualified `action`.
    ///
    /// The same problem in several elements of one array is one field (ERRORS.md §11.6,
    /// `lines[0-24].quantity`), and fields are grouped before the 20 shown are chosen.
    ///
    /// Time and memory are linear in the size of `args`: problems outside arrays past the 20
    /// shown are counted, never built; a problem in an array's element is kept, as one index of
    /// its group, until the groups shown are chosen. Arguments that pass cost no allocation to
    /// check. Against a flat object schema (fields that are each one value: strings, numbers,
    /// booleans, with their bounds, patterns, formats, enums, maybe behind a `$ref`, maybe or
    /// null) failing arguments are checked field by field and cost the problems kept. Against
    /// any other schema they cost most while the validator lists every failing keyword (about
    /// 400 bytes each) before they are counted: at most about 210 bytes per byte of arguments
    /// written as JSON (`tests/bounds.rs` holds it under 256). A server validates the calls whose
    /// arguments hold more than 4,096 values one at a time.
    pub fn validate(&self, action: &str, args: &Value) -> Result<(), ValidationError> {
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let (fields, more) = match (&self.flat, args) {
            (Some(flat), Value::Object(args)) => {
                let (shown, total) = flat.detect(args, &self.layout, MAX_FIELDS, Field::one);
                let more = total - shown.len();
                (shown, more)
            }
            _ => {
                let mut found = Found::new(MAX_FIELDS).grouping();
                self.detect(args, &mut found);
                found.finish_fields()
            }
        };
        Err(ValidationError::of_fields(action.to_owned(), fields, more))
    }

    /// The first `keep` problems in the contract's order, each alone, and how many there are.
    pub(super) fn collect(&self, args: &Value, keep: usize) -> (Vec<Problem>, usize) {
        if self.validator.is_valid(args) {
            return (Vec::new(), 0);
        }
        if let (Some(flat), Value::Object(args)) = (&self.flat, args) {
            return flat.detect(args, &self.layout, keep, |problem| problem);
        }
        let mut found = Found::new(keep);
        self.detect(args, &mut found);
        found.finish()
    }

    /// The problems found the long way (the crate's list), and whether [`Flat`] would walk
    /// `args`: for the property holding the two to the same list.
    #[cfg(test)]
    pub(super) fn long_way(&self, args: &Value, keep: usize) -> ((Vec<Problem>, usize), bool) {
        if self.validator.is_valid(args) {
            return ((Vec::new(), 0), self.flat.is_some());
        }
        let mut found = Found::new(keep);
        self.detect(args, &mut found);
        (found.finish(), self.flat.is_some())
    }

    /// Finds the problems of `args` from the crate's list of failing keywords.
    fn detect<'a>(&'a self, args: &'a Value, found: &mut Found<'a>) {
        // The crate lists every failing keyword at once (each ~400 bytes): read the list twice
        // rather than make it twice.
        let failures: Vec<Failure<'_>> = self.validator.iter_errors(args).collect();
        // A value of the wrong type is one problem: nothing else at its path or below it. Where
        // values are mistyped is known before any problem is counted. The first few are located
        // once, here, for both passes; the rest again below (kept, every one would be memory
        // held for the whole call).
        let mut mistyped = Vec::new();
        for (i, failure) in failures.iter().enumerate() {
            if matches!(failure.kind(), K::Type { .. }) && self.collapsed(failure).is_none() {
                let pointer = failure.instance_path().as_str();
                if let Some(at) = self.locate(args, pointer, found) {
                    let hash = found.hash(&at.path);
                    found.mistyped.insert(hash);
                    if mistyped.len() < MAX_FIELDS {
                        mistyped.push((i, at));
                    }
                }
            }
        }
        let mut mistyped = mistyped.into_iter().peekable();
        for (i, failure) in failures.iter().enumerate() {
            let at = mistyped.next_if(|(j, _)| *j == i).map(|(_, at)| at);
            self.map(failure, args, at, found);
        }
    }

    /// The keyword and holder depth of a failure the crate reports below the value holding
    /// the failing keyword (see [`generic_holder`]).
    fn collapsed(&self, failure: &Failure<'_>) -> Option<(&'static str, usize)> {
        self.layout
            .collapses
            .then(|| generic_holder(failure.evaluation_path().as_str()))
            .flatten()
    }

    /// `{desc}` of the schema at `path` in the arguments (`a value` where the schema says
    /// nothing about it).
    pub(crate) fn desc_at(&self, path: &FieldPath) -> Arc<str> {
        let mut node = self.layout.root();
        for segment in path.segments() {
            node = node.and_then(|n| {
                let n = self.layout.nullable(n).unwrap_or(n);
                match segment {
                    PathSegment::Key(key) => self
                        .layout
                        .field(n, key)
                        .map(|(_, child)| child)
                        .or_else(|| self.layout.additional(n)),
                    PathSegment::Index(i) => self.layout.item(n, *i),
                }
            });
        }
        node.map_or_else(|| Arc::from("a value"), |n| n.desc.clone())
    }

    /// A copy of `args` in which each whole-number float (`2.0`) where the schema allows an
    /// integer is that integer, as the contract promises the handler; `None` when there is none.
    pub(crate) fn integers(&self, args: &Value) -> Option<Value> {
        let mut copy = args.clone();
        self.integers_at(&mut copy, self.layout.root(), 0)
            .then_some(copy)
    }

    fn integers_at(&self, value: &mut Value, node: Option<&Node>, depth: usize) -> bool {
        let Some(node) = node.filter(|_| depth < 128) else {
            return false;
        };
        let inner = self.layout.nullable(node).unwrap_or(node);
        match value {
            Value::Number(n) if n.is_f64() && self.layout.takes_integer(node) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                let whole = if x.fract() != 0.0 {
                    None
                } else if (0.0..18_446_744_073_709_551_616.0).contains(&x) {
                    Some(Number::from(x as u64))
                } else if (-9_223_372_036_854_775_808.0..0.0).contains(&x) {
                    Some(Number::from(x as i64))
                } else {
                    None
                };
                whole.map(|w| *n = w).is_some()
            }
            Value::Object(map) => {
                let mut changed = false;
                for (key, item) in map.iter_mut() {
                    let child = self
                        .layout
                        .field(inner, key)
                        .map(|(_, c)| c)
                        .or_else(|| self.layout.additional(inner));
                    changed |= self.integers_at(item, child, depth + 1);
                }
                changed
            }
            Value::Array(items) => {
                let mut changed = false;
                for (i, item) in items.iter_mut().enumerate() {
                    changed |= self.integers_at(item, self.layout.item(inner, i), depth + 1);
                }
                changed
            }
            _ => false,
        }
    }

    /// Maps one failing keyword to its problems: one, or one per unexpected key. `located`: the
    /// failure's place, when it is already known.
    fn map<'a>(
        &'a self,
        failure: &Failure<'_>,
        args: &'a Value,
        located: Option<Located<'a>>,
        found: &mut Found<'a>,
    ) {
        let pointer = failure.instance_path().as_str();
        if let Some((keyword, depth)) = self.collapsed(failure) {
            // Reported by the crate at the keys or elements it applies to (or, for
            // `dependentRequired`, as missing names): one problem at the value holding it.
            let holder = pointer
                .match_indices('/')
                .nth(depth)
                .map_or(pointer, |(i, _)| &pointer[..i]);
            if let Some(at) = self.locate(args, holder, found) {
                // Several keys or elements failing one keyword are one problem.
                if found.generic.insert((found.hash(&at.path), keyword)) {
                    let kind = ProblemKind::Other {
                        keyword: keyword.into(),
                    };
                    found.offer(at.ranks, at.path, kind, || Sent::of(at.value));
                }
            }
            return;
        }
        let Some(at) = located.or_else(|| self.locate(args, pointer, found)) else {
            return;
        };
        let schema_path = failure.schema_path().as_str();
        let (parent, keyword) = schema_path.rsplit_once('/').unwrap_or(("", schema_path));
        // Only some kinds need the failing subschema: look it up only for those.
        let node = || self.layout.at(parent);
        let kind = match failure.kind() {
            K::Required { property } => {
                // The crate (0.61) also reports a required name that is present when the object
                // is closed and the name undeclared: it is unexpected, not missing.
                let Some(name) = property.as_str().filter(|name| {
                    at.value
                        .as_object()
                        .is_none_or(|m| entry(m, name).is_none())
                }) else {
                    return;
                };
                let declared = node().and_then(|n| self.layout.field(n, name));
                let desc = declared.map_or_else(|| Arc::from("a value"), |(_, c)| c.desc.clone());
                let mut ranks = at.ranks;
                ranks.push(declared.map_or((0, usize::MAX), |(i, _)| (0, i)));
                let kind = ProblemKind::MissingRequired { desc };
                return found.offer(ranks, at.path.key(name), kind, || Sent::MISSING);
            }
            K::AdditionalProperties { unexpected } => {
                let declared = node();
                let known = declared.map_or_else(|| Vec::new().into(), |n| n.known.clone());
                let mut at = at;
                for (i, key) in unexpected.iter().enumerate() {
                    let did_you_mean = declared
                        .and_then(|n| n.names.closest(key))
                        .map(|i| known[i].clone());
                    let kind = ProblemKind::UnrecognizedField {
                        did_you_mean,
                        known: known.clone(),
                    };
                    // The last key takes the object's path and sort key; the others, copies.
                    let (mut ranks, path) = if i + 1 == unexpected.len() {
                        (std::mem::take(&mut at.ranks), std::mem::take(&mut at.path))
                    } else {
                        (at.ranks.clone(), at.path.clone())
                    };
                    ranks.push((1, found.position(at.value, key)));
                    let path = path.key(key.as_str());
                    let value = at
                        .value
                        .as_object()
                        .and_then(|m| entry(m, key))
                        .map(|e| e.1);
                    found.offer(ranks, path, kind, || value.map_or(Sent::MISSING, Sent::of));
                }
                return;
            }
            K::PropertyNames { error } => {
                let Some(key) = error.instance().as_str() else {
                    return;
                };
                let desc = at
                    .node
                    .and_then(|n| {
                        self.layout
                            .property_names(self.layout.nullable(n).unwrap_or(n))
                    })
                    .or_else(|| node().and_then(|n| self.layout.property_names(n)))
                    .map_or_else(|| Arc::from("a string"), |n| n.key_desc.clone());
                // The crate reports each failing keyword of a key: one problem per key, and
                // a key's errors come one after another.
                let this = (found.hash(&at.path), key.to_owned());
                if found.last_key.as_ref() != Some(&this) {
                    found.last_key = Some(this);
                    let kind = ProblemKind::InvalidKey { desc };
                    let key = Value::String(key.to_owned());
                    found.offer(at.ranks, at.path, kind, || Sent::of(&key));
                }
                return;
            }
            K::Type { .. } => {
                // The field as declared describes the whole value: for a nullable alternative
                // that is "T or null", not T alone.
                let failing = node();
                let whole = at.node.filter(|n| match failing {
                    Some(f) => {
                        n.origin == f.origin
                            || self
                                .layout
                                .nullable(n)
                                .is_some_and(|t| t.origin == f.origin)
                    }
                    None => true,
                });
                let desc = whole
                    .or(failing)
                    .map_or_else(|| Arc::from("a value"), |n| n.desc.clone());
                ProblemKind::InvalidType { desc }
            }
            // Only the seven formats are asserted (the validator's copy drops the others).
            K::Format { format } => match Format::from_name(format) {
                Some(format) => ProblemKind::Format(format),
                None => return,
            },
            K::Pattern { pattern } => {
                // The example of the chain from the schema at the path, when it ends at this
                // pattern; else the pattern's own schema's.
                let holder = node();
                let chosen = |n: &Node| {
                    n.example
                        .as_ref()
                        .filter(|(p, _)| holder.is_some_and(|h| h.origin == *p))
                        .map(|(_, e)| e.clone())
                };
                ProblemKind::Pattern {
                    pattern: pattern.clone(),
                    example: at.node.and_then(chosen).or_else(|| holder.and_then(chosen)),
                }
            }
            K::MinLength { limit } => ProblemKind::TooShort { min: *limit },
            K::MaxLength { limit } => ProblemKind::TooLong { max: *limit },
            K::Minimum { limit } => ProblemKind::TooSmall {
                limit: number(limit),
                exclusive: false,
            },
            K::ExclusiveMinimum { limit } => ProblemKind::TooSmall {
                limit: number(limit),
                exclusive: true,
            },
            K::Maximum { limit } => ProblemKind::TooLarge {
                limit: number(limit),
                exclusive: false,
            },
            K::ExclusiveMaximum { limit } => ProblemKind::TooLarge {
                limit: number(limit),
                exclusive: true,
            },
            K::MinItems { limit } => ProblemKind::TooFewItems {
                min: *limit,
                each: node().map_or_else(|| Arc::from(""), |n| n.each.clone()),
            },
            K::MaxItems { limit } => ProblemKind::TooManyItems {
                max: *limit,
                each: node().map_or_else(|| Arc::from(""), |n| n.each.clone()),
            },
            K::Custom { .. } if keyword == "multipleOf" => {
                let Some(multiple_of) = node().and_then(|n| n.multiple_of.clone()) else {
                    return;
                };
                ProblemKind::NotMultipleOf { multiple_of }
            }
            K::Enum { options } => ProblemKind::InvalidOption {
                allowed: node().and_then(|n| n.allowed.clone()).unwrap_or_else(|| {
                    options
                        .as_array()
                        .map_or_else(|| vec![(**options).clone()], Clone::clone)
                        .into()
                }),
            },
            K::Constant { expected_value } => ProblemKind::ConstMismatch {
                expected: (**expected_value).clone(),
            },
            K::AnyOf { .. } => ProblemKind::NoAlternative { one_of: false },
            K::OneOfNotValid { .. } | K::OneOfMultipleValid { .. } => {
                ProblemKind::NoAlternative { one_of: true }
            }
            // A `false` subschema: the keyword that holds it failed.
            K::FalseSchema => ProblemKind::Other {
                keyword: last_keyword(failure.evaluation_path().as_str()).into(),
            },
            _ => ProblemKind::Other {
                keyword: unescape(keyword).into_owned(),
            },
        };
        found.offer(at.ranks, at.path, kind, || Sent::of(at.value));
    }

    /// Walks a failure's instance location through the arguments and the layout together,
    /// giving the path, the value there and the sort key of each step. A segment is a key or an
    /// index according to the value it steps into (a key may well be `"0"`).
    fn locate<'a>(
        &'a self,
        args: &'a Value,
        pointer: &str,
        found: &mut Found<'a>,
    ) -> Option<Located<'a>> {
        // Room for each step, and for the one a missing or unexpected key adds.
        let steps = pointer.bytes().filter(|&b| b == b'/').count() + 1;
        let mut at = Located {
            path: FieldPath::with_capacity(steps),
            ranks: Vec::with_capacity(steps),
            value: args,
            node: self.layout.root(),
        };
        for raw in pointer.split('/').skip(1) {
            let segment = unescape(raw);
            let node = at.node.map(|n| self.layout.nullable(n).unwrap_or(n));
            match at.value {
                Value::Object(map) => {
                    let (key, value) = entry(map, &segment)?;
                    let declared = node.and_then(|n| self.layout.field(n, key));
                    at.ranks.push(match declared {
                        Some((i, _)) => (0, i),
                        None => (1, found.position(at.value, key)),
                    });
                    at.node = match declared {
                        Some((_, child)) => Some(child),
                        None => node.and_then(|n| self.layout.additional(n)),
                    };
                    at.path = at.path.key(key.as_str());
                    at.value = value;
                }
                Value::Array(items) => {
                    let index: usize = segment.parse().ok()?;
                    at.value = items.get(index)?;
                    at.ranks.push((0, index));
                    at.node = node.and_then(|n| self.layout.item(n, index));
                    at.path = at.path.index(index);
                }
                _ => return None,
            }
        }
        Some(at)
    }
}

/// Whether the schema `holder` (holding a `pattern`, as advertised in `root`) accepts `example`
/// (ERRORS.md §11.5): checked by the validator with the root's definitions at hand, so that a
/// `$ref` beside the pattern resolves; by the pattern alone if that schema cannot be compiled
/// on its own.
fn accepts_example(
    options: &Options,
    root: &Value,
    holder: &Map<String, Value>,
    example: &str,
) -> bool {
    let mut alone = holder.clone();
    for defs in ["$defs", "definitions"] {
        if let Some(found) = root.get(defs).filter(|_| !alone.contains_key(defs)) {
            alone.insert(defs.to_owned(), found.clone());
        }
    }
    let example = Value::String(example.to_owned());
    if let Ok(validator) = options.build(&for_validator(&Value::Object(alone))) {
        return validator.is_valid(&example);
    }
    let pattern = serde_json::json!({"pattern": holder.get("pattern")});
    options
        .build(&pattern)
        .is_ok_and(|validator| validator.is_valid(&example))
}

/// Keywords whose failures the crate reports below the value holding them, and §5 at it.
const COLLAPSED: [&str; 3] = ["patternProperties", "prefixItems", "dependentRequired"];

/// When a failure's evaluation path passes through a [`COLLAPSED`] keyword: that keyword and
/// how many instance steps lead to the value holding it.
fn generic_holder(evaluation: &str) -> Option<(&'static str, usize)> {
    let mut depth = 0;
    let mut segments = evaluation.split('/').skip(1);
    while let Some(segment) = segments.next() {
        if let Some(keyword) = COLLAPSED.iter().find(|k| **k == segment) {
            return Some((keyword, depth));
        }
        match segment {
            // A step into the instance, followed by the name it steps through.
            "properties" => {
                segments.next();
                depth += 1;
            }
            // A step into the instance.
            "items"
            | "additionalProperties"
            | "contains"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "additionalItems" => depth += 1,
            // No step; a name or an index follows.
            "anyOf" | "oneOf" | "allOf" | "dependentSchemas" | "$defs" | "definitions" => {
                segments.next();
            }
            _ => {}
        }
    }
    None
}

/// The last keyword of an evaluation path (skipping a trailing name or index).
fn last_keyword(evaluation: &str) -> &str {
    let mut last = "false";
    let mut segments = evaluation.split('/').skip(1);
    while let Some(segment) = segments.next() {
        last = segment;
        if matches!(
            segment,
            "properties"
                | "patternProperties"
                | "prefixItems"
                | "anyOf"
                | "oneOf"
                | "allOf"
                | "dependentSchemas"
                | "$defs"
                | "definitions"
        ) {
            segments.next();
        }
    }
    last
}

/// A key's entry in an object. Arguments are mostly a few keys: comparing them is cheaper than
/// hashing the name.
pub(super) fn entry<'v>(map: &'v Map<String, Value>, key: &str) -> Option<(&'v String, &'v Value)> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| *k == key)
    } else {
        map.get_key_value(key)
    }
}

struct Located<'a> {
    path: FieldPath,
    ranks: Vec<(u8, usize)>,
    value: &'a Value,
    node: Option<&'a Node>,
}

/// Problems found so far: the first `keep` in the contract's order, and a count of all. At
/// each level of a problem's sort key a declared key ranks by declaration, an undeclared one
/// after them in the order it was sent, an index by itself; then the problem's row of §5; then
/// the order found.
struct Found<'a> {
    keep: usize,
    best: BinaryHeap<Ranked>,
    /// When the problems are written (ERRORS.md §11.6): those in an array's elements, joined
    /// with the same problem in the array's other elements; `best` then keeps the others.
    groups: Option<Groups<Place>>,
    total: usize,
    found: usize,
    /// Paths are kept as hashes, under a seed drawn for this check (so that a call cannot aim
    /// two of its paths at one hash): sets of them cost 8 bytes a path.
    paths: RandomState,
    /// Paths of mistyped values (found first): nothing else is reported at or below them.
    mistyped: Hashes,
    /// Mistyped values already reported (a value has one type problem).
    typed: Hashes,
    /// `patternProperties`, `prefixItems`, `dependentRequired` problems already reported.
    generic: HashSet<(u64, &'static str), Keyed>,
    /// The last key refused by `propertyNames`, with its object's path.
    last_key: Option<(u64, String)>,
    /// Key positions of large objects, built once per object (by address), so that a call
    /// with 100,000 unknown keys stays linear.
    positions: HashMap<usize, HashMap<&'a str, usize>>,
}

/// Sets of path hashes, which are keyed already (`Found::paths`): mixed with a multiply rather
/// than hashed a second time.
type Keyed = std::hash::BuildHasherDefault<Mix>;

/// A set of path hashes: the first few in place (most calls have a few mistyped values at
/// most, and then no table is allocated), the rest in a table.
#[derive(Default)]
struct Hashes {
    few: [u64; 4],
    len: usize,
    many: HashSet<u64, Keyed>,
}

impl Hashes {
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn contains(&self, hash: u64) -> bool {
        self.few[..self.len.min(self.few.len())].contains(&hash)
            || (self.len > self.few.len() && self.many.contains(&hash))
    }

    /// Whether `hash` was not in the set yet.
    fn insert(&mut self, hash: u64) -> bool {
        if self.contains(hash) {
            return false;
        }
        match self.few.get_mut(self.len) {
            Some(slot) => *slot = hash,
            None => {
                self.many.insert(hash);
            }
        }
        self.len += 1;
        true
    }
}

#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A problem kept, with its sort key.
struct Ranked {
    ranks: Vec<(u8, usize)>,
    found: usize,
    problem: Problem,
}

impl Ranked {
    fn key(&self) -> (&[(u8, usize)], (u8, &str), usize) {
        (&self.ranks, self.problem.kind.rank(), self.found)
    }

    /// The sort key, owned.
    fn place(&self) -> Place {
        let (row, keyword) = self.problem.kind.rank();
        Place {
            ranks: self.ranks.clone(),
            row: (row, keyword.into()),
            found: self.found,
        }
    }
}

/// A problem's place in the contract's order, as [`Ranked`] compares it.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    ranks: Vec<(u8, usize)>,
    row: (u8, Box<str>),
    found: usize,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

const SCAN_MAX: usize = 16;

impl<'a> Found<'a> {
    fn new(keep: usize) -> Self {
        Found {
            keep,
            best: BinaryHeap::new(),
            groups: None,
            total: 0,
            found: 0,
            paths: RandomState::default(),
            mistyped: Hashes::default(),
            typed: Hashes::default(),
            generic: HashSet::default(),
            last_key: None,
            positions: HashMap::new(),
        }
    }

    /// Joins the same problem in several elements of one array (for writing them, §11.6).
    fn grouping(mut self) -> Self {
        self.groups = Some(Groups::new());
        self
    }

    /// Counts a problem, unless a mistyped value hides it, and keeps it while it is among the
    /// first `keep`; its `{sent}` is written only then. When grouping, a problem in an array's
    /// element is always kept, joined with the same problem in other elements.
    fn offer(
        &mut self,
        ranks: Vec<(u8, usize)>,
        path: FieldPath,
        kind: ProblemKind,
        sent: impl FnOnce() -> Sent,
    ) {
        let is_type = matches!(kind, ProblemKind::InvalidType { .. });
        // Without mistyped values, only a type problem needs its path's hash.
        if is_type || !self.mistyped.is_empty() {
            let mut hasher = self.paths.build_hasher();
            let mut hidden = false;
            for segment in path.segments() {
                hidden |= self.mistyped.contains(hasher.finish());
                segment.hash(&mut hasher);
            }
            let own = hasher.finish();
            hidden |= match is_type {
                true => !self.typed.insert(own),
                false => self.mistyped.contains(own),
            };
            if hidden {
                return;
            }
        }
        self.total += 1;
        self.found += 1;
        let mut ranked = Ranked {
            ranks,
            found: self.found,
            problem: Problem {
                path,
                kind,
                sent: Sent::Fixed(""),
            },
        };
        if let Some(groups) = &mut self.groups
            && ranked.problem.path.last_index().is_some()
        {
            // Whether it joins a group is decided by its line, `{sent}` included.
            ranked.problem.sent = sent();
            let place = ranked.place();
            if let Some(alone) = groups.add(place, ranked.problem) {
                ranked.problem = alone;
                self.keep_best(ranked);
            }
            return;
        }
        if self.best.len() >= self.keep {
            match self.best.peek() {
                Some(worst) if ranked < *worst => {}
                _ => return,
            }
        }
        ranked.problem.sent = sent();
        self.keep_best(ranked);
    }

    /// Keeps a problem among the first `keep`, its `{sent}` written.
    fn keep_best(&mut self, ranked: Ranked) {
        self.best.push(ranked);
        if self.best.len() > self.keep {
            self.best.pop();
        }
    }

    /// A path's hash, as [`offer`](Self::offer) makes it.
    fn hash(&self, path: &FieldPath) -> u64 {
        let mut hasher = self.paths.build_hasher();
        path.segments()
            .iter()
            .for_each(|segment| segment.hash(&mut hasher));
        hasher.finish()
    }

    /// The first `keep` fields in order (the same problem in several elements of one array
    /// as one field), and how many problems none of them reports.
    fn finish_fields(self) -> (Vec<Field>, usize) {
        let (keep, total) = (self.keep, self.total);
        let singles = self
            .best
            .into_sorted_vec()
            .into_iter()
            .map(|ranked| (ranked.place(), Field::one(ranked.problem)))
            .collect();
        let groups = self.groups.map_or_else(Vec::new, |g| g.first(keep));
        merge(singles, groups, keep, total)
    }

    /// The problems kept, in order, and the number counted.
    fn finish(self) -> (Vec<Problem>, usize) {
        let kept = self.best.into_sorted_vec();
        // Into a vector of its own size (collected in place, the larger one would be resized).
        let mut problems = Vec::with_capacity(kept.len());
        problems.extend(kept.into_iter().map(|r| r.problem));
        (problems, self.total)
    }

    /// Where `key` was sent in `object`.
    fn position(&mut self, object: &'a Value, key: &str) -> usize {
        let Value::Object(map) = object else {
            return usize::MAX;
        };
        let position = if map.len() <= SCAN_MAX {
            map.keys().position(|k| k == key)
        } else {
            let index = self
                .positions
                .entry(map as *const Map<String, Value> as usize)
                .or_insert_with(|| {
                    map.keys()
                        .enumerate()
                        .map(|(i, k)| (k.as_str(), i))
                        .collect()
                });
            index.get(key).copied()
        };
        position.unwrap_or(usize::MAX)
    }
}

fn number(limit: &Value) -> Number {
    limit
        .as_number()
        .cloned()
        .unwrap_or_else(|| Number::from(0))
}

/// `multipleOf` as the contract defines it: integers are tested exactly; otherwise value / m
/// must be a finite double with no fractional part.
mod multiple_of {
    use jsonschema::{Keyword, ValidationError};
    use serde_json::{Map, Number, Value};

    pub(super) struct MultipleOf(Number);

    #[allow(clippy::unnecessary_wraps)] // the signature `with_keyword` asks for
    pub(super) fn keyword<'a>(
        _: &'a Map<String, Value>,
        value: &'a Value,
        _: jsonschema::paths::Location,
    ) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
        match value
            .as_number()
            .filter(|m| m.as_f64().is_some_and(|m| m > 0.0))
        {
            Some(m) => Ok(Box::new(MultipleOf(m.clone()))),
            None => Err(ValidationError::custom(
                "multipleOf must be a number greater than 0",
            )),
        }
    }

    fn exact(n: &Number) -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    }

    pub(super) fn holds(value: &Number, m: &Number) -> bool {
        match (exact(value), exact(m)) {
            (Some(v), Some(m)) => m != 0 && v % m == 0,
            _ => {
                let q = value.as_f64().unwrap_or(f64::NAN) / m.as_f64().unwrap_or(f64::NAN);
                q.is_finite() && q.fract() == 0.0
            }
        }
    }

    impl<'i> Keyword<'i> for MultipleOf {
        fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
            if self.is_valid(instance) {
                Ok(())
            } else {
                Err(ValidationError::custom("not a multiple"))
            }
        }

        fn is_valid(&self, instance: &'i Value) -> bool {
            instance.as_number().is_none_or(|n| holds(n, &self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(schema: Value, args: Value) -> Vec<(String, String)> {
        Schema::new(&schema)
            .unwrap()
            .problems(&args)
            .iter()
            .map(|p| (p.path().to_string(), p.line()))
            .collect()
    }

    #[test]
    fn numeric_keys_are_keys() {
        let schema = json!({"type": "object", "properties": {"0": {"type": "string"}}});
        assert_eq!(
            lines(schema, json!({"0": 1})),
            [(
                "[\"0\"]".into(),
                "Invalid type. You sent: 1. Expected a string.".into()
            )]
        );
    }

    #[test]
    fn refs_are_followed_for_types_and_order() {
        let schema = json!({
            "type": "object",
            "$defs": {"Line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku", "qty"]}},
            "properties": {"line": {"$ref": "#/$defs/Line"}, "other": {"$ref": "#/$defs/Line"}},
            "required": ["other"]
        });
        let got = lines(schema, json!({"line": {"qty": "x"}}));
        assert_eq!(
            got[0],
            (
                "line.sku".into(),
                "Required field is missing. You sent: (missing). Expected a string.".into()
            )
        );
        assert_eq!(
            got[1],
            (
                "line.qty".into(),
                "Invalid type. You sent: 'x'. Expected an integer.".into()
            )
        );
        assert_eq!(
            got[2],
            (
                "other".into(),
                "Required field is missing. You sent: (missing). Expected an object with fields sku, qty.".into()
            )
        );
    }

    #[test]
    fn a_wrong_type_is_one_problem_described_whole() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}});
        let got = lines(schema, json!({"n": 0.5}));
        assert_eq!(
            got,
            [(
                "n".into(),
                "Invalid type. You sent: 0.5. Expected an integer >= 1.".into()
            )]
        );
    }

    #[test]
    fn whole_number_floats_become_integers_only_where_integers_go() {
        let schema = Schema::new(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "x": {"type": "number"},
                "o": {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]},
                "list": {"type": "array", "items": {"type": ["integer", "null"]}},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}}
            },
            "$defs": {"N": {"type": "integer"}}
        }))
        .unwrap();
        let args =
            json!({"n": 2.0, "x": 3.0, "o": -4.0, "list": [1.0, 1.5, null], "map": {"a": 7.0}});
        let fixed = schema.integers(&args).unwrap();
        assert_eq!(
            serde_json::to_string(&fixed).unwrap(),
            r#"{"n":2,"x":3.0,"o":-4,"list":[1,1.5,null],"map":{"a":7}}"#
        );
        assert!(schema.integers(&json!({"n": 2, "x": 3.0})).is_none());
        assert!(schema.integers(&json!({"n": 1e300})).is_none());
    }

    #[test]
    fn refs_are_read_as_their_target() {
        // Percent escapes in the fragment are decoded; keywords beside a `$ref` are ignored.
        let schema = json!({
            "type": "object",
            "properties": {"size": {"$ref": "#/$defs/Size%20Code", "maxLength": 1, "description": "The size."}},
            "required": ["size"],
            "$defs": {"Size Code": {"type": "string", "enum": ["S", "M", "L"]}}
        });
        assert_eq!(
            lines(schema.clone(), json!({})),
            [(
                "size".into(),
                "Required field is missing. You sent: (missing). Expected one of: 'S', 'M', 'L'."
                    .into()
            )]
        );
        assert!(lines(schema, json!({"size": "M"})).is_empty());
    }

    #[test]
    fn desc_at_follows_the_arguments_path() {
        let schema = Schema::new(&json!({
            "type": "object",
            "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}},
            "$defs": {"Line": {"type": "object", "properties": {"quantity": {"type": "integer", "minimum": 1}}}}
        }))
        .unwrap();
        let path = FieldPath::root().key("lines").index(3).key("quantity");
        assert_eq!(&*schema.desc_at(&path), "an integer >= 1");
        assert_eq!(&*schema.desc_at(&FieldPath::root().key("nope")), "a value");
    }

    #[test]
    fn closed_object_without_properties_names_every_key() {
        let schema = json!({"type": "object", "additionalProperties": false});
        let got = lines(schema, json!({"a": 1, "b": 2}));
        assert_eq!(
            got,
            [
                (
                    "a".into(),
                    "Unrecognized field. You sent: 1. Remove it.".into()
                ),
                (
                    "b".into(),
                    "Unrecognized field. You sent: 2. Remove it.".into()
                )
            ]
        );
    }

    #[test]
    fn only_the_contract_formats_are_asserted() {
        let schema = json!({"type": "object", "properties": {"h": {"type": "string", "format": "hostname"}, "e": {"type": "string", "format": "email"}}});
        let got = lines(schema, json!({"h": "not a host!", "e": "nope"}));
        assert_eq!(
            got,
            [(
                "e".into(),
                "Invalid email format. You sent: 'nope'. Expected a valid email address.".into()
            )]
        );
    }

    #[test]
    fn multiple_of_divides_as_the_contract_says() {
        let n = |v: Value| v.as_number().unwrap().clone();
        assert!(multiple_of::holds(&n(json!(10)), &n(json!(5))));
        assert!(!multiple_of::holds(&n(json!(7)), &n(json!(5))));
        assert!(multiple_of::holds(&n(json!(u64::MAX)), &n(json!(5))));
        assert!(!multiple_of::holds(&n(json!(0.3)), &n(json!(0.1))));
        assert!(multiple_of::holds(&n(json!(7)), &n(json!(0.5))));
        assert!(!multiple_of::holds(&n(json!(1e308)), &n(json!(1e-308))));
        let got = lines(
            json!({"properties": {"p": {"multipleOf": 5}}}),
            json!({"p": 7}),
        );
        assert_eq!(
            got,
            [(
                "p".into(),
                "Not a multiple of 5. You sent: 7. Expected a multiple of 5.".into()
            )]
        );
    }

    #[test]
    fn many_unknown_keys_stay_linear_and_ordered() {
        let schema = json!({"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": false});
        let mut args = Map::new();
        for i in (0..100_000).rev() {
            args.insert(format!("k{i}"), json!(i));
        }
        let problems = Schema::new(&schema).unwrap().problems(&Value::Object(args));
        assert_eq!(problems.len(), 100_000);
        assert_eq!(problems[0].path().to_string(), "k99999");
        assert_eq!(problems[99_999].path().to_string(), "k0");
    }

    #[test]
    fn a_required_name_sent_to_a_closed_object_is_unexpected_not_missing() {
        // Nested, so that the crate's list is read (not the flat walk).
        let schema = json!({"type": "object", "properties": {"o": {
            "type": "object", "properties": {"a": {}}, "required": ["id"], "additionalProperties": false
        }}});
        assert_eq!(
            lines(schema.clone(), json!({"o": {"id": 1}})),
            [(
                "o.id".to_owned(),
                "Unrecognized field. You sent: 1. Remove it or rename it: did you mean \"a\"?"
                    .to_owned()
            )]
        );
        assert_eq!(lines(schema, json!({"o": {}}))[0].0, "o.id");
    }

    #[test]
    fn deep_arguments_do_not_overflow() {
        // Building and dropping a 10,000-deep value recurses in serde_json, so that happens on a
        // big stack; detection itself runs on a small one, proving it does not follow the depth.
        let big = std::thread::Builder::new().stack_size(256 << 20);
        big.spawn(|| {
            let schema =
                Schema::new(&json!({"type": "object", "properties": {"a": {"type": "string"}}}))
                    .unwrap();
            let mut deep = json!(1);
            for _ in 0..10_000 {
                deep = json!([deep]);
            }
            let args = json!({"a": deep, "b": {"c": deep.clone()}});
            std::thread::scope(|scope| {
                let small = std::thread::Builder::new().stack_size(256 << 10);
                let lines = small.spawn_scoped(scope, || {
                    schema
                        .problems(&args)
                        .iter()
                        .map(Problem::line)
                        .collect::<Vec<_>>()
                });
                assert_eq!(
                    lines.unwrap().join().unwrap(),
                    ["Invalid type. You sent: array(1). Expected a string."]
                );
            });
        })
        .unwrap()
        .join()
        .unwrap();
    }

    #[test]
    fn reference_chains_end_where_they_end() {
        // Three links across `$defs` and `definitions`, names needing `~0`, `~1` and percent
        // escapes; a chain that comes back on itself says nothing.
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/one%20~1"},
                "loop": {"$ref": "#/$defs/L"}
            },
            "required": ["a", "loop"],
            "$defs": {"one /": {"$ref": "#/definitions/two~0"}, "L": {"$ref": "#/$defs/L"}},
            "definitions": {"two~": {"$ref": "#/$defs/three%25"}},
            "$comment": "three% is below"
        });
        let mut schema = schema;
        schema["$defs"]["three%"] = json!({"type": "string", "minLength": 2});
        assert_eq!(
            lines(schema, json!({})),
            [
                (
                    "a".into(),
                    "Required field is missing. You sent: (missing). Expected a string of at least 2 characters.".into()
                ),
                (
                    "loop".into(),
                    "Required field is missing. You sent: (missing). Expected a value.".into()
                )
            ]
        );
    }

    #[test]
    fn references_into_alternatives_compile_and_describe() {
        let schema = json!({
            "type": "object",
            "properties": {
                "t": {"$ref": "#/$defs/Opt/anyOf/1"},
                "two": {"$ref": "#/$defs/Level/oneOf/1"}
            },
            "required": ["t", "two"],
            "$defs": {
                "Opt": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}]},
                "Level": {"oneOf": [{"const": 1}, {"const": 2}]}
            }
        });
        assert_eq!(
            lines(schema.clone(), json!({})),
            [
                (
                    "t".into(),
                    "Required field is missing. You sent: (missing). Expected an object with fields n.".into()
                ),
                (
                    "two".into(),
                    "Required field is missing. You sent: (missing). Expected exactly 2.".into()
                )
            ]
        );
        assert_eq!(
            lines(schema, json!({"t": {}, "two": 1})),
            [
                (
                    "t.n".into(),
                    "Required field is missing. You sent: (missing). Expected an integer.".into()
                ),
                (
                    "two".into(),
                    "Invalid value. You sent: 1. Expected exactly 2.".into()
                )
            ]
        );
    }

    #[test]
    fn alternatives_types_are_their_union_all_the_way_down() {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "integer"}]}},
            "required": ["x"],
            "$defs": {"S": {"anyOf": [{"type": "string"}, {"type": "null"}]}}
        });
        assert_eq!(
            lines(schema, json!({})),
            [(
                "x".into(),
                "Required field is missing. You sent: (missing). Expected a string or an integer or null.".into()
            )]
        );
    }

    #[test]
    fn or_null_only_where_null_is_valid() {
        let line = |field: Value, sent: Value| {
            let schema = json!({"type": "object", "properties": {"s": field}});
            lines(schema, json!({"s": sent})).remove(0).1
        };
        assert_eq!(
            line(json!({"type": "string", "enum": ["x", null]}), json!(null)),
            "Invalid type. You sent: null. Expected one of: 'x', null."
        );
        assert_eq!(
            line(
                json!({"type": ["string", "null"], "enum": ["x", null]}),
                json!(1)
            ),
            "Invalid type. You sent: 1. Expected one of: 'x' or null."
        );
        assert_eq!(
            line(json!({"enum": ["x", null]}), json!(1)),
            "Invalid option. You sent: 1. Expected one of: 'x', null."
        );
    }

    #[test]
    fn a_nullable_alternative_of_itself_ends() {
        // T of a nullable alternative that refers back to the alternative: its chain of
        // references comes back on itself (ERRORS.md §11.7), and an example is looked for on
        // the way without end.
        let schema = json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/S", "examples": ["a"]}},
            "required": ["x"],
            "$defs": {"S": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}], "examples": ["b"]}}
        });
        let got = lines(schema, json!({}));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "x");
    }

    #[test]
    fn alternatives_that_refer_to_themselves_end() {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "integer"}]}},
            "required": ["x"],
            "$defs": {"A": {"anyOf": [{"anyOf": [{"$ref": "#/$defs/A"}, {"type": "string"}]}, {"type": "null"}]}}
        });
        assert_eq!(
            lines(schema, json!({})),
            [(
                "x".into(),
                "Required field is missing. You sent: (missing). Expected a string or an integer or null.".into()
            )]
        );
    }
}
