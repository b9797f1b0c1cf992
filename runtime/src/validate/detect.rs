//! Detection: the `jsonschema` crate finds the failing keywords; this module maps each one to a
//! [`ProblemKind`] at a [`FieldPath`] and puts them in the contract's order.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use jsonschema::error::{ValidationError as Failure, ValidationErrorKind as K};
use serde_json::{Map, Number, Value};

use super::copy::for_validator;
use super::layout::{Layout, Node};
use super::pointer::unescape;
use super::{FieldPath, Format, PathSegment, Problem, ProblemKind, ValidationError};
use crate::envelope::text;

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
    /// ```
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .with_keyword("multipleOf", multiple_of::keyword)
            .build(&for_validator(schema))
            .map_err(|e| SchemaError(e.to_string()))?;
        Ok(Schema {
            validator,
            schema: schema.clone(),
            layout: Layout::new(schema),
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

    /// Every problem in `args`, in the contract's order (§5).
    pub fn problems(&self, args: &Value) -> Vec<Problem> {
        if self.validator.is_valid(args) {
            return Vec::new();
        }
        let mut found = Found {
            positions: HashMap::new(),
            problems: Vec::new(),
        };
        for failure in self.validator.iter_errors(args) {
            self.map(&failure, args, &mut found);
        }
        let mut problems = found.problems;
        problems.sort_by(|(a, pa), (b, pb)| a.cmp(b).then(pa.kind.rank().cmp(&pb.kind.rank())));
        // A value of the wrong type is one problem: nothing else at its path or below it.
        let mut kept: Vec<Problem> = Vec::with_capacity(problems.len());
        let mut mistyped: Option<FieldPath> = None;
        for (_, problem) in problems {
            if let Some(p) = &mistyped {
                if problem.path.0.starts_with(&p.0) {
                    continue;
                }
                mistyped = None;
            }
            if matches!(problem.kind, ProblemKind::InvalidType { .. }) {
                mistyped = Some(problem.path.clone());
            }
            kept.push(problem);
        }
        kept
    }

    /// Checks a call's arguments (discriminator already removed) for the qualified `action`.
    pub fn validate(&self, action: &str, args: &Value) -> Result<(), ValidationError> {
        let problems = self.problems(args);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ValidationError::new(action, problems))
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

    /// Maps one failing keyword to its problems: one, or one per unexpected key.
    fn map<'a>(&'a self, failure: &Failure<'_>, args: &'a Value, found: &mut Found<'a>) {
        let pointer = failure.instance_path().as_str();
        let collapsed = self.layout.collapses;
        if let Some((keyword, depth)) = collapsed
            .then(|| generic_holder(failure.evaluation_path().as_str()))
            .flatten()
        {
            // Reported by the crate at the keys or elements it applies to (or, for
            // `dependentRequired`, as missing names): one problem at the value holding it.
            let holder = pointer
                .match_indices('/')
                .nth(depth)
                .map_or(pointer, |(i, _)| &pointer[..i]);
            if let Some(at) = self.locate(args, holder, found) {
                // Several keys or elements failing one keyword are one problem.
                let seen = found.problems.iter().any(|(_, p)| {
                    p.path == at.path
                        && matches!(&p.kind, ProblemKind::Other { keyword: k } if k == keyword)
                });
                if !seen {
                    let kind = ProblemKind::Other {
                        keyword: keyword.into(),
                    };
                    found
                        .problems
                        .push((at.ranks, Problem::new(at.path, kind, Some(at.value))));
                }
            }
            return;
        }
        let Some(at) = self.locate(args, pointer, found) else {
            return;
        };
        let schema_path = failure.schema_path().as_str();
        let (parent, keyword) = schema_path.rsplit_once('/').unwrap_or(("", schema_path));
        // Only some kinds need the failing subschema: look it up only for those.
        let node = || self.layout.at(parent);
        let kind = match failure.kind() {
            K::Required { property } => {
                let Some(name) = property.as_str() else {
                    return;
                };
                let declared = node().and_then(|n| self.layout.field(n, name));
                let desc = declared.map_or_else(|| Arc::from("a value"), |(_, c)| c.desc.clone());
                let rank = declared.map_or((0, usize::MAX), |(i, _)| (0, i));
                let problem = Problem::new(
                    at.path.key(name),
                    ProblemKind::MissingRequired { desc },
                    None,
                );
                return found.push(at.ranks, rank, problem);
            }
            K::AdditionalProperties { unexpected } => {
                let declared = node();
                let known = declared.map_or_else(|| Vec::new().into(), |n| n.known.clone());
                for key in unexpected {
                    let did_you_mean = declared
                        .and_then(|n| n.names.closest(key))
                        .map(|i| known[i].clone());
                    let kind = ProblemKind::UnrecognizedField {
                        did_you_mean,
                        known: known.clone(),
                    };
                    let rank = (1, found.position(at.value, key));
                    let problem = Problem::new(
                        at.path.clone().key(key.as_str()),
                        kind,
                        at.value.get(key.as_str()),
                    );
                    found.push(at.ranks.clone(), rank, problem);
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
                let sent = text::sent(&Value::String(key.to_owned()));
                let again = found.problems.last().is_some_and(|(_, p)| {
                    matches!(p.kind, ProblemKind::InvalidKey { .. })
                        && p.path == at.path
                        && p.sent == sent
                });
                if !again {
                    let kind = ProblemKind::InvalidKey { desc };
                    let problem = Problem {
                        path: at.path,
                        kind,
                        sent,
                    };
                    found.problems.push((at.ranks, problem));
                }
                return;
            }
            K::Type { .. } => {
                // The field as declared describes the whole value: for a nullable alternative
                // that is "T or null", not T alone.
                let failing = node();
                let whole = at.node.filter(|n| match failing {
                    Some(f) => {
                        std::ptr::eq(*n, f)
                            || self.layout.nullable(n).is_some_and(|t| std::ptr::eq(t, f))
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
            K::Pattern { pattern } => ProblemKind::Pattern {
                pattern: pattern.clone(),
            },
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
            K::MinItems { limit } => ProblemKind::TooFewItems { min: *limit },
            K::MaxItems { limit } => ProblemKind::TooManyItems { max: *limit },
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
        let own = at.ranks;
        found
            .problems
            .push((own, Problem::new(at.path, kind, Some(at.value))));
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
        let mut at = Located {
            path: FieldPath::root(),
            ranks: Vec::new(),
            value: args,
            node: self.layout.root(),
        };
        for raw in pointer.split('/').skip(1) {
            let segment = unescape(raw);
            let node = at.node.map(|n| self.layout.nullable(n).unwrap_or(n));
            match at.value {
                Value::Object(map) => {
                    let (key, value) = map.get_key_value(segment.as_ref())?;
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

struct Located<'a> {
    path: FieldPath,
    ranks: Vec<(u8, usize)>,
    value: &'a Value,
    node: Option<&'a Node>,
}

/// Problems found so far with their sort keys: at each level a declared key ranks by
/// declaration, an undeclared one after them in the order it was sent, an index by itself.
struct Found<'a> {
    /// Key positions of large objects, built once per object (by address), so that a call
    /// with 100,000 unknown keys stays linear.
    positions: HashMap<usize, HashMap<&'a str, usize>>,
    problems: Vec<(Vec<(u8, usize)>, Problem)>,
}

const SCAN_MAX: usize = 16;

impl<'a> Found<'a> {
    fn push(&mut self, mut ranks: Vec<(u8, usize)>, last: (u8, usize), problem: Problem) {
        ranks.push(last);
        self.problems.push((ranks, problem));
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
