//! Detection without the crate's error list, for the commonest schemas: a flat object whose
//! fields are each one value (`type`, bounds, `pattern`, `format`, `enum`, `const`), inline,
//! behind a local `$ref` or as T or null, as schemars writes a struct of strings, numbers,
//! booleans, unit enums and their `Option`s.
//!
//! Listing every failing keyword through the crate costs a few hundred bytes per keyword (paths
//! and all) and a walk back through the arguments per failure. Here the arguments are walked
//! once, and each keyword of a failing field is asked on its own: the crate still decides every
//! keyword (a validator per keyword, compiled with the schema's), only the walk and the problems
//! are ours. The problems are those [`Schema::collect`](super::Schema) would make the long way:
//! a unit property holds the two to the same list, in the same order.

use serde_json::{Map, Value};

use super::compile::Options;
use super::copy::STASH;
use super::keywords::is_annotation;
use super::layout::{Layout, Node};
use super::pointer::of_reference;
use super::problem::Sent;
use super::{FieldPath, Format, Problem, ProblemKind};

/// A flat object schema, ready to walk.
pub(super) struct Flat {
    /// The declared fields, in declaration order.
    fields: Box<[Field]>,
    /// `required`, in its order: each name with its problem (and its declared position).
    required: Box<[(String, usize, ProblemKind)]>,
    /// `additionalProperties: false`.
    closed: bool,
}

/// The URI of JSON Schema draft 2020-12, which every schema is compiled with.
pub(crate) const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Annotations, which say nothing of a value (`$schema` and `$id` aside, which change how a
/// schema is read).
fn annotation(keyword: &str, value: &Value) -> bool {
    is_annotation(keyword, value) && keyword != "$schema" && keyword != "$id"
}

/// The schema of one value a declared field's `schema` (in the validator's copy) stands for,
/// and whether null passes besides: the schema itself, the target of a local `$ref`, or T of a
/// nullable alternative (`anyOf: [T, {"type": "null"}]`, which the copy writes as `if` null
/// `else` T). Whether that schema holds only keywords of one value is [`Field::new`]'s check.
fn one_value<'c>(copy: &'c Value, schema: &'c Value) -> Option<(&'c Map<String, Value>, bool)> {
    let map = schema.as_object()?;
    let only = |keywords: &[&str]| {
        map.iter()
            .all(|(k, v)| keywords.contains(&k.as_str()) || annotation(k, v))
    };
    if map.contains_key("else") && only(&["if", "else"]) {
        if map.get("if")? != &serde_json::json!({"type": "null"}) {
            return None;
        }
        let (value, nullable) = one_value(copy, map.get("else")?)?;
        return (!nullable).then_some((value, true));
    }
    if let Some(reference) = map.get("$ref") {
        if !only(&["$ref"]) {
            return None;
        }
        let target = copy
            .pointer(&of_reference(reference.as_str()?)?)?
            .as_object()?;
        // One step: a target that refers on, or is T or null, is left to the crate's list.
        return (!target.contains_key("$ref") && !target.contains_key("if"))
            .then_some((target, false));
    }
    Some((map, false))
}

struct Field {
    name: String,
    /// `null` passes (T or null).
    nullable: bool,
    /// The field's whole subschema.
    whole: jsonschema::Validator,
    /// Its `type`: a value of another type is that one problem.
    typed: Option<(jsonschema::Validator, ProblemKind)>,
    /// Its other keywords, each with the problem it makes and that problem's row of §5.
    checks: Box<[(jsonschema::Validator, ProblemKind, u8)]>,
}

/// Root keywords a flat schema may hold besides annotations.
const ROOT: [&str; 6] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "$defs",
    "definitions",
];

impl Flat {
    /// The walk for `copy` (the validator's copy of the schema), when it is flat.
    pub(super) fn new(copy: &Value, layout: &Layout, options: &Options) -> Option<Self> {
        let root = copy.as_object()?;
        // `$schema` naming the draft every schema is compiled with says nothing more.
        let draft = |k: &str, v: &Value| k == "$schema" && v == DRAFT_2020_12;
        let known = |k: &str, v: &Value| ROOT.contains(&k) || annotation(k, v) || draft(k, v);
        if !root.iter().all(|(k, v)| known(k, v)) {
            return None;
        }
        if root.get("type").is_some_and(|t| t != "object") {
            return None;
        }
        let closed = match root.get("additionalProperties") {
            None | Some(Value::Bool(true)) => false,
            Some(Value::Bool(false)) => true,
            Some(_) => return None,
        };
        let node = layout.root()?;
        let properties = match root.get("properties") {
            Some(Value::Object(properties)) => properties,
            None => &Map::new(),
            Some(_) => return None,
        };
        let fields = properties
            .iter()
            .map(|(name, schema)| {
                let (_, child) = layout.field(node, name)?;
                let (value, nullable) = one_value(copy, schema)?;
                // The node of the value's own keywords: T's, for T or null.
                let own = match nullable {
                    true => layout.nullable(child)?,
                    false => child,
                };
                Field::new(name, value, nullable, child, own, options)
            })
            .collect::<Option<Box<[Field]>>>()?;
        let names = match root.get("required") {
            Some(Value::Array(names)) => names.as_slice(),
            None => &[],
            Some(_) => return None,
        };
        let mut required = Vec::with_capacity(names.len());
        for name in names {
            let name = name.as_str()?;
            if required.iter().any(|(n, _, _)| n == name) {
                return None;
            }
            let declared = layout.field(node, name);
            let desc = declared.map_or_else(|| "a value".into(), |(_, child)| child.desc.clone());
            let position = declared.map_or(usize::MAX, |(i, _)| i);
            let kind = ProblemKind::MissingRequired { desc };
            required.push((name.to_owned(), position, kind));
        }
        Some(Flat {
            fields,
            required: required.into(),
            closed,
        })
    }

    /// The first `keep` problems of `args` in the contract's order (§5), each made into what
    /// the caller keeps (a problem, or the field of a validation error: no problem of a flat
    /// object is in an array, so each is a field of its own), and how many there are.
    pub(super) fn detect<T>(
        &self,
        args: &Map<String, Value>,
        layout: &Layout,
        keep: usize,
        into: impl FnMut(Problem) -> T,
    ) -> (Vec<T>, usize) {
        let mut kept = Kept::new(keep);
        let at = FieldPath::of_key;
        for (i, field) in self.fields.iter().enumerate() {
            let Some((key, value)) = entry(args, &field.name) else {
                continue;
            };
            if (field.nullable && value.is_null()) || field.whole.is_valid(value) {
                continue;
            }
            let problem = |kind: &ProblemKind| Problem {
                path: at(key),
                kind: kind.clone(),
                sent: Sent::of(value),
            };
            if let Some((typed, kind)) = &field.typed
                && !typed.is_valid(value)
            {
                // A value of the wrong type is that one problem.
                kept.offer((0, i, 0), || problem(kind));
                continue;
            }
            for (check, kind, row) in &field.checks {
                if !check.is_valid(value) {
                    kept.offer((0, i, *row), || problem(kind));
                }
            }
        }
        for (name, position, kind) in &self.required {
            if !args.contains_key(name) {
                kept.offer((0, *position, 0), || Problem {
                    path: at(name),
                    kind: kind.clone(),
                    sent: Sent::MISSING,
                });
            }
        }
        if let Some(node) = layout.root().filter(|_| self.closed) {
            for (position, (key, value)) in args.iter().enumerate() {
                if layout.field(node, key).is_some() {
                    continue;
                }
                kept.offer((1, position, 0), || Problem {
                    path: at(key),
                    kind: ProblemKind::UnrecognizedField {
                        did_you_mean: node.names.closest(key).map(|i| node.known[i].clone()),
                        known: node.known.clone(),
                    },
                    sent: Sent::of(value),
                });
            }
        }
        kept.finish(into)
    }
}

/// Problems kept while they are among the first `keep`, by their sort key: declared fields by
/// declaration (0, position), others in the order sent (1, position), then the problem's row
/// of §5, then the order found.
struct Kept {
    keep: usize,
    total: usize,
    best: Vec<((u8, usize, u8, usize), Problem)>,
}

impl Kept {
    fn new(keep: usize) -> Self {
        Kept {
            keep,
            total: 0,
            best: Vec::new(),
        }
    }

    /// Counts a problem, made only when it is kept.
    fn offer(&mut self, (kind, position, row): (u8, usize, u8), make: impl FnOnce() -> Problem) {
        self.total += 1;
        let key = (kind, position, row, self.total);
        if self.best.len() < self.keep {
            return self.best.push((key, make()));
        }
        // Full: the new one takes the place of the last, if it comes before it.
        let worst = self
            .best
            .iter_mut()
            .max_by_key(|(k, _)| *k)
            .filter(|(k, _)| key < *k);
        if let Some(worst) = worst {
            *worst = (key, make());
        }
    }

    fn finish<T>(mut self, into: impl FnMut(Problem) -> T) -> (Vec<T>, usize) {
        self.best.sort_unstable_by_key(|(k, _)| *k);
        // Moved to a vector of their own size rather than collected in place (which would
        // shrink this one): each block is then freed at the size it was taken, so that the
        // allocator hands it out again at once on the next call instead of carving a new one.
        let mut problems = Vec::with_capacity(self.best.len());
        problems.extend(self.best.drain(..).map(|(_, p)| p).map(into));
        (problems, self.total)
    }
}

impl Field {
    /// A field whose value is checked against `schema`, a schema of one value (else `None`);
    /// `field`: the field's node in the layout (its `{desc}` whole), `node`: the node of
    /// `schema` itself.
    fn new(
        name: &str,
        schema: &Map<String, Value>,
        nullable: bool,
        field: &Node,
        node: &Node,
        options: &Options,
    ) -> Option<Self> {
        let one = |keyword: &str, value: &Value| {
            let mut alone = Map::new();
            alone.insert(keyword.to_owned(), value.clone());
            options.build(&Value::Object(alone)).ok()
        };
        let mut typed = None;
        let mut checks = Vec::new();
        for (keyword, value) in schema {
            // The copy's stash of alternatives of constants, now an `enum`, is read by no one.
            if annotation(keyword, value) || keyword.starts_with(STASH) {
                continue;
            }
            let kind = match keyword.as_str() {
                "type" => {
                    // The field's own `{desc}`: for T or null, "… or null".
                    let kind = ProblemKind::InvalidType {
                        desc: field.desc.clone(),
                    };
                    typed = Some((one(keyword, value)?, kind));
                    continue;
                }
                "format" => ProblemKind::Format(Format::from_name(value.as_str()?)?),
                // The example of the field's chain, which ends at this schema (§11.5).
                "pattern" => ProblemKind::Pattern {
                    pattern: value.as_str()?.to_owned(),
                    example: field.example.as_ref().map(|(_, e)| e.clone()),
                },
                "minLength" => ProblemKind::TooShort {
                    min: value.as_u64()?,
                },
                "maxLength" => ProblemKind::TooLong {
                    max: value.as_u64()?,
                },
                "minimum" | "exclusiveMinimum" => ProblemKind::TooSmall {
                    limit: value.as_number()?.clone(),
                    exclusive: keyword == "exclusiveMinimum",
                },
                "maximum" | "exclusiveMaximum" => ProblemKind::TooLarge {
                    limit: value.as_number()?.clone(),
                    exclusive: keyword == "exclusiveMaximum",
                },
                "multipleOf" => ProblemKind::NotMultipleOf {
                    multiple_of: node.multiple_of.clone()?,
                },
                "enum" => ProblemKind::InvalidOption {
                    allowed: match &node.allowed {
                        Some(allowed) => allowed.clone(),
                        None => value.as_array()?.clone().into(),
                    },
                },
                "const" => ProblemKind::ConstMismatch {
                    expected: value.clone(),
                },
                _ => return None,
            };
            let row = kind.rank().0;
            checks.push((one(keyword, value)?, kind, row));
        }
        Some(Field {
            name: name.to_owned(),
            nullable,
            whole: options.build(&Value::Object(schema.clone())).ok()?,
            typed,
            checks: checks.into(),
        })
    }
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

#[cfg(test)]
mod tests;
