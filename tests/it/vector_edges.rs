//! Boundaries around the golden vectors, each checked against its exact wire text (ERRORS.md).

use std::time::Duration;

use mcp_fusion::errors::with_warning;
use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
use mcp_fusion::router::ActionRouter;
use mcp_fusion::validate::{FieldPath, Problem, Schema, ValidationError};
use mcp_fusion::{ErrorCode, Severity, ToolError};
use serde_json::{Map, Value, json};

const RECOVERY: &str =
    "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>";

/// The `<validation_error>` of `t.a` for these arguments.
fn validate(schema: Value, args: Value) -> String {
    let schema = Schema::new(&schema).expect("a valid schema");
    schema
        .validate("t.a", &args)
        .expect_err("invalid arguments")
        .render()
}

/// The `<validation_error>` of `t.a` holding exactly these `<field>` lines.
fn envelope<S: AsRef<str>>(fields: impl IntoIterator<Item = S>) -> String {
    let mut lines = vec!["<validation_error action=\"t.a\">".to_owned()];
    lines.extend(fields.into_iter().map(|f| f.as_ref().to_owned()));
    lines.extend([RECOVERY.to_owned(), "</validation_error>".to_owned()]);
    lines.join("\n")
}

/// A `<field>` line; `name` and `text` as they appear on the wire (already escaped).
fn field(name: &str, text: &str) -> String {
    format!("<field name=\"{name}\">{text}</field>")
}

/// An object that declares no fields and accepts none: every key sent is unrecognized.
fn closed() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// Sends `1` under each key, in order.
fn ones<'a>(keys: impl IntoIterator<Item = &'a str>) -> Value {
    Value::Object(keys.into_iter().map(|k| (k.to_owned(), json!(1))).collect())
}

fn unrecognized(name: &str) -> String {
    field(name, "Unrecognized field. You sent: 1. Remove it.")
}

#[test]
fn sent_strings_are_cut_after_fifty_scalar_values() {
    let cases = [
        ("請".repeat(50), format!("'{}'", "請".repeat(50))),
        (
            "\u{1F600}".repeat(51),
            format!("'{}...'", "\u{1F600}".repeat(47)),
        ),
        // 50 characters in 53 bytes: characters are counted, not bytes.
        (
            format!("{}\u{1F600}", "x".repeat(49)),
            format!("'{}\u{1F600}'", "x".repeat(49)),
        ),
        // The 47th character survives whole even when it is astral.
        (
            format!("{}\u{1F600}yyyy", "x".repeat(46)),
            format!("'{}\u{1F600}...'", "x".repeat(46)),
        ),
        (
            format!("{}\u{1F600}\u{1F600}\u{1F600}\u{1F600}", "x".repeat(47)),
            format!("'{}...'", "x".repeat(47)),
        ),
    ];
    for (sent, shown) in cases {
        let text = validate(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            json!({"n": sent}),
        );
        let line = format!("Invalid type. You sent: {shown}. Expected an integer.");
        assert_eq!(text, envelope([field("n", &line)]), "{sent}");
    }
}

#[test]
fn unknown_action_value_is_cut_after_fifty_characters() {
    let router = ActionRouter::new("billing", ["list"]);
    let cases = [
        ("z".repeat(50), "z".repeat(50)),
        ("z".repeat(51), format!("{}...", "z".repeat(47))),
        ("請".repeat(51), format!("{}...", "請".repeat(47))),
    ];
    for (value, shown) in cases {
        let route = router.route(Some(&json!({"action": value}))).unwrap_err();
        let expected = format!(
            "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">\n\
             <message>The action \"{shown}\" does not exist on tool \"billing\".</message>\n\
             <recovery>Choose one of the available actions and call the tool again.</recovery>\n\
             <available_actions>\n  <action>billing.list</action>\n</available_actions>\n\
             </tool_error>"
        );
        assert_eq!(router.error(&route).render(), expected);
    }
}

#[test]
fn long_keys_are_cut_and_then_quoted() {
    let (k50, k51, emoji51) = ("k".repeat(50), "k".repeat(51), "\u{1F600}".repeat(51));
    let text = validate(
        closed(),
        ones([k50.as_str(), k51.as_str(), emoji51.as_str()]),
    );
    let expected = envelope([
        unrecognized(&k50),
        // A cut key ends in `...`, which is not an identifier.
        unrecognized(&format!("[&quot;{}...&quot;]", "k".repeat(47))),
        unrecognized(&format!("[&quot;{}...&quot;]", "\u{1F600}".repeat(47))),
    ]);
    assert_eq!(text, expected);
}

#[test]
fn closed_object_without_properties_keyword() {
    let text = validate(
        json!({"type": "object", "additionalProperties": false}),
        ones(["a", "b"]),
    );
    assert_eq!(text, envelope([unrecognized("a"), unrecognized("b")]));
    let nested = json!({"type": "object", "properties": {"n": {"type": "object", "additionalProperties": false}}});
    let text = validate(nested, json!({"n": {"a": 1}}));
    assert_eq!(text, envelope([unrecognized("n.a")]));
}

#[test]
fn twenty_problems_fit_and_more_are_counted() {
    let keys: Vec<String> = (0..22).map(|i| format!("k{i:02}")).collect();
    let shown: Vec<String> = keys.iter().take(20).map(|k| unrecognized(k)).collect();
    let sent = |n: usize| ones(keys.iter().take(n).map(String::as_str));
    let more = |line: &str| {
        shown
            .iter()
            .cloned()
            .chain([field("(more)", line)])
            .collect::<Vec<_>>()
    };

    assert_eq!(validate(closed(), sent(20)), envelope(&shown));
    assert_eq!(
        validate(closed(), sent(21)),
        envelope(more(
            "1 more problem not shown. Fix the fields above first."
        ))
    );
    assert_eq!(
        validate(closed(), sent(22)),
        envelope(more(
            "2 more problems not shown. Fix the fields above first."
        ))
    );
}

#[test]
fn lengths_count_characters_singular_and_plural() {
    let schema = json!({
        "type": "object",
        "properties": {
            "one": {"type": "string", "maxLength": 1},
            "two": {"type": "string", "minLength": 2},
            "tag": {"type": "string", "maxLength": 2},
        },
    });
    // One astral character is one character: it satisfies maxLength 1.
    assert!(
        Schema::new(&schema)
            .unwrap()
            .is_valid(&json!({"one": "\u{1F600}", "two": "請請"}))
    );
    let text = validate(
        schema,
        json!({"one": "\u{1F600}\u{1F600}", "two": "\u{1F600}", "tag": "abc"}),
    );
    let expected = envelope([
        field(
            "one",
            "Too long. You sent: '\u{1F600}\u{1F600}'. Expected at most 1 character.",
        ),
        field(
            "two",
            "Too short. You sent: '\u{1F600}'. Expected at least 2 characters.",
        ),
        field(
            "tag",
            "Too long. You sent: 'abc'. Expected at most 2 characters.",
        ),
    ]);
    assert_eq!(text, expected);
}

#[test]
fn item_counts_singular_and_plural() {
    let schema = json!({
        "type": "object",
        "properties": {
            "none": {"type": "array", "maxItems": 0},
            "one": {"type": "array", "maxItems": 1},
            "pair": {"type": "array", "minItems": 2},
        },
    });
    let text = validate(schema, json!({"none": [[]], "one": [1, 2, 3], "pair": []}));
    let expected = envelope([
        field(
            "none",
            "Too many items. You sent: array(1). Expected at most 0 items.",
        ),
        field(
            "one",
            "Too many items. You sent: array(3). Expected at most 1 item.",
        ),
        field(
            "pair",
            "Too few items. You sent: array(0). Expected at least 2 items.",
        ),
    ]);
    assert_eq!(text, expected);
}

#[test]
fn retry_after_singular_and_plural() {
    let retry = |secs: f64| {
        ToolError::new(ErrorCode::SERVER_BUSY, "Busy.")
            .retry_after(secs)
            .render()
    };
    let expected = |after: &str| {
        format!(
            "<tool_error code=\"SERVER_BUSY\" severity=\"error\">\n<message>Busy.</message>\n\
             <retry_after>{after}</retry_after>\n</tool_error>"
        )
    };
    assert_eq!(retry(1.0), expected("1 second"));
    assert_eq!(retry(0.5), expected("1 second"));
    assert_eq!(retry(1.001), expected("2 seconds"));
    assert_eq!(retry(2.0), expected("2 seconds"));
}

#[test]
fn rate_limited_durations() {
    let cases = [
        (1, 1, "1 second", "1 second"),
        (90, 2, "90 seconds", "2 seconds"),
        (60, 60, "1 minute", "60 seconds"),
        (120, 1, "2 minutes", "1 second"),
        (3600, 30, "1 hour", "30 seconds"),
        (7200, 90, "2 hours", "90 seconds"),
        (5400, 2, "90 minutes", "2 seconds"),
    ];
    for (window, wait, per, wait_text) in cases {
        let err =
            ToolError::rate_limited(3, Duration::from_secs(window), Duration::from_secs(wait));
        let expected = format!(
            "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n\
             <message>Rate limit exceeded: at most 3 calls per {per}.</message>\n\
             <recovery>Wait {wait_text} before calling this tool again.</recovery>\n\
             <retry_after>{wait_text}</retry_after>\n</tool_error>"
        );
        assert_eq!(err.render(), expected);
    }
}

#[test]
fn rate_limited_wait_rounds_up_to_at_least_one_second() {
    for (wait, text) in [
        (Duration::ZERO, "1 second"),
        (Duration::from_millis(1001), "2 seconds"),
    ] {
        let err = ToolError::rate_limited(1, Duration::from_secs(1), wait);
        assert_eq!(
            err.recovery(),
            Some(format!("Wait {text} before calling this tool again.").as_str())
        );
        assert!(
            err.render()
                .ends_with(&format!("<retry_after>{text}</retry_after>\n</tool_error>"))
        );
    }
}

#[test]
fn timeout_durations() {
    let cases = [
        (Duration::from_secs(1), "1 second"),
        (Duration::from_millis(1500), "2 seconds"),
        (Duration::from_secs(59), "59 seconds"),
        (Duration::from_secs(60), "1 minute"),
        (Duration::from_secs(90), "90 seconds"),
        (Duration::from_secs(3600), "1 hour"),
        (Duration::from_secs(7200), "2 hours"),
    ];
    for (deadline, within) in cases {
        let expected = format!(
            "<tool_error code=\"TIMEOUT\" severity=\"error\">\n\
             <message>The action \"billing.export\" did not finish within {within}.</message>\n\
             <recovery>The call was cancelled. Retry with a smaller request, or try again later.</recovery>\n\
             </tool_error>"
        );
        assert_eq!(
            ToolError::timeout("billing.export", deadline).render(),
            expected
        );
    }
}

#[test]
fn bounds_exclusive_and_inclusive() {
    let schema = json!({
        "type": "object",
        "properties": {
            "gt": {"type": "number", "exclusiveMinimum": 0},
            "lt": {"type": "number", "exclusiveMaximum": 1},
            "ge": {"type": "number", "minimum": 1},
            "le": {"type": "number", "maximum": 100},
            "half": {"type": "number", "minimum": 0.5},
        },
    });
    let at_bounds = json!({"gt": 1e-300, "lt": 0.999, "ge": 1, "le": 100.0, "half": 0.5});
    assert!(Schema::new(&schema).unwrap().is_valid(&at_bounds));
    let text = validate(
        schema,
        json!({"gt": -0.5, "lt": 1.0, "ge": 0.999, "le": 100.5, "half": 0}),
    );
    let expected = envelope([
        field("gt", "Too small. You sent: -0.5. Expected a number > 0."),
        field("lt", "Too large. You sent: 1.0. Expected a number &lt; 1."),
        field("ge", "Too small. You sent: 0.999. Expected a number >= 1."),
        field(
            "le",
            "Too large. You sent: 100.5. Expected a number &lt;= 100.",
        ),
        field("half", "Too small. You sent: 0. Expected a number >= 0.5."),
    ]);
    assert_eq!(text, expected);
}

#[test]
fn odd_keys_in_paths() {
    let keys = [
        "a\"b",
        "back\\slash",
        "line\nbreak",
        "ctl\u{1}",
        "tab\t",
        "bs\u{8}ff\u{c}cr\r",
        "us\u{1f}",
        "0",
        "_",
        "a1",
        "<&'>",
        "\u{FFFF}",
        "del\u{7F}",
    ];
    let text = validate(closed(), ones(keys));
    let expected = envelope(
        [
            "[&quot;a\\&quot;b&quot;]",
            "[&quot;back\\\\slash&quot;]",
            "[&quot;line\\nbreak&quot;]",
            "[&quot;ctl\\u0001&quot;]",
            "[&quot;tab\\t&quot;]",
            "[&quot;bs\\bff\\fcr\\r&quot;]",
            "[&quot;us\\u001f&quot;]",
            "[&quot;0&quot;]",
            "_",
            "a1",
            "[&quot;&lt;&amp;&apos;&gt;&quot;]",
            // JSON syntax keeps U+FFFF literal; the wire then replaces it.
            "[&quot;\u{FFFD}&quot;]",
            "[&quot;del\u{7F}&quot;]",
        ]
        .map(unrecognized),
    );
    assert_eq!(text, expected);
}

#[test]
fn nested_paths() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a key": {"type": "object", "properties": {"b": {"type": "string"}}},
            "lines": {"type": "array", "items": {"type": "object", "properties": {"quantity": {"type": "integer", "minimum": 1}}}},
            "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            "meta": {"type": "array", "items": {"type": "object", "properties": {"x-y": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}},
        },
    });
    let args = json!({
        "a key": {"b": 1},
        "lines": [{"quantity": 0}],
        "matrix": [[1, 2], ["x"]],
        "meta": [{}, {"x-y": {"ok": "no"}}],
    });
    let expected = envelope([
        field(
            "[&quot;a key&quot;].b",
            "Invalid type. You sent: 1. Expected a string.",
        ),
        field(
            "lines[0].quantity",
            "Too small. You sent: 0. Expected a number >= 1.",
        ),
        field(
            "matrix[1][0]",
            "Invalid type. You sent: 'x'. Expected an integer.",
        ),
        field(
            "meta[1][&quot;x-y&quot;].ok",
            "Invalid type. You sent: 'no'. Expected a boolean.",
        ),
    ]);
    assert_eq!(validate(schema, args), expected);
}

#[test]
fn arguments_that_are_not_an_object() {
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
    let cases = [
        (json!([]), "array(0)".to_owned()),
        (json!("x"), "'x'".to_owned()),
        (json!("y".repeat(51)), format!("'{}...'", "y".repeat(47))),
        (json!(3.5), "3.5".to_owned()),
        (json!(-7), "-7".to_owned()),
        (Value::Null, "null".to_owned()),
        (json!(true), "true".to_owned()),
        (json!(false), "false".to_owned()),
    ];
    for (args, sent) in cases {
        let line = format!("Invalid type. You sent: {sent}. Expected an object with fields a.");
        assert_eq!(
            validate(schema.clone(), args),
            envelope([field("(root)", &line)])
        );
    }
}

#[test]
fn objects_of_fifty_characters_keep_the_period() {
    let schema = json!({"type": "object", "properties": {"v": {"type": "string"}}});
    // `{"k":"` and `"}` take 8 of the 50 characters.
    let whole = validate(schema.clone(), json!({"v": {"k": "x".repeat(42)}}));
    let line = format!(
        "Invalid type. You sent: {{\"k\":\"{}\"}}. Expected a string.",
        "x".repeat(42)
    );
    assert_eq!(whole, envelope([field("v", &line)]));

    let cut = validate(schema, json!({"v": {"k": "x".repeat(43)}}));
    let line = format!(
        "Invalid type. You sent: {{\"k\":\"{}... Expected a string.",
        "x".repeat(41)
    );
    assert_eq!(cut, envelope([field("v", &line)]));
}

#[test]
fn a_string_ending_in_dots_keeps_the_period() {
    let schema = json!({"type": "object", "properties": {"v": {"type": "integer"}}});
    let line = "Invalid type. You sent: 'wait...'. Expected an integer.";
    assert_eq!(
        validate(schema, json!({"v": "wait..."})),
        envelope([field("v", line)])
    );
}

#[test]
fn a_cut_object_with_nothing_expected_ends_the_line() {
    let sent = json!({"k": "x".repeat(60)});
    let problem = Problem::custom(
        FieldPath::root().key("v"),
        "Not allowed here.",
        Some(&sent),
        None,
    );
    assert_eq!(
        problem.line(),
        format!(
            "Not allowed here. You sent: {{\"k\":\"{}...",
            "x".repeat(41)
        )
    );
}

#[test]
fn enum_lists_of_twenty_and_twenty_two() {
    let of = |n: i64| json!({"type": "object", "properties": {"n": {"enum": (0..n).collect::<Vec<_>>()}}});
    let twenty = (0..20)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let text = validate(of(20), json!({"n": 99}));
    let line = format!("Invalid option. You sent: 99. Expected one of: {twenty}.");
    assert_eq!(text, envelope([field("n", &line)]));

    let text = validate(of(22), json!({"n": 99}));
    let line = format!("Invalid option. You sent: 99. Expected one of: {twenty}, ...");
    assert_eq!(text, envelope([field("n", &line)]));
}

#[test]
fn multiple_of_integers_is_exact() {
    // 2^53 + 1: a double would read it as 2^53.
    let big = json!({"n": 9007199254740993u64});
    let of = |m: u64| json!({"type": "object", "properties": {"n": {"multipleOf": m}}});
    assert!(Schema::new(&of(3)).unwrap().is_valid(&big));
    let line = "Not a multiple of 2. You sent: 9007199254740993. Expected a multiple of 2.";
    assert_eq!(validate(of(2), big), envelope([field("n", line)]));
}

#[test]
fn multiple_of_fractions_divide_as_doubles() {
    let schema = json!({"type": "object", "properties": {"n": {"multipleOf": 0.1}}});
    assert!(Schema::new(&schema).unwrap().is_valid(&json!({"n": 0.5})));
    let line = "Not a multiple of 0.1. You sent: 0.3. Expected a multiple of 0.1.";
    assert_eq!(
        validate(schema, json!({"n": 0.3})),
        envelope([field("n", line)])
    );
}

#[test]
fn only_the_listed_formats_are_asserted() {
    let schema = json!({
        "type": "object",
        "properties": {
            "h": {"type": "string", "format": "hostname"},
            "t": {"type": "string", "format": "time"},
            "d": {"type": "string", "format": "duration"},
        },
    });
    assert!(
        Schema::new(&schema)
            .unwrap()
            .is_valid(&json!({"h": "-bad host!", "t": "noon", "d": "long"}))
    );
}

#[test]
fn known_fields_list_over_twenty_ends_without_period() {
    let names: Vec<String> = (0..21).map(|i| format!("f{i:02}")).collect();
    let properties: Map<String, Value> = names.iter().map(|n| (n.clone(), json!({}))).collect();
    let schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let line = format!(
        "Unrecognized field. You sent: 1. Remove it. Known fields: {}, ...",
        names[..20].join(", ")
    );
    assert_eq!(
        validate(schema, json!({"zzz": 1})),
        envelope([field("zzz", &line)])
    );
}

#[test]
fn builder_recovery() {
    let head = "<tool_error code=\"CONFLICT\" severity=\"error\">\n<message>m</message>\n";
    assert_eq!(
        ToolError::new(ErrorCode::CONFLICT, "m")
            .suggest("")
            .render(),
        format!("{head}</tool_error>")
    );
    // Only the empty string is dropped; text is never trimmed.
    assert_eq!(
        ToolError::new(ErrorCode::CONFLICT, "m")
            .suggest(" ")
            .render(),
        format!("{head}<recovery> </recovery>\n</tool_error>")
    );
}

#[test]
fn builder_actions_drop_empty_and_duplicates_across_calls() {
    let err = ToolError::new(ErrorCode::NOT_FOUND, "m")
        .actions(["a.b", "", "A.b"])
        .actions([" ", "a.b", "A.b", "c.d"]);
    let expected = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>m</message>\n\
                    <available_actions>\n  <action>a.b</action>\n  <action>A.b</action>\n  \
                    <action> </action>\n  <action>c.d</action>\n</available_actions>\n</tool_error>";
    assert_eq!(err.render(), expected);
}

#[test]
fn builder_details_keep_first_position_and_last_value() {
    let err = ToolError::new(ErrorCode::NOT_FOUND, "m")
        .detail("a", "1")
        .detail("b", "2")
        .detail("a", "3")
        .details([("", ""), ("c", "4"), ("a", "5"), ("", "6")]);
    let expected = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>m</message>\n<details>\n  \
                    <detail key=\"a\">5</detail>\n  <detail key=\"b\">2</detail>\n  \
                    <detail key=\"\">6</detail>\n  <detail key=\"c\">4</detail>\n</details>\n</tool_error>";
    assert_eq!(err.render(), expected);
}

#[test]
fn builder_retry_after_bounds() {
    let secs = |err: ToolError| err.get_retry_after();
    let base = || ToolError::new(ErrorCode::RATE_LIMITED, "m");
    assert_eq!(secs(base().retry_after(0)), None);
    assert_eq!(secs(base().retry_after(-1)), None);
    assert_eq!(secs(base().retry_after(i64::MIN)), None);
    assert_eq!(secs(base().retry_after(-0.5)), None);
    assert_eq!(secs(base().retry_after(0.0)), None);
    assert_eq!(secs(base().retry_after(Duration::ZERO)), None);
    assert_eq!(secs(base().retry_after(0.001)), Some(1));
    assert_eq!(secs(base().retry_after(2.25)), Some(3));
    assert_eq!(secs(base().retry_after(Duration::from_nanos(1))), Some(1));
    assert_eq!(
        secs(base().retry_after(Duration::from_millis(2001))),
        Some(3)
    );
    assert_eq!(secs(base().retry_after(u32::MAX)), Some(u32::MAX));
    assert_eq!(
        secs(base().retry_after(u64::from(u32::MAX) + 1)),
        Some(u32::MAX)
    );
    assert_eq!(secs(base().retry_after(u64::MAX)), Some(u32::MAX));
    assert_eq!(secs(base().retry_after(4294967295.5)), Some(u32::MAX));
    assert_eq!(secs(base().retry_after(f64::INFINITY)), Some(u32::MAX));
    assert_eq!(
        base().retry_after(1e12).render(),
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>m</message>\n\
         <retry_after>4294967295 seconds</retry_after>\n</tool_error>"
    );
    assert_eq!(
        base().retry_after(-3).render(),
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n<message>m</message>\n</tool_error>"
    );
}

#[test]
fn severity_decides_is_error() {
    for (severity, is_error) in [
        (Severity::Warning, false),
        (Severity::Error, true),
        (Severity::Critical, true),
    ] {
        let err = ToolError::new(ErrorCode::CONFLICT, "m").severity(severity);
        assert_eq!(err.is_error(), is_error);
        let head = format!(
            "<tool_error code=\"CONFLICT\" severity=\"{}\">\n",
            severity.as_str()
        );
        assert!(err.render().starts_with(&head));
    }
    assert!(
        !ToolError::new(ErrorCode::CONFLICT, "m")
            .warning()
            .is_error()
    );
    assert!(
        ToolError::new(ErrorCode::CONFLICT, "m")
            .critical()
            .is_error()
    );
    assert!(
        ToolError::new(ErrorCode::CONFLICT, "m")
            .warning()
            .critical()
            .is_error()
    );
}

/// The result as it goes on the wire.
fn wire(result: &CallToolResult) -> Value {
    serde_json::to_value(result).expect("a result serializes")
}

fn texts(result: &CallToolResult) -> Vec<String> {
    let wire = wire(result);
    let blocks = wire["content"].as_array().expect("content");
    blocks
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "text");
            b["text"].as_str().expect("text").to_owned()
        })
        .collect()
}

#[test]
fn call_tool_result_carries_one_envelope() {
    let errors = [
        ToolError::new(ErrorCode::NOT_FOUND, "m"),
        ToolError::new(ErrorCode::DEPRECATED, "old").warning(),
        ToolError::new(ErrorCode::CONFLICT, "<&>")
            .critical()
            .retry_after(3),
    ];
    for err in &errors {
        let result = CallToolResult::from(err);
        assert_eq!(result.is_error, Some(err.is_error()));
        assert!(result.structured_content.is_none());
        assert_eq!(texts(&result), [err.render()]);
        let wire = wire(&result);
        assert_eq!(wire["isError"], json!(err.is_error()));
        assert!(wire.get("structuredContent").is_none());
    }
}

#[test]
fn validation_error_result_is_an_error() {
    let err = ValidationError::new(
        "t.a",
        vec![Problem::custom(FieldPath::root(), "Bad", None, None)],
    );
    let result = CallToolResult::from(&err);
    assert_eq!(result.is_error, Some(true));
    assert!(result.structured_content.is_none());
    assert_eq!(
        texts(&result),
        [envelope([field("(root)", "Bad. You sent: (missing).")])]
    );
}

#[test]
fn a_warning_is_appended_last() {
    let ok = CallToolResult::success(vec![
        ContentBlock::text("first"),
        ContentBlock::text("second"),
    ]);
    let warning = ToolError::deprecated("billing.void", None, Some("billing.cancel"));
    let warned = with_warning(ok, &warning);
    assert_eq!(warned.is_error, Some(false));
    assert_eq!(
        texts(&warned),
        ["first".to_owned(), "second".to_owned(), warning.render()]
    );
    assert_eq!(
        warning.render(),
        "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n\
         <message>The action \"billing.void\" is deprecated.</message>\n\
         <recovery>Use billing.cancel instead.</recovery>\n\
         <available_actions>\n  <action>billing.cancel</action>\n</available_actions>\n\
         </tool_error>"
    );
}

#[test]
fn an_error_passed_as_warning_replaces_the_result() {
    let ok = CallToolResult::success(vec![ContentBlock::text("data")]);
    let err = ToolError::new(ErrorCode::CONFLICT, "m");
    let result = with_warning(ok, &err);
    assert_eq!(result.is_error, Some(true));
    assert_eq!(texts(&result), [err.render()]);
}
