use super::*;
use crate::validate::compile::multiple_of;
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
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}});
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
    let args = json!({"n": 2.0, "x": 3.0, "o": -4.0, "list": [1.0, 1.5, null], "map": {"a": 7.0}});
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
                "Required field is missing. You sent: (missing). Expected an object with fields n."
                    .into()
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
