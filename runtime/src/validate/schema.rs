//! [`Schema`]: an action's input schema, compiled once, and what it answers of a call's
//! arguments (its problems in the contract's order, `{desc}` at a path, the integers).

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Number, Value};

use super::compile::{self, Options};
use super::copy::for_validator;
use super::detect::{Detector, Found};
use super::flat::Flat;
use super::layout::{Layout, Node};
use super::{Field, FieldPath, MAX_FIELDS, PathSegment, Problem, ValidationError};

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
    /// A walk of our own, when the schema is a flat object (see [`Flat`]): made by the first
    /// arguments that fail, as most actions never see any (its validators, one per field and
    /// keyword, would be memory held from the start; `Schema::flat`).
    flat: OnceLock<Option<Flat>>,
}

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
        let options = compile::options();
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
            flat: OnceLock::new(),
            layout,
        })
    }

    /// The walk of a flat object schema, made the first time arguments fail (from the same
    /// copy and options the validator was compiled with: it cannot fail where that did not).
    fn flat(&self) -> Option<&Flat> {
        self.flat
            .get_or_init(|| {
                Flat::new(
                    &for_validator(&self.schema),
                    &self.layout,
                    &compile::options(),
                )
            })
            .as_ref()
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
    /// null) failing arguments are checked field by field and cost the problems kept (the
    /// first failing arguments of a schema compile the validators of that walk, once). Against
    /// any other schema they cost most while the validator lists every failing keyword (about
    /// 400 bytes each) before they are counted: at most about 210 bytes per byte of arguments
    /// written as JSON (1 MiB of `[0,0,…]` where strings are expected: 211 MiB at the peak; of
    /// wrong tuples: 133 MiB; of strings that all differ, each a group of its own: 93 MiB,
    /// measured in `tests/bounds.rs`), about 0.3 µs per byte on one core. A server validates
    /// the calls whose arguments hold more than 4,096 values one at a time.
    pub fn validate(&self, action: &str, args: &Value) -> Result<(), ValidationError> {
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let (fields, more) = match (self.flat(), args) {
            (Some(flat), Value::Object(args)) => {
                let (shown, total) = flat.detect(args, &self.layout, MAX_FIELDS, Field::one);
                let more = total - shown.len();
                (shown, more)
            }
            _ => {
                let mut found = Found::new(MAX_FIELDS).grouping();
                self.detector().detect(args, &mut found);
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
        if let (Some(flat), Value::Object(args)) = (self.flat(), args) {
            return flat.detect(args, &self.layout, keep, |problem| problem);
        }
        let mut found = Found::new(keep);
        self.detector().detect(args, &mut found);
        found.finish()
    }

    /// The problems found the long way (the crate's list), and whether [`Flat`] would walk
    /// `args`: for the property holding the two to the same list.
    #[cfg(test)]
    pub(super) fn long_way(&self, args: &Value, keep: usize) -> ((Vec<Problem>, usize), bool) {
        if self.validator.is_valid(args) {
            return ((Vec::new(), 0), self.flat().is_some());
        }
        let mut found = Found::new(keep);
        self.detector().detect(args, &mut found);
        (found.finish(), self.flat().is_some())
    }

    /// The detection over this schema's validator and layout.
    fn detector(&self) -> Detector<'_> {
        Detector {
            validator: &self.validator,
            layout: &self.layout,
        }
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

#[cfg(test)]
mod tests;
