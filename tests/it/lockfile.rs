//! The contract lockfile: its text, the classification of every kind of change (one case per
//! row of the table in `mcp_fusion::contract`), the snapshot-style check, and the billing
//! server started with an older lockfile telling the model what changed.

use std::path::PathBuf;

use mcp_fusion::Server;
use mcp_fusion::client::{Client, ToolCallError};
use mcp_fusion::client::{MIRROR_KEY, parse_envelope};
use mcp_fusion::contract::ChangeSeverity;
use mcp_fusion::contract::{
    Contract, Diff, LockfileError, LockfileMismatch, assert_lockfile, verify_lockfile,
};
use mcp_fusion::rmcp::model::CallToolResult;
use mcp_fusion::server::ServerBuilder;
use mcp_fusion::tools::{ActionDef, ActionDefBuilder, ToolDef};
use serde_json::{Value, json};

use crate::support::billing;

use ChangeSeverity::{Breaking, Cosmetic, Risky, Safe};

fn billing() -> ServerBuilder {
    Server::builder("billing-server", "1").tool(billing::Billing::seeded())
}

fn billing_server() -> Server {
    billing().build().expect("the billing server builds")
}

fn shipped_lockfile() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/mcp-fusion.lock")
}

/// A file in the temp directory that this test alone uses.
fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mcp-fusion-{}-{name}", std::process::id()))
}

fn before_currency() -> Contract {
    billing::contract_before_currency()
}

#[test]
fn the_shipped_billing_lockfile_is_current() {
    assert_lockfile(&billing_server(), shipped_lockfile());
}

#[test]
fn lockfiles_are_stable_and_read_back() {
    let server = billing_server();
    let contract = Contract::of(&server);
    let text = contract.to_lockfile();
    assert_eq!(Contract::from_lockfile(&text).unwrap(), contract);
    assert_eq!(Contract::from_lockfile(&text).unwrap().to_lockfile(), text);
    // Registration order does not matter: tools and actions are sorted.
    let a = ToolDef::new("a")
        .action(ActionDef::without_arguments("y"))
        .action(ActionDef::without_arguments("x"))
        .build();
    let b = ToolDef::new("b")
        .action(ActionDef::without_arguments("z"))
        .build();
    let ab = Contract::of_tools([&a, &b]).to_lockfile();
    assert_eq!(ab, Contract::of_tools([&b, &a]).to_lockfile());
    assert!(ab.find("\"a.x\"") < ab.find("\"a.y\""));
}

#[test]
fn a_hand_edited_lockfile_is_refused() {
    let text = Contract::of(&billing_server()).to_lockfile();
    let edited = text.replacen("Creates a draft invoice", "Creates an invoice", 1);
    assert_ne!(edited, text);
    match Contract::from_lockfile(&edited) {
        Err(LockfileError::Digest { action }) => assert_eq!(action, "billing.create_invoice"),
        other => panic!("expected a digest mismatch, got {other:?}"),
    }
    assert!(matches!(
        Contract::from_lockfile("{\"lockfile\": 9, \"tools\": []}"),
        Err(LockfileError::Version { found: 9 })
    ));
    assert!(matches!(
        Contract::from_lockfile("not json"),
        Err(LockfileError::Format(_))
    ));
}

#[test]
fn the_check_explains_a_change_and_updates_on_request() {
    let path = scratch("check.lock");
    std::fs::write(&path, before_currency().to_lockfile()).unwrap();
    let server = billing_server();
    let mismatch = verify_lockfile(&server, &path, false).unwrap_err();
    assert!(matches!(mismatch, LockfileMismatch::Differs { .. }));
    let message = mismatch.to_string();
    assert!(
        message.contains(
            "billing.create_invoice\n  BREAKING  currency: The field \"currency\" was added and is required.\n"
        ),
        "{message}"
    );
    // The line diff shows the new property.
    assert!(
        message
            .lines()
            .any(|line| line.starts_with('+') && line.trim_end().ends_with("\"currency\": {")),
        "{message}"
    );
    assert!(message.contains("MCP_FUSION_UPDATE_LOCK=1"), "{message}");

    verify_lockfile(&server, &path, true).expect("written");
    verify_lockfile(&server, &path, false).expect("now current");
    std::fs::remove_file(&path).unwrap();
    let missing = verify_lockfile(&server, &path, false).unwrap_err();
    assert!(matches!(missing, LockfileMismatch::Missing { .. }));
    assert!(
        missing.to_string().starts_with("no contract lockfile at"),
        "{missing}"
    );
}

/// One action `t.a` before and after.
fn changes(before: ActionDefBuilder, after: ActionDefBuilder) -> Vec<(ChangeSeverity, String)> {
    let tool = |action| ToolDef::new("t").action(action).build();
    let (before, after) = (tool(before), tool(after));
    Diff::between(
        &Contract::of_tools([&before]),
        &Contract::of_tools([&after]),
    )
    .iter()
    .map(|(_, change)| (change.severity, change.field.clone()))
    .collect()
}

fn with(schema: Value) -> ActionDefBuilder {
    ActionDef::with_schema("a", schema)
}

/// A closed object with these properties and required fields.
fn object(properties: Value, required: &[&str]) -> ActionDefBuilder {
    with(json!({
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
        "required": required,
    }))
}

/// A closed object with one optional field of this schema.
fn field(schema: Value) -> ActionDefBuilder {
    object(json!({ "x": schema }), &[])
}

/// A row of the table: its name, the action before and after, the changes expected.
type Row = (
    &'static str,
    ActionDefBuilder,
    ActionDefBuilder,
    Vec<(ChangeSeverity, &'static str)>,
);

#[test]
fn every_row_of_the_classification_table() {
    let none = || ActionDef::without_arguments("a");
    let rows: Vec<Row> = vec![
        (
            "field added and required",
            object(json!({}), &[]),
            object(json!({"x": {"type": "string"}}), &["x"]),
            vec![(Breaking, "x")],
        ),
        (
            "field newly required",
            field(json!({"type": "string"})),
            object(json!({"x": {"type": "string"}}), &["x"]),
            vec![(Breaking, "x")],
        ),
        (
            "field removed, unknown fields rejected",
            field(json!({"type": "string"})),
            object(json!({}), &[]),
            vec![(Breaking, "x")],
        ),
        (
            "field removed, unknown fields ignored",
            with(json!({"type": "object", "properties": {"x": {"type": "string"}}}))
                .open_arguments(),
            with(json!({"type": "object", "properties": {}})).open_arguments(),
            vec![(Risky, "x")],
        ),
        (
            "type changed",
            field(json!({"type": "string"})),
            field(json!({"type": "integer"})),
            vec![(Breaking, "x")],
        ),
        (
            "null no longer accepted",
            field(json!({"type": ["string", "null"]})),
            field(json!({"type": "string"})),
            vec![(Breaking, "x")],
        ),
        (
            "type widened",
            field(json!({"type": "integer"})),
            field(json!({"type": ["number", "null"]})),
            vec![(Safe, "x")],
        ),
        (
            "enum value removed",
            field(json!({"enum": ["a", "b"]})),
            field(json!({"enum": ["a"]})),
            vec![(Breaking, "x")],
        ),
        (
            "enum added",
            field(json!({"type": "string"})),
            field(json!({"type": "string", "enum": ["a"]})),
            vec![(Breaking, "x")],
        ),
        (
            "const changed",
            field(json!({"const": 1})),
            field(json!({"const": 2})),
            vec![(Breaking, "x")],
        ),
        (
            "lower bound raised",
            field(json!({"type": "integer", "minimum": 1})),
            field(json!({"type": "integer", "minimum": 5})),
            vec![(Breaking, "x")],
        ),
        (
            "upper bound lowered",
            field(json!({"type": "string", "maxLength": 200})),
            field(json!({"type": "string", "maxLength": 100})),
            vec![(Breaking, "x")],
        ),
        (
            "bound added",
            field(json!({"type": "array"})),
            field(json!({"type": "array", "maxItems": 50})),
            vec![(Breaking, "x")],
        ),
        (
            "a bound deep in an array item, through $ref",
            with(json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}},
                "$defs": {"Line": {"type": "object", "additionalProperties": false, "properties": {"quantity": {"type": "integer", "minimum": 1}}}},
            })),
            with(json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}},
                "$defs": {"Line": {"type": "object", "additionalProperties": false, "properties": {"quantity": {"type": "integer", "minimum": 2}}}},
            })),
            vec![(Breaking, "lines[].quantity")],
        ),
        (
            "unknown fields newly rejected",
            with(json!({"type": "object", "properties": {}})).open_arguments(),
            with(json!({"type": "object", "properties": {}, "additionalProperties": false})),
            vec![(Breaking, "(root)")],
        ),
        (
            "items must now be distinct",
            field(json!({"type": "array"})),
            field(json!({"type": "array", "uniqueItems": true})),
            vec![(Breaking, "x")],
        ),
        (
            "read_only lost",
            none().read_only(),
            none(),
            vec![(Breaking, "(read_only)")],
        ),
        (
            "destructive gained",
            none(),
            none().destructive(),
            vec![(Breaking, "(destructive)")],
        ),
        (
            "idempotency changed",
            none().idempotent(),
            none(),
            vec![(Risky, "(idempotent)")],
        ),
        (
            "open world gained",
            none(),
            none().open_world(),
            vec![(Risky, "(open_world)")],
        ),
        (
            "scope added",
            none(),
            none().scopes(["invoices:write"]),
            vec![(Breaking, "(scopes)")],
        ),
        (
            "pattern changed",
            field(json!({"type": "string", "pattern": "^a"})),
            field(json!({"type": "string", "pattern": "^b"})),
            vec![(Risky, "x")],
        ),
        (
            "pattern added",
            field(json!({"type": "string"})),
            field(json!({"type": "string", "pattern": "^b"})),
            vec![(Risky, "x")],
        ),
        (
            "format changed",
            field(json!({"type": "string", "format": "date"})),
            field(json!({"type": "string", "format": "date-time"})),
            vec![(Risky, "x")],
        ),
        (
            "multipleOf changed",
            field(json!({"type": "number", "multipleOf": 0.5})),
            field(json!({"type": "number", "multipleOf": 0.25})),
            vec![(Risky, "x")],
        ),
        (
            "default changed",
            field(json!({"type": "integer", "default": 20})),
            field(json!({"type": "integer", "default": 10})),
            vec![(Risky, "x")],
        ),
        (
            "alternatives added",
            field(json!({"anyOf": [{"type": "string"}]})),
            field(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
            vec![(Risky, "x")],
        ),
        (
            "another keyword changed",
            field(json!({"type": "object", "dependentRequired": {"a": ["b"]}})),
            field(json!({"type": "object", "dependentRequired": {"a": ["c"]}})),
            vec![(Risky, "x")],
        ),
        (
            "optional field added",
            object(json!({}), &[]),
            field(json!({"type": "string"})),
            vec![(Safe, "x")],
        ),
        (
            "requirement dropped",
            object(json!({"x": {"type": "string"}}), &["x"]),
            field(json!({"type": "string"})),
            vec![(Safe, "x")],
        ),
        (
            "bound loosened",
            field(json!({"type": "integer", "maximum": 100})),
            field(json!({"type": "integer", "maximum": 1000})),
            vec![(Safe, "x")],
        ),
        (
            "bound removed",
            field(json!({"type": "integer", "minimum": 1})),
            field(json!({"type": "integer"})),
            vec![(Safe, "x")],
        ),
        (
            "enum value added",
            field(json!({"enum": ["a"]})),
            field(json!({"enum": ["a", "b"]})),
            vec![(Safe, "x")],
        ),
        (
            "pattern removed",
            field(json!({"type": "string", "pattern": "^a"})),
            field(json!({"type": "string"})),
            vec![(Safe, "x")],
        ),
        (
            "unknown fields newly accepted",
            object(json!({}), &[]),
            with(json!({"type": "object", "properties": {}, "required": []})).open_arguments(),
            vec![(Safe, "(root)")],
        ),
        (
            "read_only gained",
            none(),
            none().read_only(),
            vec![(Safe, "(read_only)")],
        ),
        (
            "destructive lost",
            none().destructive(),
            none(),
            vec![(Safe, "(destructive)")],
        ),
        (
            "open world lost",
            none().open_world(),
            none(),
            vec![(Safe, "(open_world)")],
        ),
        (
            "scope removed",
            none().scopes(["invoices:write"]),
            none(),
            vec![(Safe, "(scopes)")],
        ),
        (
            "deprecated",
            none(),
            none().deprecated(None, Some("t.b")),
            vec![(Safe, "(deprecated)")],
        ),
        (
            "deprecation note changed",
            none().deprecated(Some("Old."), None),
            none().deprecated(Some("Older."), None),
            vec![(Cosmetic, "(deprecated)")],
        ),
        (
            "action description",
            none().description("Lists."),
            none().description("Lists all."),
            vec![(Cosmetic, "(description)")],
        ),
        (
            "field description",
            field(json!({"type": "string", "description": "A"})),
            field(json!({"type": "string", "description": "B"})),
            vec![(Cosmetic, "x")],
        ),
    ];
    let count = rows.len();
    for (row, before, after, expected) in rows {
        let expected: Vec<(ChangeSeverity, String)> = expected
            .into_iter()
            .map(|(s, f)| (s, f.to_owned()))
            .collect();
        assert_eq!(changes(before, after), expected, "row: {row}");
    }
    assert_eq!(count, 43);
}

#[test]
fn tools_and_actions_added_or_removed() {
    let one = ToolDef::new("t")
        .description("First.")
        .action(ActionDef::without_arguments("a"))
        .build();
    let two = ToolDef::new("t")
        .description("Second.")
        .action(ActionDef::without_arguments("a"))
        .action(ActionDef::without_arguments("b"))
        .build();
    let other = ToolDef::new("u")
        .action(ActionDef::without_arguments("c"))
        .build();
    let seen = |before: &[&ToolDef],
                after: &[&ToolDef]|
     -> Vec<(String, ChangeSeverity, String, Option<String>)> {
        Diff::between(
            &Contract::of_tools(before.iter().copied()),
            &Contract::of_tools(after.iter().copied()),
        )
        .iter()
        .map(|(tool, c)| {
            (
                tool.to_owned(),
                c.severity,
                c.field.clone(),
                c.action.clone(),
            )
        })
        .collect()
    };
    let t = |s: &str| s.to_owned();
    assert_eq!(
        seen(&[&one], &[&two]),
        [
            (t("t"), Cosmetic, t("(description)"), None),
            (t("t"), Safe, t("(action)"), Some(t("t.b"))),
        ]
    );
    assert_eq!(
        seen(&[&two], &[&one]),
        [
            (t("t"), Cosmetic, t("(description)"), None),
            (t("t"), Breaking, t("(action)"), Some(t("t.b"))),
        ]
    );
    assert_eq!(
        seen(&[&one, &other], &[&one]),
        [(t("u"), Breaking, t("(tool)"), None)]
    );
    assert_eq!(
        seen(&[&one], &[&one, &other]),
        [(t("u"), Safe, t("(tool)"), None)]
    );
}

/// The server, started with the lockfile of yesterday's contract, shows the model the change in
/// the validation error of the affected action, and only there.
#[tokio::test(flavor = "current_thread")]
async fn an_older_lockfile_heals_the_models_arguments() {
    let server = billing().contract_lock(before_currency()).build().unwrap();
    let call = |action: &str, arguments: Value| {
        let mut arguments = arguments;
        arguments["action"] = json!(action);
        let mut params = mcp_fusion::rmcp::model::CallToolRequestParams::new("billing");
        params.arguments = arguments.as_object().cloned();
        params
    };
    let yesterday = json!({
        "customer_email": "ada@example.com",
        "amount_cents": 1200,
        "lines": [{"description": "Consulting", "quantity": 1}],
    });
    let result = server
        .call(call("create_invoice", yesterday))
        .await
        .expect("the tool exists");
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0].as_text().expect("text").text.clone();
    assert_eq!(
        text,
        "<validation_error action=\"billing.create_invoice\">\n\
         <field name=\"currency\">Required field is missing. You sent: (missing). Expected one of: 'EUR', 'USD', 'GBP'.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         <contract_awareness action=\"billing.create_invoice\" changes=\"1\" max_severity=\"BREAKING\">\n  \
         <system_note>The contract of \"billing.create_invoice\" changed since it was last locked. Arguments learned from the old contract may no longer be valid.</system_note>\n  \
         <change severity=\"BREAKING\" field=\"currency\">\n    \
         <description>The field \"currency\" was added and is required.</description>\n  \
         </change>\n\
         </contract_awareness>\n\
         </validation_error>"
    );
    // The mirror counts the block's changes (ERRORS.md §9), as the text does.
    assert_eq!(mirror(&result)["contract_changes"], 1);
    // The mirror's reading is the text's, with each field's row of §5.
    let read = ToolCallError::from_result(result).error;
    let from_text = parse_envelope(&text);
    assert_eq!(
        (read.code.as_str(), &read.action),
        (from_text.code.as_str(), &from_text.action)
    );
    let fields: Vec<_> = read
        .fields
        .iter()
        .map(|f| (f.path.as_str(), f.problem.as_deref(), f.text.as_str()))
        .collect();
    assert_eq!(
        fields,
        [(
            "currency",
            Some("missing"),
            "Required field is missing. You sent: (missing). Expected one of: 'EUR', 'USD', 'GBP'."
        )]
    );

    // Another action's validation error is untouched.
    let other = server
        .call(call("get_invoice", json!({"id": 42})))
        .await
        .expect("the tool exists");
    assert!(mirror(&other).get("contract_changes").is_none());
    let other = other.content[0].as_text().expect("text").text.clone();
    assert!(other.starts_with("<validation_error"), "{other}");
    assert!(!other.contains("contract_awareness"), "{other}");
}

/// The one mirror object of an error result.
fn mirror(result: &CallToolResult) -> &Value {
    let entries = &result.meta.as_ref().expect("a _meta").0[MIRROR_KEY];
    assert_eq!(entries.as_array().map(Vec::len), Some(1), "{entries}");
    &entries[0]
}

/// A model that learned an action the running contract removed gets UNKNOWN_ACTION with that
/// action's changes (ERRORS.md §4), bare or qualified; other unknown actions get none.
#[tokio::test(flavor = "current_thread")]
async fn unknown_action_of_a_removed_action_says_it_was_removed() {
    let mut yesterday = Contract::of(&billing_server());
    let tool = &mut yesterday.tools[0];
    let mut refund = tool.actions[0].clone();
    refund.name = "billing.refund_invoice".into();
    tool.actions.push(refund.clone());
    // A bare name with a dot, like the tool's own prefix: routing reads a value as a bare name
    // first (§10 rule 7).
    refund.name = "billing.billing.legacy".into();
    tool.actions.push(refund);
    tool.actions.sort_by(|a, b| a.name.cmp(&b.name));
    let server = billing().contract_lock(yesterday).build().unwrap();
    let call = |action: &str| {
        let mut params = mcp_fusion::rmcp::model::CallToolRequestParams::new("billing");
        params.arguments = json!({"action": action}).as_object().cloned();
        params
    };
    for sent in ["refund_invoice", "billing.refund_invoice"] {
        let result = server.call(call(sent)).await.expect("the tool exists");
        assert_eq!(result.is_error, Some(true));
        let text = result.content[0].as_text().expect("text").text.clone();
        let block = "\n<contract_awareness action=\"billing.refund_invoice\" changes=\"1\" max_severity=\"BREAKING\">\n  \
             <system_note>The contract of \"billing.refund_invoice\" changed since it was last locked. Arguments learned from the old contract may no longer be valid.</system_note>\n  \
             <change severity=\"BREAKING\" field=\"(action)\">\n    \
             <description>The action \"billing.refund_invoice\" was removed.</description>\n  \
             </change>\n\
             </contract_awareness>\n\
             </tool_error>";
        assert!(
            text.starts_with("<tool_error code=\"UNKNOWN_ACTION\""),
            "{text}"
        );
        assert!(text.ends_with(block), "{text}");
        assert!(text.contains(&format!("<message>The action \"{sent}\" does not exist")));
        assert_eq!(mirror(&result)["contract_changes"], 1);
        assert_eq!(mirror(&result)["code"], "UNKNOWN_ACTION");
    }
    let legacy = server
        .call(call("billing.legacy"))
        .await
        .expect("the tool exists");
    let legacy = legacy.content[0].as_text().expect("text").text.clone();
    assert!(
        legacy.contains("<contract_awareness action=\"billing.billing.legacy\""),
        "{legacy}"
    );
    let other = server
        .call(call("refund_all"))
        .await
        .expect("the tool exists");
    let other = other.content[0].as_text().expect("text").text.clone();
    assert!(
        other.starts_with("<tool_error code=\"UNKNOWN_ACTION\""),
        "{other}"
    );
    assert!(!other.contains("contract_awareness"), "{other}");
}

/// The same over stdio, with the lockfile given on the command line, and the diff flag.
#[tokio::test(flavor = "current_thread")]
async fn the_billing_server_reads_its_lockfile_from_the_command_line() {
    let old = scratch("billing-old.lock");
    std::fs::write(&old, before_currency().to_lockfile()).unwrap();

    let mut command = tokio::process::Command::new(mcp_fusion_drivers::artifacts::billing());
    command
        .arg("--lock")
        .arg(&old)
        .stderr(std::process::Stdio::null());
    let (client, connection) = Client::spawn(command).await.expect("the server starts");
    let result = client
        .call_raw(
            "billing.create_invoice",
            json!({"customer_email": "ada@example.com", "amount_cents": 1200, "lines": [{"description": "Consulting", "quantity": 1}]}),
        )
        .await
        .unwrap();
    let text = result.content[0].as_text().expect("text").text.clone();
    assert!(
        text.contains("<change severity=\"BREAKING\" field=\"currency\">"),
        "{text}"
    );
    connection.cancel().await.unwrap();

    let diff = std::process::Command::new(mcp_fusion_drivers::artifacts::billing())
        .arg("--contract-diff")
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(1));
    let stdout = String::from_utf8(diff.stdout).unwrap();
    assert_eq!(
        stdout,
        "billing.create_invoice\n  BREAKING  currency: The field \"currency\" was added and is required.\n"
    );
    let same = std::process::Command::new(mcp_fusion_drivers::artifacts::billing())
        .arg("--contract-diff")
        .arg(shipped_lockfile())
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(same.stdout).unwrap(),
        "The contract matches the lockfile.\n"
    );
    std::fs::remove_file(&old).unwrap();
}

/// An action whose success value has this schema.
fn returning(schema: Value) -> ActionDefBuilder {
    ActionDef::without_arguments("a").output_schema(schema)
}

/// An object output with these properties, all required unless listed in `optional`.
fn output(properties: Value, optional: &[&str]) -> ActionDefBuilder {
    let required: Vec<&String> = properties
        .as_object()
        .into_iter()
        .flat_map(|p| p.keys())
        .filter(|k| !optional.contains(&k.as_str()))
        .collect();
    returning(json!({"type": "object", "properties": properties, "required": required}))
}

/// The output schema is compared for the host that reads it: each row of the module's output
/// table, and titles as cosmetic changes.
#[test]
fn every_row_of_the_output_table() {
    let none = || ActionDef::without_arguments("a");
    let id = || json!({"type": "string"});
    let rows: Vec<Row> = vec![
        (
            "output declared",
            none(),
            output(json!({"id": id()}), &[]),
            vec![(Safe, "(output)")],
        ),
        (
            "output no longer declared",
            output(json!({"id": id()}), &[]),
            none(),
            vec![(Breaking, "(output)")],
        ),
        (
            "output field removed",
            output(json!({"id": id(), "total": {"type": "integer"}}), &[]),
            output(json!({"id": id()}), &[]),
            vec![(Breaking, "(output).total")],
        ),
        (
            "output field added",
            output(json!({"id": id()}), &[]),
            output(json!({"id": id(), "total": {"type": "integer"}}), &[]),
            vec![(Safe, "(output).total")],
        ),
        (
            "output field may now be absent",
            output(json!({"id": id()}), &[]),
            output(json!({"id": id()}), &["id"]),
            vec![(Breaking, "(output).id")],
        ),
        (
            "output field now always present",
            output(json!({"id": id()}), &["id"]),
            output(json!({"id": id()}), &[]),
            vec![(Safe, "(output).id")],
        ),
        (
            "output type widened",
            output(json!({"due": {"type": "string"}}), &[]),
            output(json!({"due": {"type": ["string", "null"]}}), &[]),
            vec![(Breaking, "(output).due")],
        ),
        (
            "output type narrowed",
            output(json!({"due": {"type": ["string", "null"]}}), &[]),
            output(json!({"due": {"type": "string"}}), &[]),
            vec![(Safe, "(output).due")],
        ),
        (
            "output enum value added, another removed",
            output(json!({"s": {"enum": ["draft", "paid"]}}), &[]),
            output(json!({"s": {"enum": ["draft", "void"]}}), &[]),
            vec![(Risky, "(output).s"), (Safe, "(output).s")],
        ),
        (
            "a field of the output's items removed, through $ref",
            returning(json!({"type": "array", "items": {"$ref": "#/$defs/Line"},
                "$defs": {"Line": {"type": "object", "properties": {"q": {"type": "integer"}, "d": id()}}}})),
            returning(json!({"type": "array", "items": {"$ref": "#/$defs/Line"},
                "$defs": {"Line": {"type": "object", "properties": {"q": {"type": "integer"}}}}})),
            vec![(Breaking, "(output)[].d")],
        ),
        (
            "another keyword of the output changed",
            output(json!({"n": {"type": "integer", "maximum": 10}}), &[]),
            output(json!({"n": {"type": "integer", "maximum": 20}}), &[]),
            vec![(Risky, "(output).n")],
        ),
        (
            "an output description changed: nothing for a host",
            output(json!({"n": {"type": "integer", "description": "a"}}), &[]),
            output(json!({"n": {"type": "integer", "description": "b"}}), &[]),
            vec![],
        ),
        (
            "title added",
            none(),
            none().title("An action"),
            vec![(Cosmetic, "(title)")],
        ),
    ];
    for (name, before, after, expected) in rows {
        let expected: Vec<(ChangeSeverity, String)> = expected
            .into_iter()
            .map(|(s, f)| (s, f.to_owned()))
            .collect();
        assert_eq!(changes(before, after), expected, "{name}");
    }
}

/// Titles and output schemas are in the lockfile and read back; a lockfile written before
/// they existed keeps its digests, and the change to today's billing tool is named.
#[test]
fn lockfiles_keep_titles_and_output_schemas() {
    let tool = ToolDef::new("t")
        .title("T")
        .action(output(json!({"id": {"type": "string"}}), &[]).title("A"))
        .build();
    let contract = Contract::of_tools([&tool]);
    let text = contract.to_lockfile();
    assert!(text.contains("\"output_schema\""), "{text}");
    assert_eq!(Contract::from_lockfile(&text).unwrap(), contract);

    let older =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/billing-before-output.lock");
    let older = Contract::read(older).expect("an older lockfile still reads");
    let diff = Diff::between(&older, &Contract::of(&billing_server()));
    let output_changes: Vec<(ChangeSeverity, &str)> = diff
        .iter()
        .filter(|(_, c)| c.field == "(output)")
        .map(|(_, c)| (c.severity, c.action.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(output_changes.len(), 7, "{diff}");
    assert!(output_changes.iter().all(|(s, _)| *s == Safe), "{diff}");
    // The scopes today's billing actions need, which the fixture predates, are BREAKING; every
    // other change is SAFE at most.
    let (scopes, others): (Vec<_>, Vec<_>) = diff.iter().partition(|(_, c)| c.field == "(scopes)");
    assert!(scopes.iter().all(|(_, c)| c.severity == Breaking), "{diff}");
    assert_eq!(
        others.iter().map(|(_, c)| c.severity).min(),
        Some(Safe),
        "{diff}"
    );
}

/// Every lockfile the repository ships reads back (its digests verify) and is written again
/// byte for byte: what is new in the layout (scopes) is left out where it is empty.
#[test]
fn shipped_lockfiles_read_and_write_back_unchanged() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![shipped_lockfile()];
    for entry in std::fs::read_dir(root.join("tests/fixtures")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "lock") {
            paths.push(path);
        }
    }
    assert!(paths.len() >= 2, "{paths:?}");
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let contract = Contract::read(&path)
            .unwrap_or_else(|e| panic!("{} does not read: {e}", path.display()));
        assert_eq!(contract.to_lockfile(), text, "{}", path.display());
    }
}

/// A removed output field is BREAKING for the host, and stays out of what the model is told.
#[tokio::test(flavor = "current_thread")]
async fn output_changes_are_not_told_to_the_model() {
    let locked = ToolDef::new("t")
        .action(
            ActionDef::with_schema(
                "a",
                json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            )
            .output_schema(json!({"type": "object", "properties": {"gone": {"type": "string"}}})),
        )
        .build();
    let running = || {
        ToolDef::new("t")
            .description("A tool.")
            .action(
                ActionDef::with_schema(
                    "a",
                    json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                )
                .description("An action.")
                .output_schema(json!({"type": "object", "properties": {}})),
            )
            .build()
    };
    let diff = Diff::between(
        &Contract::of_tools([&locked]),
        &Contract::of_tools([&running()]),
    );
    assert_eq!(diff.max_severity(), Some(Breaking), "{diff}");

    let server = Server::builder("s", "1")
        .tool(crate::support::Defined(running()))
        .contract_lock(Contract::of_tools([&locked]))
        .build()
        .unwrap();
    let mut params = mcp_fusion::rmcp::model::CallToolRequestParams::new("t");
    params.arguments = json!({"action": "a", "n": "x"}).as_object().cloned();
    let result = server.call(params).await.expect("the tool exists");
    let text = &result.content[0].as_text().expect("text").text;
    assert!(text.starts_with("<validation_error"), "{text}");
    assert!(!text.contains("contract_awareness"), "{text}");
}

/// `billing.create_invoice`, needing these scopes.
fn scoped_billing(scopes: &[&str]) -> ToolDef {
    ToolDef::new("billing")
        .description("Invoices.")
        .action(
            ActionDef::without_arguments("create_invoice")
                .description("Creates an invoice.")
                .scopes(scopes.iter().copied()),
        )
        .build()
}

/// An action that now needs a scope its lockfile does not list is a BREAKING change: the check
/// names it, and the model is told in the action's validation errors, as of a hint lost.
#[tokio::test(flavor = "current_thread")]
async fn a_scope_gained_since_the_lockfile_is_breaking() {
    let locked = Contract::of_tools([&scoped_billing(&[])]);
    let path = scratch("scopes.lock");
    std::fs::write(&path, locked.to_lockfile()).unwrap();
    let server = Server::builder("s", "1")
        .tool(crate::support::Defined(scoped_billing(&["invoices:write"])))
        .contract_lock(locked)
        .build()
        .unwrap();

    let mismatch = verify_lockfile(&server, &path, false).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    let message = mismatch.to_string();
    assert!(
        message.contains(
            "billing.create_invoice\n  BREAKING  (scopes): \"billing.create_invoice\" now needs the scope \"invoices:write\".\n"
        ),
        "{message}"
    );
    assert!(
        message
            .lines()
            .any(|line| line.strip_prefix('+').map(str::trim) == Some("\"scopes\": [")),
        "{message}"
    );
    let diff = Diff::between(
        &Contract::of_tools([&scoped_billing(&[])]),
        &Contract::of(&server),
    );
    assert_eq!(diff.max_severity(), Some(Breaking), "{diff}");

    let mut params = mcp_fusion::rmcp::model::CallToolRequestParams::new("billing");
    params.arguments = json!({"action": "create_invoice", "amount": 1})
        .as_object()
        .cloned();
    let result = server.call(params).await.expect("the tool exists");
    let text = &result.content[0].as_text().expect("text").text;
    assert!(text.starts_with("<validation_error"), "{text}");
    assert!(
        text.contains(
            "<change severity=\"BREAKING\" field=\"(scopes)\">\n    \
             <description>\"billing.create_invoice\" now needs the scope \"invoices:write\".</description>"
        ),
        "{text}"
    );
}
