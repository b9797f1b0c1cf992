//! Detection: the `jsonschema` crate finds the failing keywords; this module maps each one to a
//! [`ProblemKind`] at a [`FieldPath`] and puts them in the contract's order.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use jsonschema::error::{ValidationError as Failure, ValidationErrorKind as K};
use serde_json::{Map, Number, Value};

use super::flat::entry;
use super::group::{Groups, merge};
use super::layout::{Layout, Node};
use super::pointer::unescape;
use super::problem::Sent;
use super::{Field, FieldPath, Format, MAX_FIELDS, Problem, ProblemKind};
use foldhash::fast::RandomState;

/// Finds the problems of arguments from the crate's list of failing keywords, over one
/// schema's validator and layout.
pub(super) struct Detector<'s> {
    pub(super) validator: &'s jsonschema::Validator,
    pub(super) layout: &'s Layout,
}

impl<'s> Detector<'s> {
    /// Finds the problems of `args` from the crate's list of failing keywords.
    pub(super) fn detect(&self, args: &'s Value, found: &mut Found<'s>) {
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

    /// Maps one failing keyword to its problems: one, or one per unexpected key. `located`: the
    /// failure's place, when it is already known.
    fn map(
        &self,
        failure: &Failure<'_>,
        args: &'s Value,
        located: Option<Located<'s>>,
        found: &mut Found<'s>,
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
                // Declared beside `required`, or else (a `required` of `then`, of an `anyOf`
                // alternative) by the object the name is missing from.
                let declared = node().and_then(|n| self.layout.field(n, name)).or_else(|| {
                    let object = at.node.map(|n| self.layout.nullable(n).unwrap_or(n))?;
                    self.layout.field(object, name)
                });
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
    fn locate(&self, args: &'s Value, pointer: &str, found: &mut Found<'s>) -> Option<Located<'s>> {
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

/// Problems found so far: the first `keep` in the contract's order, and a count of all. At
/// each level of a problem's sort key a declared key ranks by declaration, an undeclared one
/// after them in the order it was sent, an index by itself; then the problem's row of §5; then
/// the order found.
pub(super) struct Found<'a> {
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
    pub(super) fn new(keep: usize) -> Self {
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
    pub(super) fn grouping(mut self) -> Self {
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
    pub(super) fn finish_fields(self) -> (Vec<Field>, usize) {
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
    pub(super) fn finish(self) -> (Vec<Problem>, usize) {
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
