//! JSON Schema 2020-12 whole (issue 49): the listed `inputSchema` keeps every keyword an action
//! declares (`$schema`, `$defs` with `$anchor`, `allOf`, `anyOf`, `if`/`then`/`else`, `not`,
//! `dependentRequired`, ...), for a tool of one action, a flat tool and a grouped one, where an
//! action's own rules apply only when the call chooses it; and the server enforces each keyword
//! listed, in ERRORS.md §5's lines: a call is accepted exactly when the `jsonschema` crate
//! accepts it against the listed schema.

use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use mcp_fusion::tools::{ActionDef, BoxFuture, Exposition, Failure, ToolDef};
use mcp_fusion::{Context, Server, Tool, ToolError, tool};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The conformance suite's schema for `json_schema_2020_12_tool` (SEP-1613).
fn suite_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                              "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

// The suite's schema, declared the way a `#[tool]` fn declares its arguments: schemars derives
// the fields, `#[schemars(extend(..))]` adds the rules over them.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]},
))]
struct Contact {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Address")]
    address: Option<Address>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Method")]
    contact_method: Option<Method>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    email: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
struct Address {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    street: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    city: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum Method {
    Phone,
    Email,
}

/// Echoes someone to reach.
#[tool(name = "reach", read_only)]
async fn reach(contact: Contact) -> Result<Contact, ToolError> {
    Ok(contact)
}

/// A tool of hand-written schemas whose actions answer `done`.
struct Done(ToolDef);

impl Tool for Done {
    fn definition(&self) -> &ToolDef {
        &self.0
    }

    fn invoke(
        &self,
        _index: usize,
        _args: Value,
        _context: Context,
    ) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
        Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("done")])) })
    }
}

/// The grouped tool: the suite's action beside one of plain fields.
fn grouped() -> ToolDef {
    ToolDef::new("people")
        .description("People.")
        .action(ActionDef::with_schema("contact", suite_schema()).description("Contacts."))
        .action(
            ActionDef::with_schema(
                "lookup",
                json!({"type": "object", "properties": {"name": {"type": "string"}, "limit": {"type": "integer"}},
                       "required": ["name"]}),
            )
            .description("Looks up."),
        )
        .build()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .expect("the listed schema compiles")
}

/// The keywords the suite checks, at the places it checks them.
fn assert_suite_keywords(schema: &Value) {
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema["allOf"][0]["anyOf"].is_array(), "{schema}");
    for key in ["if", "then", "else"] {
        assert!(schema[key].is_object(), "{key}: {schema}");
    }
}

#[test]
fn a_tool_fn_lists_every_keyword_its_arguments_declare() {
    let listed = Value::Object(
        ReachTool
            .definition()
            .to_rmcp()
            .input_schema
            .as_ref()
            .clone(),
    );
    assert_suite_keywords(&listed);
    assert_eq!(listed, suite_schema());
}

#[test]
fn hand_written_schemas_are_listed_whole_flat_and_alone() {
    let single =
        ToolDef::single(ActionDef::with_schema("reach", suite_schema()).description("Reaches."))
            .build();
    let alone = Value::Object(single.to_rmcp().input_schema.as_ref().clone());
    assert_eq!(alone, suite_schema());
    let flat = grouped().listed(Exposition::Flat);
    assert_eq!(flat[0].name, "people_contact");
    assert_eq!(
        Value::Object(flat[0].input_schema.as_ref().clone()),
        suite_schema()
    );
}

#[test]
fn a_grouped_tool_applies_an_actions_rules_when_it_is_chosen() {
    let listed = Value::Object(grouped().input_schema().clone());
    let rules = listed["allOf"].as_array().expect("the actions' rules");
    assert_eq!(
        rules[0]["if"],
        json!({"properties": {"action": {"const": "contact"}}, "required": ["action"]})
    );
    let then = &rules[0]["then"];
    assert_eq!(then["allOf"], suite_schema()["allOf"]);
    for key in ["if", "then", "else"] {
        assert_eq!(then[key], suite_schema()[key], "{key}");
    }
    // Closed among wider fields (lookup's `limit`): the discriminator is one of its own.
    assert_eq!(then["additionalProperties"], false);
    assert_eq!(then["properties"]["action"], true);
    assert_eq!(
        rules[1],
        json!({"if": {"properties": {"action": {"const": "lookup"}}, "required": ["action"]},
               "then": {"required": ["name"], "additionalProperties": false,
                        "properties": {"name": true, "limit": true, "action": true}}})
    );
    assert_eq!(listed["$defs"]["address"]["$anchor"], "addressDef");
    let listed = validator(&listed);
    for (args, accepted) in [
        (json!({"action": "contact", "email": "a@example.com"}), true),
        (
            json!({"action": "contact", "contactMethod": "phone", "phone": "1"}),
            true,
        ),
        (json!({"action": "contact"}), false),
        (
            json!({"action": "contact", "contactMethod": "phone", "email": "a@example.com"}),
            false,
        ),
        (
            json!({"action": "contact", "email": "a@example.com", "limit": 3}),
            false,
        ),
        // Contact's rules are not lookup's.
        (json!({"action": "lookup", "name": "Ann"}), true),
        (json!({"action": "lookup", "name": "Ann", "limit": 3}), true),
        (json!({"action": "lookup"}), false),
    ] {
        assert_eq!(listed.is_valid(&args), accepted, "{args}");
    }
}

#[test]
fn anchors_of_different_definitions_are_kept_apart() {
    let with_address = |street: &str| {
        json!({"type": "object", "properties": {"at": {"$ref": "#/$defs/address"}},
               "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                                     "properties": {street: {"type": "string"}}}}})
    };
    let def = ToolDef::new("mail")
        .description("Mail.")
        .action(ActionDef::with_schema("send", with_address("street")).description("Sends."))
        .action(ActionDef::with_schema("hold", with_address("box")).description("Holds."))
        .action(ActionDef::with_schema("keep", with_address("box")).description("Keeps."))
        .build();
    let defs = &def.input_schema()["$defs"];
    assert_eq!(defs["send.address"]["$anchor"], "send.addressDef");
    assert_eq!(defs["hold.address"]["$anchor"], "hold.addressDef");
    assert_eq!(defs["keep.address"]["$anchor"], "keep.addressDef");
    validator(&Value::Object(def.input_schema().clone()));
    // One definition of the same name in every action is one place: its anchor stays.
    let shared = ToolDef::new("mail")
        .description("Mail.")
        .action(ActionDef::with_schema("send", with_address("street")).description("Sends."))
        .action(ActionDef::with_schema("hold", with_address("street")).description("Holds."))
        .build();
    assert_eq!(
        shared.input_schema()["$defs"]["address"]["$anchor"],
        "addressDef"
    );
}

async fn call(server: &Server, name: &str, arguments: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    server.call(params).await.expect("a listed tool")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

/// The `<field>` lines of a validation error.
fn fields(result: &CallToolResult) -> Vec<String> {
    assert_eq!(result.is_error, Some(true), "{}", text(result));
    (text(result).lines())
        .filter(|l| l.starts_with("<field"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn each_keyword_is_enforced_in_section_5_lines() {
    let server = Server::builder("people", "1")
        .tool(ReachTool)
        .tool(Done(grouped()))
        .build()
        .expect("it builds");
    // Neither a phone nor an email: `anyOf` (the alternatives row), and `else` requires email
    // (described as the object declares it).
    let none = call(&server, "reach", json!({"name": "Ann"})).await;
    assert_eq!(
        text(&none),
        "<validation_error action=\"reach\">
<field name=\"(root)\">Invalid value. You sent: {\"name\":\"Ann\"}. Expected a value matching one of the allowed shapes.</field>
<field name=\"email\">Required field is missing. You sent: (missing). Expected a string.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"
    );
    // The phone as contact method: `then` requires it.
    let phone = call(
        &server,
        "reach",
        json!({"contactMethod": "phone", "email": "a@example.com"}),
    )
    .await;
    assert_eq!(
        fields(&phone),
        [
            "<field name=\"phone\">Required field is missing. You sent: (missing). Expected a string.</field>"
        ]
    );
    // The address by its definition, and no other field.
    let wrong = call(
        &server,
        "reach",
        json!({"email": "a@example.com", "address": {"city": 7}, "fax": "1"}),
    )
    .await;
    assert_eq!(
        fields(&wrong),
        [
            "<field name=\"address.city\">Invalid type. You sent: 7. Expected a string.</field>",
            "<field name=\"fax\">Unrecognized field. You sent: '1'. Remove it. Known fields: name, address, contactMethod, phone, email.</field>",
        ]
    );
    let fine = call(
        &server,
        "reach",
        json!({"contactMethod": "phone", "phone": "555"}),
    )
    .await;
    assert_eq!(fine.is_error, Some(false), "{}", text(&fine));
    // In the grouped tool, the same rules hold for `contact` and only for it.
    let grouped = call(
        &server,
        "people",
        json!({"action": "contact", "contactMethod": "phone", "email": "a@example.com"}),
    )
    .await;
    assert_eq!(
        fields(&grouped),
        [
            "<field name=\"phone\">Required field is missing. You sent: (missing). Expected a string.</field>"
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn other_keywords_of_the_draft_have_their_lines() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "string"}},
        "not": {"required": ["a", "b"]},
        "dependentRequired": {"a": ["c"]},
        "dependentSchemas": {"b": {"properties": {"c": {"minLength": 3}}}},
        "minProperties": 1,
    });
    let def =
        ToolDef::single(ActionDef::with_schema("rules", schema).description("Rules.")).build();
    let server = Server::builder("rules", "1")
        .tool(Done(def))
        .build()
        .expect("it builds");
    let lines = |args: Value| {
        let server = &server;
        async move { fields(&call(server, "rules", args).await) }
    };
    assert_eq!(
        lines(json!({"a": 1, "b": 2, "c": "x"})).await,
        [
            "<field name=\"(root)\">Invalid value. You sent: {\"a\":1,\"b\":2,\"c\":\"x\"}. Expected a value that satisfies \"not\".</field>",
            "<field name=\"c\">Too short. You sent: 'x'. Expected at least 3 characters.</field>",
        ]
    );
    assert_eq!(
        lines(json!({"a": 1})).await,
        [
            "<field name=\"(root)\">Invalid value. You sent: {\"a\":1}. Expected a value that satisfies \"dependentRequired\".</field>"
        ]
    );
    assert_eq!(
        lines(json!({})).await,
        [
            "<field name=\"(root)\">Invalid value. You sent: {}. Expected a value that satisfies \"minProperties\".</field>"
        ]
    );
}

/// One rule of an action's root, by kind: over the fields `a` (integer), `b` (string), `c`
/// (boolean).
fn rule(kind: u8, n: u64) -> (&'static str, Value) {
    match kind % 9 {
        0 => (
            "allOf",
            json!([{"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}]),
        ),
        1 => (
            "anyOf",
            json!([{"required": ["c"]}, {"properties": {"a": {"minimum": n}}}]),
        ),
        2 => ("oneOf", json!([{"required": ["a"]}, {"required": ["b"]}])),
        3 => ("not", json!({"required": ["a", "c"]})),
        4 => (
            "if",
            json!({"properties": {"c": {"const": true}}, "required": ["c"]}),
        ),
        5 => ("dependentRequired", json!({"b": ["a"]})),
        6 => (
            "dependentSchemas",
            json!({"c": {"properties": {"a": {"maximum": n}}}}),
        ),
        7 => ("maxProperties", json!(n % 3 + 1)),
        _ => ("required", json!(["b"])),
    }
}

/// An action's schema: its fields (each kept or not), its rules, closed or not.
fn action_schema(keep: u8, rules: &[(u8, u64)], closed: bool) -> Value {
    let all = [
        ("a", json!({"type": "integer"})),
        ("b", json!({"type": "string"})),
        ("c", json!({"type": "boolean"})),
    ];
    let mut properties = Map::new();
    for (i, (name, schema)) in all.into_iter().enumerate() {
        if keep & (1 << i) != 0 || i == 0 {
            properties.insert(name.to_owned(), schema);
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    for &(kind, n) in rules {
        let (key, value) = rule(kind, n);
        schema.insert(key.to_owned(), value);
        if key == "if" {
            schema.insert("then".into(), json!({"required": ["a"]}));
            schema.insert("else".into(), json!({"properties": {"a": {"maximum": n}}}));
        }
    }
    if closed {
        schema.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(schema)
}

/// Arguments to try: each field absent, of its type or of another; and a stray field.
fn arguments() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        Just(None),
        (0..6i64).prop_map(|n| Some(json!(n))),
        Just(Some(json!("xy"))),
        any::<bool>().prop_map(|b| Some(json!(b))),
    ];
    (value.clone(), value.clone(), value, any::<bool>()).prop_map(|(a, b, c, stray)| {
        let mut args = Map::new();
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            if let Some(v) = v {
                args.insert(name.into(), v);
            }
        }
        if stray {
            args.insert("d".into(), json!(1));
        }
        Value::Object(args)
    })
}

type Spec = (u8, Vec<(u8, u64)>, bool);

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<u8>(),
        prop::collection::vec((any::<u8>(), 0..5u64), 0..4),
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A call is accepted by the server exactly when the `jsonschema` crate accepts it against
    /// the listed schema: for a grouped tool, with each action's rules scoped to it.
    #[test]
    fn the_server_accepts_exactly_what_the_listing_accepts(
        specs in prop::collection::vec(spec(), 1..4),
        calls in prop::collection::vec((0..4usize, arguments()), 16),
    ) {
        let mut builder = ToolDef::new("t").description("T.");
        for (i, (keep, rules, closed)) in specs.iter().enumerate() {
            let mut action = ActionDef::with_schema(format!("a{i}"), action_schema(*keep, rules, *closed))
                .description("A.");
            if !closed {
                action = action.open_arguments();
            }
            builder = builder.action(action);
        }
        let def = builder.build();
        let grouped = validator(&Value::Object(def.input_schema().clone()));
        let flat = def.listed(Exposition::Flat);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let own: Vec<Value> = def.actions().iter().map(|a| a.schema().clone()).collect();
        let server = Server::builder("t", "1").tool(Done(def)).build().expect("it builds");
        for (at, args) in &calls {
            let at = at % specs.len();
            let mut args = args.clone();
            if own[at].get("additionalProperties").is_none() {
                // An open action ignores a field it does not declare; the listing still shows
                // it as the actions that declare it do (ERRORS.md has no "ignored" field).
                let declared = own[at]["properties"].as_object().unwrap();
                args.as_object_mut().unwrap().retain(|k, _| k == "d" || declared.contains_key(k));
            }
            let mut sent = args.as_object().unwrap().clone();
            sent.insert("action".into(), json!(format!("a{at}")));
            let sent = Value::Object(sent);
            let answer = runtime.block_on(call(&server, "t", sent.clone()));
            let served = !text(&answer).contains("<validation_error");
            prop_assert_eq!(served, grouped.is_valid(&sent), "{} against {}", sent, text(&answer));
            // Flat, each action's tool lists its schema as it is.
            let listed = validator(&Value::Object(flat[at].input_schema.as_ref().clone()));
            prop_assert_eq!(served, listed.is_valid(&args), "{} flat", args);
        }
    }
}
