//! Arbitrary arguments against fixed schemas: detection and `<validation_error>` rendering
//! (ERRORS.md §5). Nothing may panic; a call is refused exactly when the validator finds it
//! invalid; the envelope is well-formed XML with at most 21 `<field>`s, each line within the
//! bound the contract's cuts imply; every problem found is reported by one field (the same
//! problem in several elements of one array joined) or counted, and the envelope reads back.

#![no_main]

use std::sync::LazyLock;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion::client::{ParsedKind, parse_envelope};
use mcp_fusion::validate::{Field, MAX_FIELDS, PathSegment, Problem, Schema};
use mcp_fusion_fuzz::{JsonBuilder, text, well_formed, xml_replaced};
use serde_json::{Value, json};

/// The schemas under test: together they use every problem kind of §5.
fn schemas() -> Vec<Value> {
    let regions: Vec<String> = (1..=21).map(|i| format!("r{i:02}")).collect();
    vec![
        // Required fields, types, enum, bounds, lengths, pattern, closed objects, an array of
        // objects.
        json!({
            "type": "object",
            "properties": {
                "customer_id": {"type": "string", "pattern": "^cus_[a-z0-9]{4,}$"},
                "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000000},
                "currency": {"type": "string", "enum": ["EUR", "USD", "GBP"]},
                "memo": {"type": ["string", "null"], "minLength": 2, "maxLength": 12},
                "lines": {
                    "type": "array", "minItems": 1, "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string", "minLength": 3, "maxLength": 8},
                            "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
                            "unit_price": {"type": "number", "exclusiveMaximum": 1e6, "multipleOf": 0.01}
                        },
                        "required": ["sku", "quantity"],
                        "additionalProperties": false
                    }
                },
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 1}}
            },
            "required": ["customer_id", "amount", "lines"],
            "additionalProperties": false
        }),
        // Every asserted format, one that is not asserted, and a format inside an alternative.
        json!({
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "website": {"type": "string", "format": "uri"},
                "request_id": {"type": "string", "format": "uuid"},
                "issued_at": {"type": "string", "format": "date-time"},
                "due_date": {"type": "string", "format": "date"},
                "ip": {"type": "string", "format": "ipv4"},
                "ip6": {"type": "string", "format": "ipv6"},
                "host": {"type": "string", "format": "hostname"},
                "contact": {"anyOf": [{"type": "string", "format": "email"}, {"type": "null"}]}
            },
            "additionalProperties": false
        }),
        // `$ref` to definitions, nested objects and arrays, `multipleOf` behind a reference.
        json!({
            "$defs": {
                "Money": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer", "multipleOf": 5},
                        "currency": {"$ref": "#/$defs/Currency"}
                    },
                    "required": ["value", "currency"],
                    "additionalProperties": false
                },
                "Currency": {"type": "string", "enum": ["EUR", "USD"]},
                "Address": {
                    "type": "object",
                    "properties": {
                        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                        "country": {"type": "string", "minLength": 2, "maxLength": 2}
                    },
                    "required": ["zip"]
                }
            },
            "type": "object",
            "properties": {
                "price": {"$ref": "#/$defs/Money"},
                "deposit": {"$ref": "#/$defs/Money"},
                "ship_to": {"type": "array", "maxItems": 2, "items": {"$ref": "#/$defs/Address"}},
                "matrix": {
                    "type": "array",
                    "items": {"type": "array", "minItems": 1, "items": {"type": "integer", "multipleOf": 3}}
                }
            },
            "required": ["price"],
            "additionalProperties": false
        }),
        // Alternatives, constants, mixed and long enums, type unions.
        json!({
            "type": "object",
            "properties": {
                "ref": {"oneOf": [{"type": "string", "minLength": 3}, {"type": "integer"}]},
                "either": {"oneOf": [{"type": "number"}, {"type": "integer"}]},
                "contact": {"anyOf": [{"type": "string", "format": "email"}, {"type": "null"}]},
                "kind": {"const": "invoice"},
                "version": {"const": {"major": 1, "tags": ["a", 2.5, null]}},
                "tier": {"enum": [1, 2.5, "two", null, true, [1], {"a": "b"}]},
                "region": {"type": "string", "enum": regions},
                "count": {"type": ["integer", "string"]},
                "flag": {"type": "boolean"}
            },
            "additionalProperties": false
        }),
        // Keywords the contract has no row for (reported as "Invalid value"), open objects.
        json!({
            "type": "object",
            "minProperties": 1,
            "maxProperties": 6,
            "propertyNames": {"maxLength": 12},
            "properties": {
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 0}],
                    "items": false
                },
                "unique": {"type": "array", "uniqueItems": true, "contains": {"type": "integer"}, "maxContains": 2},
                "mode": {"type": "string"},
                "size": {"type": "integer"},
                "never": false,
                "not_null": {"not": {"type": "null"}}
            },
            "patternProperties": {"^x_": {"type": "string", "maxLength": 3}},
            "additionalProperties": {"type": "integer", "exclusiveMinimum": -10},
            "dependentRequired": {"mode": ["size"]},
            "if": {"properties": {"mode": {"const": "big"}}, "required": ["mode"]},
            "then": {"properties": {"size": {"minimum": 100}}},
            "else": {"properties": {"size": {"maximum": 10}}}
        }),
        // A recursive schema: the root refers to itself.
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 8},
                "value": {"type": "number", "minimum": -1.5e-7, "maximum": 1e16},
                "children": {"type": "array", "maxItems": 3, "items": {"$ref": "#"}}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
        // A root that is not an object.
        json!({
            "type": ["array", "null"],
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string", "format": "uuid"}},
                "required": ["id"],
                "additionalProperties": false
            }
        }),
        // A closed object that declares no field.
        json!({"type": "object", "additionalProperties": false}),
        // Version 2.1: chains of references across `$defs` and `definitions` with escaped
        // names, references into alternatives, enums listing null under types with and
        // without it, `items: false` after `prefixItems`.
        json!({
            "type": "object",
            "properties": {
                "code": {"$ref": "#/$defs/Code%20Name~1v2"},
                "status": {"type": "string", "enum": ["open", null]},
                "maybe": {"type": ["string", "null"], "enum": ["open", "paid", null]},
                "limit": {"anyOf": [{"$ref": "#/definitions/Limit"}, {"type": "null"}]},
                "window": {"$ref": "#/$defs/Maybe%20Window/anyOf/1"},
                "level": {"$ref": "#/$defs/Level/oneOf/1"},
                "v": {"oneOf": [{"$ref": "#/definitions/Text"}, {"type": "boolean"}]},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}, {"$ref": "#/definitions/Inner~0Code"}],
                    "items": false
                }
            },
            "required": ["code", "status"],
            "additionalProperties": false,
            "$defs": {
                "Code Name/v2": {"$ref": "#/definitions/Inner~0Code"},
                "Code%": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "Maybe Window": {"anyOf": [
                    {"type": "null"},
                    {"type": "object", "properties": {"days": {"type": "integer", "minimum": 1}}, "required": ["days"]}
                ]},
                "Level": {"oneOf": [{"const": "low", "description": "Quiet."}, {"const": "high"}]}
            },
            "definitions": {
                "Inner~Code": {"$ref": "#/$defs/Code%25"},
                "Limit": {"$ref": "#/definitions/Bounded"},
                "Bounded": {"type": "integer", "minimum": 1, "maximum": 100},
                "Text": {"anyOf": [{"type": "string"}, {"type": "null"}]}
            }
        }),
    ]
}

/// Longest number §5 writes: `-1.7976931348623157e+308`; a plain one is at most `-0.0000` and
/// 17 significant digits, as long.
const NUMBER: usize = 24;
/// Longest sent value: a string cut to 47 characters plus `...`, in quotes. Objects are cut to
/// 50; `array(n)`, `(missing)`, numbers and literals are shorter.
const SENT: usize = 1 + 47 + 3 + 1;
/// Longest headline: `Not a multiple of {m}` (the fixed ones are at most 25).
const HEADLINE: usize = "Not a multiple of ".len() + NUMBER;
/// Longest expectation that quotes nothing from the schema: every type of a union.
const EXPECTED_FIXED: usize =
    "Expected a string or a number or an integer or a boolean or an array or an object or null"
        .len();
/// Longest lead before a quoted schema text: `Expected a string matching the pattern `.
const LEAD: usize = "Expected a string matching the pattern ".len();
/// Longest escaped character in a JSON string (`\u001f`).
const ESCAPED: usize = 6;
/// Deepest arguments the target builds (seeds written as JSON may go deeper).
const DEPTH: usize = 4;
/// Longest path segment: a key cut to 50 characters, each escaped, in `["…"]`.
const SEGMENT: usize = 4 + 50 * ESCAPED;

/// A schema compiled once, with the bound on its lines.
struct Case {
    schema: Schema,
    line_max: usize,
}

/// The compiled schemas, and every field name they declare (the keys the arguments favour).
static CASES: LazyLock<(Vec<Case>, Vec<String>)> = LazyLock::new(|| {
    let sources = schemas();
    let mut keys = Vec::new();
    for source in &sources {
        collect_names(source, &mut keys);
    }
    keys.extend(NEAR_KEYS.iter().map(|&k| k.to_owned()));
    keys.push("k".repeat(51));
    keys.sort();
    keys.dedup();
    let cases = sources
        .iter()
        .map(|source| Case {
            schema: Schema::new(source).expect("the fixed schemas compile"),
            line_max: line_max(source),
        })
        .collect();
    (cases, keys)
});

/// Keys no schema declares: near misses of declared ones, and keys a path must quote or cut.
const NEAR_KEYS: &[&str] = &[
    "quantty",
    "emial",
    "pric",
    "a key",
    "",
    "0",
    "~1/",
    "x_long",
    "k\u{1}\t\"\\",
];

/// Strings for formats, patterns and enums, valid and not, and text that attacks the envelope.
const STRINGS: &[&str] = &[
    "cus_ab12",
    "cus_",
    "EUR",
    "open",
    "high",
    "r21",
    "invoice",
    "big",
    "two",
    "ada@example.com",
    "ada@",
    "https://example.com/a?b=c",
    "example.com",
    "123e4567-e89b-12d3-a456-426614174000",
    "123e4567-e89b-12d3-a456-42661417400",
    "2024-01-15T10:30:00Z",
    "2024-13-15",
    "2024-01-15",
    "192.168.0.1",
    "256.1.1.1",
    "::1",
    "12345",
    "1234",
    "<b>&'\"\r",
    "]]>",
    "\u{0}\u{B}\u{FFFE}\u{FFFF}",
    "\u{1F600}",
    "",
];

/// Every property name and required name in a schema, recursively.
fn collect_names(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            if let Some(Value::Array(required)) = map.get("required") {
                out.extend(required.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            map.values().for_each(|v| collect_names(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_names(v, out)),
        _ => {}
    }
}

/// The bound on a `<field>` line for `schema`: `{headline}. You sent: {sent}. {expected}.`
fn line_max(schema: &Value) -> usize {
    HEADLINE + ". You sent: ".len() + SENT + ". ".len() + expected_max(schema) + ".".len()
}

/// The longest expectation a line may hold for `schema`: a fixed one, or a lead and what §5
/// quotes from the schema uncut (enum lists and known fields of at most 20 entries then `, ...`,
/// const values, patterns, format and keyword names). A `{desc}` (version 2) may join several
/// of those, each with its phrase: the bound allows every quoted piece of the schema at once.
fn expected_max(schema: &Value) -> usize {
    let mut all = EXPECTED_FIXED + LEAD;
    let mut visit = |quoted: usize| all += PHRASE + quoted;
    walk_quoted(schema, &mut visit);
    all
}

/// Longest phrase of `{desc}` around a quoted piece (` of at least 18446744073709551615
/// characters`, `, each an object with fields `).
const PHRASE: usize = 48;

fn walk_quoted(schema: &Value, visit: &mut impl FnMut(usize)) {
    let list = |items: Vec<usize>| items.iter().take(MAX_FIELDS).map(|n| n + 2).sum::<usize>() + 5;
    match schema {
        Value::Object(map) => {
            for (keyword, value) in map {
                visit(keyword.chars().count() + 1);
                match (keyword.as_str(), value) {
                    ("enum", Value::Array(options)) => {
                        visit(list(options.iter().map(literal).collect()))
                    }
                    ("const", value) => visit(literal(value)),
                    ("pattern" | "format", Value::String(s)) => visit(s.chars().count()),
                    ("properties", Value::Object(props)) => {
                        visit(list(props.keys().map(|k| k.chars().count()).collect()))
                    }
                    _ => {}
                }
                walk_quoted(value, visit);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk_quoted(v, visit)),
        _ => {}
    }
}

/// Length of an enum or const value as §5 writes it: a string single-quoted, anything else as
/// compact JSON (bounded: numbers by [`NUMBER`], characters of nested strings escaped).
fn literal(value: &Value) -> usize {
    match value {
        Value::String(s) => s.chars().count() + 2,
        other => json_len(other),
    }
}

fn json_len(value: &Value) -> usize {
    let string = |s: &str| s.chars().count() * ESCAPED + 2;
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => NUMBER,
        Value::String(s) => string(s),
        Value::Array(items) => 2 + items.iter().map(|v| json_len(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| string(k) + 1 + json_len(v) + 1)
                .sum::<usize>()
        }
    }
}

/// The qualified action of most calls.
const ACTION: &str = "billing.create_invoice";

/// How many arrays or objects deep `value` is.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// One call: which schema, the qualified action, the arguments.
#[derive(Debug)]
struct Input {
    case: usize,
    action: String,
    args: Value,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let (cases, keys) = &*CASES;
        let case = u.choose_index(cases.len())?;
        // A seed is the schema's byte, then the arguments as JSON text.
        if let Ok(args) = serde_json::from_slice(u.peek_bytes(u.len()).unwrap_or_default()) {
            u.bytes(u.len())?;
            return Ok(Input {
                case,
                action: ACTION.to_owned(),
                args,
            });
        }
        let action = if u.ratio(7, 8)? {
            ACTION.to_owned()
        } else {
            text(u, 40)?
        };
        let mut json = JsonBuilder::new(keys, STRINGS, 48);
        // Mostly an object, as MCP sends, sometimes any value at the root.
        let args = if u.ratio(7, 8)? {
            Value::Object(json.object(u, DEPTH - 1)?)
        } else {
            json.value(u, DEPTH)?
        };
        Ok(Input { case, action, args })
    }
}

fuzz_target!(|input: Input| {
    let case = &CASES.0[input.case];
    let result = case.schema.validate(&input.action, &input.args);
    // A call the validator refuses must never be let through for want of a problem to report.
    assert_eq!(
        case.schema.is_valid(&input.args),
        result.is_ok(),
        "validator and detection disagree on {}",
        input.args
    );
    let Err(err) = result else {
        return;
    };
    // Every problem is reported by one field shown (the same problem in several elements of
    // one array joined, ERRORS.md §11.6), or counted in `(more)`; at most 20 fields are shown.
    let problems = case.schema.problems(&input.args);
    let shown = err.fields();
    assert!(shown.len() <= MAX_FIELDS);
    assert_eq!(err.count(), problems.len());
    let reported = problems
        .iter()
        .filter(|p| {
            let by = shown.iter().filter(|f| reports(f, p)).count();
            assert!(by <= 1, "{} reported twice", p.line());
            by == 1
        })
        .count();
    assert_eq!(problems.len() - reported, err.more());
    let text = err.render();
    let doc = well_formed(&text);
    let root = doc.root_element();
    assert!(root.has_tag_name("validation_error"), "{text}");
    assert_eq!(
        root.attribute("action"),
        Some(&*xml_replaced(&input.action))
    );

    let fields: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("field"))
        .collect();
    assert_eq!(
        fields.len(),
        shown.len() + usize::from(err.more() > 0),
        "{text}"
    );
    // A path has a segment per level of the arguments, and one more for a missing field.
    let name_max = (depth(&input.args) + 1) * SEGMENT;
    for (i, field) in fields.iter().enumerate() {
        let name = field.attribute("name").expect("every field has a name");
        let line = field.text().unwrap_or_default();
        assert!(
            line.chars().count() <= case.line_max,
            "line of {} characters > {}:\n{line}",
            line.chars().count(),
            case.line_max
        );
        match shown.get(i) {
            Some(shown) => {
                let path = shown.problem().path().to_string();
                assert!(path.chars().count() <= name_max, "name too long: {path}");
                assert_eq!(name, xml_replaced(&shown.name()));
                assert_eq!(line, xml_replaced(&shown.problem().line()));
                assert!(line.contains(". You sent: "), "{line}");
            }
            None => {
                assert_eq!(name, "(more)");
                let more = err.more();
                assert!(line.starts_with(&format!("{more} more problem")), "{line}");
            }
        }
    }

    // The client reads back the same fields.
    let parsed = parse_envelope(&text);
    assert_eq!(parsed.kind, ParsedKind::ValidationError);
    let decoded: Vec<(String, String)> = fields
        .iter()
        .map(|f| {
            let name = f.attribute("name").unwrap_or_default().to_owned();
            (name, f.text().unwrap_or_default().to_owned())
        })
        .collect();
    let read: Vec<(String, String)> = parsed
        .fields
        .iter()
        .map(|f| (f.path.clone(), f.text.clone()))
        .collect();
    assert_eq!(read, decoded);
});

/// Whether `field` reports `problem`: the same line, at its path or, for a field of several
/// elements, at the same path in one of them (only the last index differs).
fn reports(field: &Field, problem: &Problem) -> bool {
    if field.problem().line() != problem.line() {
        return false;
    }
    let (a, b) = (field.problem().path().segments(), problem.path().segments());
    if field.elements().is_empty() {
        return a == b;
    }
    let Some(last) = a.iter().rposition(|s| matches!(s, PathSegment::Index(_))) else {
        return false;
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .enumerate()
            .all(|(i, (x, y))| match (i == last, y) {
                (true, PathSegment::Index(n)) => field.elements().contains(n),
                (true, PathSegment::Key(_)) => false,
                (false, _) => x == y,
            })
}
