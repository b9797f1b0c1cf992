//! Detection: the `jsonschema` crate finds the failing keywords; this module maps each one to a
//! [`ProblemKind`] at a [`FieldPath`] and puts them in the contract's order.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use jsonschema::error::{ValidationError as Failure, ValidationErrorKind as K};
use serde_json::{Map, Number, Value};

use super::{FieldPath, Format, JsonType, PathSegment, Problem, ProblemKind, ValidationError};
use crate::similar::closest;

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
    /// Compiles a JSON Schema (draft 2020-12), with `format` asserted.
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
            .build(schema)
            .map_err(|e| SchemaError(e.to_string()))?;
        Ok(Schema {
            validator,
            schema: schema.clone(),
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
        let mut ranker = Ranker::default();
        let mut found: Vec<(Vec<(u8, usize)>, Problem)> = Vec::new();
        for failure in self.validator.iter_errors(args) {
            self.map(failure, args, &mut ranker, &mut found);
        }
        found.sort_by(|(a, pa), (b, pb)| a.cmp(b).then(pa.kind.rank().cmp(&pb.kind.rank())));
        found.into_iter().map(|(_, problem)| problem).collect()
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

    /// Maps one failing keyword to its problems (one, or one per unexpected key).
    fn map<'a>(
        &'a self,
        failure: Failure<'_>,
        args: &'a Value,
        ranker: &mut Ranker<'a>,
        found: &mut Vec<(Vec<(u8, usize)>, Problem)>,
    ) {
        let Some((path, value)) = locate(args, failure.instance_path().as_str()) else {
            return;
        };
        let keyword_schema = self.schema.pointer(failure.schema_path().as_str());
        let subschema = self
            .schema
            .pointer(parent_pointer(failure.schema_path().as_str()))
            .map(|s| self.resolve(s));
        let mut push = |path: FieldPath, kind: ProblemKind, sent: Option<&Value>| {
            let rank = ranker.rank(&self.schema, args, &path, self);
            found.push((rank, Problem::new(path, kind, sent)));
        };
        let kind = match failure.kind() {
            K::Required { property } => {
                let Some(name) = property.as_str() else {
                    return;
                };
                let declared = subschema
                    .and_then(|s| s.get("properties"))
                    .and_then(|p| p.get(name));
                let expected = declared.map_or_else(Vec::new, |s| self.types(s));
                return push(
                    path.key(name),
                    ProblemKind::MissingRequired { expected },
                    None,
                );
            }
            K::AdditionalProperties { unexpected } => {
                let declared = subschema
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object);
                let known: Arc<[String]> = declared
                    .map_or_else(Vec::new, |p| p.keys().cloned().collect())
                    .into();
                for key in unexpected {
                    let did_you_mean =
                        closest(key, known.iter().map(String::as_str)).map(str::to_owned);
                    let kind = ProblemKind::UnrecognizedField {
                        did_you_mean,
                        known: Arc::clone(&known),
                    };
                    push(
                        path.clone().key(key.as_str()),
                        kind,
                        value.get(key.as_str()),
                    );
                }
                return;
            }
            K::Type { .. } => ProblemKind::InvalidType {
                expected: subschema.map_or_else(Vec::new, |s| self.types(s)),
            },
            K::Format { format } => ProblemKind::Format(Format::from_name(format)),
            K::Pattern { pattern } => ProblemKind::Pattern {
                pattern: pattern.clone(),
            },
            K::MinLength { limit } => ProblemKind::TooShort { min: *limit },
            K::MaxLength { limit } => ProblemKind::TooLong { max: *limit },
            K::Minimum { limit } => ProblemKind::TooSmall {
                limit: number(keyword_schema, limit),
                exclusive: false,
            },
            K::ExclusiveMinimum { limit } => ProblemKind::TooSmall {
                limit: number(keyword_schema, limit),
                exclusive: true,
            },
            K::Maximum { limit } => ProblemKind::TooLarge {
                limit: number(keyword_schema, limit),
                exclusive: false,
            },
            K::ExclusiveMaximum { limit } => ProblemKind::TooLarge {
                limit: number(keyword_schema, limit),
                exclusive: true,
            },
            K::MinItems { limit } => ProblemKind::TooFewItems { min: *limit },
            K::MaxItems { limit } => ProblemKind::TooManyItems { max: *limit },
            K::MultipleOf { multiple_of } => {
                // The schema keeps `5` an integer, where the error only carries an f64.
                let fallback = Number::from_f64(*multiple_of).map_or(Value::Null, Value::Number);
                ProblemKind::NotMultipleOf {
                    multiple_of: number(keyword_schema, &fallback),
                }
            }
            K::Enum { options } => ProblemKind::InvalidOption {
                allowed: options
                    .as_array()
                    .map_or_else(|| vec![(**options).clone()], Clone::clone)
                    .into(),
            },
            K::Constant { expected_value } => ProblemKind::ConstMismatch {
                expected: (**expected_value).clone(),
            },
            K::AnyOf { .. } => ProblemKind::NoAlternative { one_of: false },
            K::OneOfNotValid { .. } | K::OneOfMultipleValid { .. } => {
                ProblemKind::NoAlternative { one_of: true }
            }
            other => ProblemKind::Other {
                keyword: keyword_name(other, failure.schema_path().as_str()),
            },
        };
        push(path, kind, Some(value));
    }

    /// Follows a local `$ref` (`#/$defs/Line`), as schemars writes them for nested types.
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        // Bounded: a cycle of references must not loop forever.
        for _ in 0..32 {
            match schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
            {
                Some(pointer) => match self.schema.pointer(pointer) {
                    Some(target) => schema = target,
                    None => break,
                },
                None => break,
            }
        }
        schema
    }

    /// The declared types of a schema: its `type`, or else the union of its alternatives' types.
    fn types(&self, schema: &Value) -> Vec<JsonType> {
        let schema = self.resolve(schema);
        let mut out = Vec::new();
        if let Some(t) = schema.get("type") {
            push_types(&mut out, t);
            return out;
        }
        for alternatives in ["anyOf", "oneOf"] {
            for alternative in schema
                .get(alternatives)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(t) = self.resolve(alternative).get("type") {
                    push_types(&mut out, t);
                }
            }
        }
        out
    }
}

fn push_types(out: &mut Vec<JsonType>, t: &Value) {
    let names: Vec<&str> = match t {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for t in names.into_iter().filter_map(JsonType::from_name) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
}

/// The number as written in the schema when it can be read there; otherwise the error's.
fn number(keyword: Option<&Value>, fallback: &Value) -> Number {
    match keyword.or(Some(fallback)) {
        Some(Value::Number(n)) => n.clone(),
        _ => match fallback {
            Value::Number(n) => n.clone(),
            _ => Number::from(0),
        },
    }
}

/// The keyword that failed, from the end of its schema location.
fn keyword_name(kind: &K, schema_path: &str) -> String {
    if matches!(kind, K::FalseSchema) {
        return "false".into();
    }
    schema_path
        .rsplit('/')
        .next()
        .map_or_else(String::new, |k| unescape(k).into_owned())
}

fn parent_pointer(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// Walks a JSON pointer through the arguments: each segment is a key of an object or an index
/// of an array, decided by the value found there (a key may well be `"0"`).
fn locate<'a>(args: &'a Value, pointer: &str) -> Option<(FieldPath, &'a Value)> {
    let mut path = FieldPath::root();
    let mut value = args;
    for raw in pointer.split('/').skip(1) {
        let segment = unescape(raw);
        match value {
            Value::Object(map) => {
                value = map.get(segment.as_ref())?;
                path = path.key(segment.into_owned());
            }
            Value::Array(items) => {
                let index: usize = segment.parse().ok()?;
                value = items.get(index)?;
                path = path.index(index);
            }
            _ => return None,
        }
    }
    Some((path, value))
}

/// Sort keys for paths: at each level a declared key ranks by declaration, an undeclared one
/// after them by the order it was sent, an index by itself.
#[derive(Default)]
struct Ranker<'a> {
    /// Key positions of large objects, built once per object (by address) so that a call with
    /// 100,000 unknown keys stays linear.
    positions: HashMap<usize, HashMap<&'a str, usize>>,
}

const LINEAR_SCAN_MAX: usize = 16;

impl<'a> Ranker<'a> {
    fn rank(
        &mut self,
        root_schema: &'a Value,
        args: &'a Value,
        path: &FieldPath,
        schema: &'a Schema,
    ) -> Vec<(u8, usize)> {
        let mut ranks = Vec::with_capacity(path.0.len());
        let mut node = Some(schema.resolve(root_schema));
        let mut value = Some(args);
        for segment in &path.0 {
            match segment {
                PathSegment::Key(key) => {
                    let declared = node
                        .and_then(|s| s.get("properties"))
                        .and_then(Value::as_object);
                    let rank = match declared.and_then(|p| self.position(p, key)) {
                        Some(i) => (0, i),
                        None => {
                            let sent = value
                                .and_then(Value::as_object)
                                .and_then(|m| self.position(m, key));
                            (1, sent.unwrap_or(usize::MAX))
                        }
                    };
                    ranks.push(rank);
                    node = declared.and_then(|p| p.get(key)).map(|s| schema.resolve(s));
                    value = value.and_then(|v| v.get(key));
                }
                PathSegment::Index(i) => {
                    ranks.push((0, *i));
                    node = node
                        .and_then(|s| item_schema(s, *i))
                        .map(|s| schema.resolve(s));
                    value = value.and_then(|v| v.get(*i));
                }
            }
        }
        ranks
    }

    fn position(&mut self, map: &'a Map<String, Value>, key: &str) -> Option<usize> {
        if map.len() <= LINEAR_SCAN_MAX {
            return map.keys().position(|k| k == key);
        }
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
    }
}

fn item_schema(schema: &Value, index: usize) -> Option<&Value> {
    schema
        .get("prefixItems")
        .and_then(|p| p.get(index))
        .or_else(|| schema.get("items").filter(|i| i.is_object()))
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
                "Required field is missing. You sent: (missing). Expected an object.".into()
            )
        );
    }

    #[test]
    fn a_fraction_fails_integer_and_minimum() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}});
        let got = lines(schema, json!({"n": 0.5}));
        assert_eq!(got.len(), 2);
        assert!(got[0].1.starts_with("Invalid type."));
        assert!(got[1].1.starts_with("Too small."));
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
}
