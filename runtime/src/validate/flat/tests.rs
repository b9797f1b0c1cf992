use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::validate::Schema;

/// Names of fields: near one another (did-you-mean), escaped in pointers, empty, numeric.
const NAMES: [&str; 9] = ["id", "idx", "limit", "limits", "name", "a/b", "~0", "", "0"];

/// Keywords of a leaf, each with its value as JSON.
const KEYWORDS: [(&str, &str); 27] = [
    ("type", r#""string""#),
    ("type", r#""integer""#),
    ("type", r#""number""#),
    ("type", r#""boolean""#),
    ("type", r#"["integer", "null"]"#),
    ("type", r#"["string", "null"]"#),
    ("minLength", "2"),
    ("maxLength", "3"),
    ("pattern", r#""^[a-z]+$""#),
    ("pattern", r#""\\d""#),
    ("format", r#""email""#),
    ("format", r#""uuid""#),
    ("format", r#""date""#),
    ("format", r#""ipv4""#),
    ("format", r#""hostname""#),
    ("minimum", "1"),
    ("minimum", "1.5"),
    ("maximum", "100"),
    ("maximum", "18446744073709551615"),
    ("exclusiveMinimum", "0"),
    ("exclusiveMaximum", "2.5"),
    ("multipleOf", "2"),
    ("multipleOf", "0.5"),
    ("enum", r#"["a", "abc", 1, null]"#),
    ("const", "2"),
    ("description", r#""A field.""#),
    ("default", r#""a""#),
];

/// Values a call may send, as JSON: numbers at and past the bounds, integers written as
/// floats, the largest and smallest integers, strings of several scripts, formats right
/// and wrong, an attempt to close the envelope, containers.
const SENT: [&str; 30] = [
    "null",
    "true",
    "0",
    "1",
    "1.0",
    "2.5",
    "-3",
    "100",
    "101",
    "1e300",
    "18446744073709551615",
    "-9223372036854775808",
    "-0.0",
    r#""""#,
    r#""a""#,
    r#""abc""#,
    r#""ABC9""#,
    r#""not-an-email""#,
    r#""a@b.co""#,
    r#""2024-02-30""#,
    r#""127.0.0.1""#,
    r#""550e8400-e29b-41d4-a716-446655440000""#,
    r#""üé""#,
    r#""😀😀""#,
    r#""</field>]]>\u0001""#,
    r#"[1, "a"]"#,
    r#"{"a": 1}"#,
    "2",
    "4.0",
    "0.1",
];

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn keyword(i: u8) -> (&'static str, Value) {
    let (keyword, value) = KEYWORDS[usize::from(i) % KEYWORDS.len()];
    (keyword, json(value))
}

fn sent(i: u8) -> Value {
    json(SENT[usize::from(i) % SENT.len()])
}

type Leaf = Vec<u8>;

/// A field of one value, as schemars writes it: inline, behind a `$ref`, either of these
/// or null, or alternatives of constants.
fn field(keywords: &Leaf, shape: u8, defs: &mut Map<String, Value>) -> Value {
    let leaf: Map<String, Value> = keywords
        .iter()
        .map(|&k| keyword(k))
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let mut reference = || {
        let name = format!("D{}", defs.len());
        defs.insert(name.clone(), Value::Object(leaf.clone()));
        json!({"$ref": format!("#/$defs/{name}")})
    };
    match shape % 6 {
        0 | 1 => Value::Object(leaf),
        2 => reference(),
        3 => json!({"anyOf": [reference(), {"type": "null"}]}),
        4 => json!({"anyOf": [{"type": "null"}, leaf], "description": "Or null."}),
        _ => json!({"oneOf": [{"const": "a"}, {"const": 1}, {"const": 2.5}]}),
    }
}

fn schema(fields: &[(usize, Leaf, u8)], required: &[usize], closed: Option<bool>) -> Value {
    let mut properties = Map::new();
    let mut defs = Map::new();
    for (name, keywords, shape) in fields {
        let field = field(keywords, *shape, &mut defs);
        properties.insert(NAMES[name % NAMES.len()].to_owned(), field);
    }
    let mut names: Vec<&str> = Vec::new();
    for name in required.iter().map(|&i| NAMES[i % NAMES.len()]) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut schema =
        json!({"type": "object", "properties": properties, "required": names, "$defs": defs});
    if let Some(closed) = closed {
        schema["additionalProperties"] = json!(!closed);
    }
    schema
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The walk finds what the crate's list gives: the same problems, lines, order and count,
    /// whole and cut to the first two.
    #[test]
    fn the_walk_finds_what_the_long_way_finds(
        fields in prop::collection::vec((0..NAMES.len(), prop::collection::vec(any::<u8>(), 0..5), any::<u8>()), 0..5),
        required in prop::collection::vec(0..NAMES.len(), 0..4),
        closed in prop::option::of(any::<bool>()),
        args in prop::collection::vec((0..NAMES.len(), any::<u8>()), 0..7),
    ) {
        let schema = schema(&fields, &required, closed);
        let compiled = Schema::new(&schema).unwrap();
        let args: Map<String, Value> = args
            .into_iter()
            .map(|(name, value)| (NAMES[name].to_owned(), sent(value)))
            .collect();
        let args = Value::Object(args);
        for keep in [usize::MAX, 2] {
            let (long, flat) = compiled.long_way(&args, keep);
            prop_assert!(flat, "a flat schema is walked: {}", schema);
            prop_assert_eq!(compiled.collect(&args, keep), long, "{} {}", schema, args);
        }
    }
}

#[test]
fn only_flat_objects_are_walked() {
    let flat = |schema: Value| Schema::new(&schema).unwrap().long_way(&json!({}), 1).1;
    // As schemars writes a struct of a string and an optional bounded integer.
    assert!(flat(json!({
        "type": "object",
        "title": "Args",
        "properties": {
            "id": {"type": "string", "minLength": 1, "description": "The id."},
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 100}
        },
        "required": ["id"],
        "additionalProperties": false
    })));
    assert!(flat(json!({"type": "object"})));
    // An enum behind a `$ref`, and optional (schemars' `Option<Status>`).
    assert!(flat(json!({
        "type": "object",
        "properties": {
            "status": {"$ref": "#/$defs/Status"},
            "next": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]},
            "level": {"oneOf": [{"const": 1}, {"const": 2}]}
        },
        "$defs": {"Status": {"type": "string", "enum": ["open", "paid"]}}
    })));
    for nested in [
        json!({"properties": {"a": {"type": "object", "properties": {}}}}),
        json!({"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {}}}),
        json!({"properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
        json!({"properties": {"a": {"if": {"type": "string"}, "else": {"type": "integer"}}}}),
        json!({"properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
        json!({"properties": {"a": {"minLength": 1.0}}}),
        json!({"additionalProperties": {"type": "string"}}),
        json!({"minProperties": 1}),
        json!({"$id": "urn:x", "properties": {}}),
        json!({"type": ["object", "null"]}),
    ] {
        assert!(!flat(nested.clone()), "{nested}");
    }
}
