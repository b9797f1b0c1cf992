//! Property tests of ERRORS.md §11.6 over arbitrary arrays of mistakes: grouping never hides a
//! problem (each one is reported by a written field, or counted in `(more)`), the written fields
//! are the first 20 in the contract's order with the same problems joined, and the envelope
//! still reads back (§6), names, elements and all, from its text and from its mirror alike.

use std::collections::BTreeMap;

use mcp_fusion::client::{MIRROR_KEY, ParsedError, parse_envelope};
use mcp_fusion::rmcp::model::CallToolResult;
use mcp_fusion::validate::{Field, FieldPath, PathSegment, Problem, Schema};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use roxmltree::Document;
use serde_json::{Value, json};

/// Arrays of objects, of arrays and of enums, under identifiers and under keys written
/// `["…"]`; closed objects, so that unknown keys are problems too.
fn schema() -> Value {
    let line = json!({
        "type": "object",
        "properties": {
            "sku": {"type": "string", "minLength": 1, "pattern": "^[A-Z]"},
            "qty": {"type": "integer", "minimum": 1, "maximum": 9},
            "unit price": {"type": "number", "exclusiveMinimum": 0}
        },
        "required": ["sku", "qty"],
        "additionalProperties": false
    });
    json!({
        "type": "object",
        "properties": {
            "lines": {"type": "array", "maxItems": 30, "items": line},
            "orders": {"type": "array", "items": {
                "type": "object",
                "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}},
                "additionalProperties": false
            }},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
            "line items": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}}
        },
        "additionalProperties": false,
        "$defs": {"Line": line}
    })
}

/// Values from a small pool, so that the same mistake comes back in many elements; hostile
/// text now and then.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => select(vec![
            json!(0), json!(1), json!(-1), json!(10), json!(""), json!("A1"), json!("a"),
            json!(null), json!(true), json!(2.5), json!([]), json!({}),
        ]),
        1 => "[<&\"'\\]\\\\\u{0}-\u{1F}a-z,\\-\\[\\]]{0,6}".prop_map(Value::String),
    ]
}

fn object() -> impl Strategy<Value = Value> {
    let keys = select(vec!["sku", "qty", "unit price", "qty ", "Sku", "x,1-2"]);
    vec((keys, value()), 0..4).prop_map(|pairs| {
        Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    })
}

fn element() -> impl Strategy<Value = Value> {
    prop_oneof![4 => object(), 1 => value()]
}

fn arguments() -> impl Strategy<Value = Value> {
    (
        vec(element(), 0..34),
        vec(vec(element(), 0..6), 0..4),
        vec(vec(value(), 0..5), 0..4),
        vec(element(), 0..8),
        vec(value(), 0..8),
    )
        .prop_map(|(lines, orders, matrix, items, tags)| {
            let orders: Vec<Value> = orders.into_iter().map(|l| json!({"lines": l})).collect();
            json!({"lines": lines, "orders": orders, "matrix": matrix, "line items": items, "tags": tags})
        })
}

/// The path of `problem` without its last index, and that index.
fn stem(path: &FieldPath) -> (Vec<Option<&PathSegment>>, Option<usize>) {
    let segments = path.segments();
    let last = segments
        .iter()
        .rposition(|s| matches!(s, PathSegment::Index(_)));
    let stem = segments
        .iter()
        .enumerate()
        .map(|(i, s)| (Some(i) != last).then_some(s))
        .collect();
    let index = last.and_then(|i| match segments[i] {
        PathSegment::Index(n) => Some(n),
        PathSegment::Key(_) => None,
    });
    (stem, index)
}

/// Whether `field` reports `problem`: the same line, at its path or, for a field of several
/// elements, at one of them.
fn reports(field: &Field, problem: &Problem) -> bool {
    if field.problem().line() != problem.line() {
        return false;
    }
    if field.elements().is_empty() {
        return field.problem().path() == problem.path();
    }
    let (want, _) = stem(field.problem().path());
    let (have, index) = stem(problem.path());
    want == have && index.is_some_and(|i| field.elements().contains(&i))
}

fn replaced(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{0}'..='\u{8}'
            | '\u{B}'
            | '\u{C}'
            | '\u{E}'..='\u{1F}'
            | '\u{FFFE}'
            | '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every problem is in a written field or counted in `(more)`; the fields written are the
    /// first 20 groups of the problems in the contract's order, each reporting only problems
    /// that exist, none the same as another.
    #[test]
    fn grouping_never_hides_a_problem(args in arguments()) {
        let schema = Schema::new(&schema()).expect("the schema compiles");
        let problems = schema.problems(&args);
        let Err(err) = schema.validate("shop.import", &args) else {
            prop_assert!(problems.is_empty());
            return Ok(());
        };
        prop_assert!(!problems.is_empty());
        let fields = err.fields();
        prop_assert!(fields.len() <= 20);
        prop_assert_eq!(err.count(), problems.len());
        // Each problem is reported by exactly one written field, or by none (then counted).
        let mut unreported = 0;
        let mut reported = vec![0; fields.len()];
        for problem in &problems {
            let by: Vec<usize> = (0..fields.len()).filter(|&f| reports(&fields[f], problem)).collect();
            prop_assert!(by.len() <= 1, "{} reported twice", problem.line());
            match by.first() {
                Some(&f) => reported[f] += 1,
                None => unreported += 1,
            }
        }
        prop_assert_eq!(unreported, err.more());
        for (field, count) in fields.iter().zip(&reported) {
            prop_assert_eq!(field.count(), *count, "{}", field.name());
            prop_assert!(field.elements().len() != 1);
            // Each element of a field has its problem (the set is no wider than the problems).
            prop_assert!(field.elements().len() <= *count);
        }
        // The fields are the groups of the problems in order, each at its first problem: the
        // order of first appearance of each group, cut at 20.
        let mut groups: Vec<usize> = Vec::new();
        let mut first_of: BTreeMap<usize, usize> = BTreeMap::new();
        for (i, problem) in problems.iter().enumerate() {
            match (0..fields.len()).find(|&f| reports(&fields[f], problem)) {
                Some(f) => {
                    first_of.entry(f).or_insert(i);
                }
                None => groups.push(i),
            }
        }
        let firsts: Vec<usize> = first_of.values().copied().collect();
        let mut sorted = firsts.clone();
        sorted.sort_unstable();
        prop_assert_eq!(&firsts, &sorted, "fields out of order");
        for (f, &first) in first_of.iter() {
            prop_assert_eq!(fields[*f].problem(), &problems[first]);
        }
        // A problem no written field reports comes after the last written field's first one,
        // when 20 were written (otherwise it would have been written).
        if fields.len() < 20 {
            prop_assert!(groups.is_empty());
        } else if let (Some(&last), Some(&first_unwritten)) = (firsts.last(), groups.first()) {
            prop_assert!(first_unwritten > last);
        }
    }

    /// The envelope of arbitrary arrays of mistakes is well-formed and reads back: each field's
    /// name and line, the `(more)` line, and the elements, from the text and from the mirror.
    #[test]
    fn grouped_envelopes_read_back(args in arguments()) {
        let schema = Schema::new(&schema()).expect("the schema compiles");
        let Err(err) = schema.validate("shop.import", &args) else {
            return Ok(());
        };
        let text = err.render();
        let doc = Document::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(doc.root_element().tag_name().name(), "validation_error");
        let parsed = parse_envelope(&text);
        let mut expected: Vec<(String, String, Vec<u64>)> = err
            .fields()
            .iter()
            .map(|f| (replaced(&f.name()), replaced(&f.problem().line()), f.elements().iter().map(|&i| i as u64).collect()))
            .collect();
        if err.more() > 0 {
            let noun = if err.more() == 1 { "problem" } else { "problems" };
            expected.push(("(more)".into(), format!("{} more {noun} not shown. Fix the fields above first.", err.more()), Vec::new()));
        }
        let read: Vec<(String, String, Vec<u64>)> = parsed
            .fields
            .iter()
            .map(|f| (f.path.clone(), f.text.clone(), f.elements.iter().collect()))
            .collect();
        prop_assert_eq!(&read, &expected);
        // Each grouped name expands to the paths of its elements.
        for (field, parsed) in err.fields().iter().zip(&parsed.fields) {
            if field.elements().is_empty() {
                continue;
            }
            let paths: Vec<String> = field
                .elements()
                .iter()
                .map(|&i| {
                    let mut path = FieldPath::root();
                    let (stem, _) = stem(field.problem().path());
                    for segment in stem {
                        path = match segment {
                            Some(PathSegment::Key(k)) => path.key(k.clone()),
                            Some(PathSegment::Index(n)) => path.index(*n),
                            None => path.index(i),
                        };
                    }
                    replaced(&path.to_string())
                })
                .collect();
            prop_assert_eq!(parsed.paths().collect::<Vec<_>>(), paths);
        }
        // The mirror says the same.
        let result = CallToolResult::from(&err);
        let mirror = &result.meta.as_ref().expect("a mirror").0[MIRROR_KEY][0];
        let mut from_mirror = ParsedError::from_mirror(mirror).expect("a mirror object");
        for field in &mut from_mirror.fields {
            field.problem = None;
            field.path = replaced(&field.path);
            field.text = replaced(&field.text);
        }
        prop_assert_eq!(from_mirror, parsed);
    }
}
