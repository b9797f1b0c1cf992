//! The same problem in several elements of one array, written as one `<field>` (ERRORS.md
//! §11.6): problems whose lines are equal and whose paths differ only in their last index
//! (`lines[0].quantity`, `lines[7].quantity`) are one field, `lines[0,7].quantity`, at the place
//! of the first of them. Fields are grouped before the cap of 20 counts them.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use super::Problem;
use foldhash::fast::RandomState;

/// One `<field>` line of a validation error: a problem, and when the same problem is in several
/// elements of one array, the indices of those elements (ERRORS.md §11.6).
///
/// ```
/// use mcp_fusion::validate::Schema;
/// use serde_json::json;
///
/// let schema = Schema::new(&json!({"type": "object", "properties": {
///     "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}}
/// }})).unwrap();
/// let err = schema.validate("billing.add", &json!({"lines": [0, 0, 0, 5, 0]})).unwrap_err();
/// let field = &err.fields()[0];
/// assert_eq!(field.name(), "lines[0-2,4]");
/// assert_eq!(field.elements(), [0, 1, 2, 4]);
/// assert_eq!(field.problem().line(), "Too small. You sent: 0. Expected a number >= 1.");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub(super) problem: Problem,
    /// Ascending, each once; empty for a field of one element (or of no array).
    pub(super) elements: Vec<usize>,
    /// How many problems the line reports.
    pub(super) count: usize,
}

impl Field {
    /// The field of one problem.
    pub(super) fn one(problem: Problem) -> Self {
        Field {
            problem,
            elements: Vec::new(),
            count: 1,
        }
    }

    /// The problem; for a field of several elements, that of the first (its path names that
    /// element).
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The indices of the elements of one array that have this problem, ascending, when they
    /// are several; empty for a problem of one element or outside any array.
    pub fn elements(&self) -> &[usize] {
        &self.elements
    }

    /// How many problems the line reports: one per element (one for a problem alone).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The `name` attribute's text (before escaping): the path, its last index written as
    /// the set of the elements (`lines[0-24].quantity`).
    pub fn name(&self) -> String {
        let mut out = String::new();
        self.write_name(&mut out);
        out
    }

    pub(super) fn write_name(&self, out: &mut String) {
        self.problem.path.write_with(out, &self.elements);
    }
}

/// Problems of array elements, each joined to the same problem in the array's other elements
/// as they come (in any order): one group per line and path without its last index, placed
/// by the first of its problems in the contract's order (`K`).
pub(super) struct Groups<K> {
    hasher: RandomState,
    by_key: HashMap<u64, Vec<usize>>,
    groups: Vec<Group<K>>,
}

struct Group<K> {
    place: K,
    line: Box<str>,
    at: usize,
    field: Field,
}

impl<K: Ord> Groups<K> {
    pub(super) fn new() -> Self {
        Groups {
            hasher: RandomState::default(),
            by_key: HashMap::new(),
            groups: Vec::new(),
        }
    }

    /// Adds `problem`, at `place` in the contract's order; gives it back when its path holds
    /// no array index (it is a field of its own).
    pub(super) fn add(&mut self, place: K, problem: Problem) -> Option<Problem> {
        let Some((at, index)) = problem.path.last_index() else {
            return Some(problem);
        };
        let line = problem.line();
        let mut hasher = self.hasher.build_hasher();
        hasher.write(line.as_bytes());
        problem.path.hash_but_index(at, &mut hasher);
        let candidates = self.by_key.entry(hasher.finish()).or_default();
        let same = candidates.iter().copied().find(|&g| {
            let group = &self.groups[g];
            group.at == at
                && *group.line == *line
                && group.field.problem.path.same_but_index(&problem.path, at)
        });
        match same {
            Some(g) => {
                let group = &mut self.groups[g];
                group.field.elements.push(index);
                group.field.count += 1;
                if place < group.place {
                    group.place = place;
                    group.field.problem = problem;
                }
            }
            None => {
                candidates.push(self.groups.len());
                self.groups.push(Group {
                    place,
                    line: line.into_boxed_str(),
                    at,
                    field: Field {
                        problem,
                        elements: vec![index],
                        count: 1,
                    },
                });
            }
        }
        None
    }

    /// The first `keep` groups in the contract's order, each with its place.
    pub(super) fn first(self, keep: usize) -> Vec<(K, Field)> {
        let mut groups = self.groups;
        if groups.len() > keep {
            if keep == 0 {
                return Vec::new();
            }
            groups.select_nth_unstable_by(keep - 1, |a, b| a.place.cmp(&b.place));
            groups.truncate(keep);
        }
        groups.sort_unstable_by(|a, b| a.place.cmp(&b.place));
        groups
            .into_iter()
            .map(|group| {
                let mut field = group.field;
                field.elements.sort_unstable();
                field.elements.dedup();
                if field.elements.len() < 2 {
                    field.elements = Vec::new();
                }
                (group.place, field)
            })
            .collect()
    }
}

/// The first `keep` fields of problems found apart (`singles`, outside any array, and
/// `groups`), each list in the contract's order; and how many of `total` problems no field
/// kept reports (the `(more)` count).
pub(super) fn merge<K: Ord>(
    singles: Vec<(K, Field)>,
    groups: Vec<(K, Field)>,
    keep: usize,
    total: usize,
) -> (Vec<Field>, usize) {
    let mut fields = Vec::with_capacity((singles.len() + groups.len()).min(keep));
    let mut singles = singles.into_iter().peekable();
    let mut groups = groups.into_iter().peekable();
    while fields.len() < keep {
        let next = match (singles.peek(), groups.peek()) {
            (Some((a, _)), Some((b, _))) if b < a => groups.next(),
            (Some(_), _) => singles.next(),
            (None, _) => groups.next(),
        };
        match next {
            Some((_, field)) => fields.push(field),
            None => break,
        }
    }
    let reported: usize = fields.iter().map(|f| f.count).sum();
    (fields, total.saturating_sub(reported))
}

/// The fields of `problems`, given in the order they are written: the same problem in several
/// elements of one array joined at the place of the first; the first `keep` fields, and how
/// many problems none of them reports.
pub(super) fn in_order(problems: Vec<Problem>, keep: usize) -> (Vec<Field>, usize) {
    let total = problems.len();
    let mut singles = Vec::new();
    let mut groups = Groups::new();
    for (place, problem) in problems.into_iter().enumerate() {
        if let Some(alone) = groups.add(place, problem) {
            singles.push((place, Field::one(alone)));
        }
    }
    merge(singles, groups.first(keep), keep, total)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::{FieldPath, ProblemKind};

    fn small(path: FieldPath, sent: i64) -> Problem {
        let kind = ProblemKind::TooSmall {
            limit: 1.into(),
            exclusive: false,
        };
        Problem::new(path, kind, Some(&json!(sent)))
    }

    fn line(i: usize, key: &str) -> FieldPath {
        FieldPath::root().key("lines").index(i).key(key)
    }

    #[test]
    fn index_sets_are_runs_and_single_indices() {
        let name = |indices: &[usize]| {
            let mut out = String::new();
            line(indices[0], "quantity").write_with(&mut out, indices);
            out
        };
        assert_eq!(name(&[0, 1, 2, 3, 4, 7, 9]), "lines[0-4,7,9].quantity");
        assert_eq!(name(&[5, 6]), "lines[5,6].quantity");
        assert_eq!(
            name(&[1, 2, 3, 5, 6, 8, 9, 10]),
            "lines[1-3,5,6,8-10].quantity"
        );
        assert_eq!(name(&[4]), "lines[4].quantity");
        let mut out = String::new();
        let matrix = FieldPath::root().key("matrix").index(1).index(0);
        matrix.write_with(&mut out, &[0, 2]);
        assert_eq!(out, "matrix[1][0,2]");
    }

    #[test]
    fn the_same_problem_in_any_order_is_one_field_at_its_first_place() {
        let mut groups = Groups::new();
        for (place, i) in [(5, 5), (0, 0), (9, 9), (1, 1), (2, 2)] {
            assert!(groups.add(place, small(line(i, "quantity"), 0)).is_none());
        }
        assert!(groups.add(3, small(line(3, "quantity"), -1)).is_none());
        assert!(
            groups
                .add(4, small(FieldPath::root().key("id"), 0))
                .is_some()
        );
        let first = groups.first(20);
        let shown: Vec<(usize, String, usize)> = first
            .iter()
            .map(|(place, f)| (*place, f.name(), f.count()))
            .collect();
        assert_eq!(
            shown,
            [
                (0, "lines[0-2,5,9].quantity".to_owned(), 5),
                (3, "lines[3].quantity".to_owned(), 1)
            ]
        );
        assert_eq!(first[0].1.problem().path(), &line(0, "quantity"));
    }

    #[test]
    fn only_the_last_index_differs() {
        let order = |o: usize, l: usize| {
            FieldPath::root()
                .key("orders")
                .index(o)
                .key("lines")
                .index(l)
                .key("sku")
        };
        let problems = vec![
            small(order(0, 0), 0),
            small(order(0, 1), 0),
            small(order(1, 0), 0),
            small(order(1, 1), 0),
        ];
        let (fields, more) = in_order(problems, 20);
        let names: Vec<String> = fields.iter().map(Field::name).collect();
        assert_eq!(
            names,
            ["orders[0].lines[0,1].sku", "orders[1].lines[0,1].sku"]
        );
        assert_eq!(more, 0);
    }

    #[test]
    fn the_cap_counts_fields_and_more_counts_problems() {
        let mut problems: Vec<Problem> = (0..25).map(|i| small(line(i, "sku"), 0)).collect();
        problems.extend((0..25).map(|i| small(line(i, "quantity"), -(i as i64))));
        let (fields, more) = in_order(problems, 20);
        assert_eq!(fields.len(), 20);
        assert_eq!(fields[0].name(), "lines[0-24].sku");
        assert_eq!(fields[0].count(), 25);
        // 19 quantities shown, 6 not.
        assert_eq!(more, 6);
    }
}
