//! What lets a model fix a failed call in one try (ERRORS.md version 3, §11), through a server:
//! the billing example's envelopes for each rule, text and mirror, as the in-process call, the
//! typed client and a re-parse read them; an action called as a tool; a successful string sent
//! as its text; a schema the envelopes could not describe refused when the server is built.
//! (The transports and their fast paths answer these bytes alike: `fast_path`.)

use std::borrow::Cow;

use crate::support::{Defined, billing::Billing};
use mcp_fusion::client::{Client, ClientError, MIRROR_KEY, ParsedError, parse_envelope};
use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult};
use mcp_fusion::tools::{ActionDef, ToolDef};
use mcp_fusion::{Server, ToolError, tool};
use serde_json::{Value, json};

fn billing() -> Server {
    Server::builder("billing-server", "1")
        .tool(Billing::seeded())
        .build()
        .expect("the billing server builds")
}

async fn call(server: &Server, name: &str, arguments: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    server.call(params).await.expect("a listed tool")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

fn line(quantity: i64) -> Value {
    json!({"description": "Consulting", "quantity": quantity})
}

fn invoice(lines: Vec<Value>) -> Value {
    json!({"action": "create_invoice", "customer_email": "ada@example.com",
           "amount_cents": 1200, "currency": "EUR", "lines": lines})
}

const ACTIONS: &str = "<available_actions>
  <action>billing.list_invoices</action>
  <action>billing.get_invoice</action>
  <action>billing.create_invoice</action>
  <action>billing.pay_invoice</action>
  <action>billing.cancel_invoice</action>
  <action>billing.void_invoice</action>
  <action>billing.export_invoices</action>
</available_actions>";

const FIX: &str =
    "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>";

/// One call per rule of §11, each envelope whole.
#[tokio::test(flavor = "current_thread")]
async fn billing_envelopes_follow_version_3() {
    let server = billing();
    let lines_of = |n: usize, q: i64| (0..n).map(|_| line(q)).collect::<Vec<_>>();
    let mut without_amount = invoice(vec![line(1)]);
    without_amount
        .as_object_mut()
        .unwrap()
        .remove("amount_cents");
    let cases = [
        // §11.1: which actions take the fields sent.
        (
            json!({"id": "inv_2026_0001", "reason": "Created by mistake"}),
            format!(
                "<tool_error code=\"MISSING_DISCRIMINATOR\" severity=\"error\">
<message>The required field \"action\" is missing.</message>
<recovery>Add the \"action\" field with one of the available actions and call the tool again. Actions that take every field you sent: billing.cancel_invoice.</recovery>
{ACTIONS}
</tool_error>"
            ),
        ),
        (
            json!({"action": "delete_invoice", "id": "inv_2026_0001"}),
            format!(
                "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">
<message>The action \"delete_invoice\" does not exist on tool \"billing\".</message>
<recovery>Choose one of the available actions and call the tool again. Actions that take every field you sent: billing.get_invoice, billing.pay_invoice, billing.cancel_invoice, billing.void_invoice.</recovery>
{ACTIONS}
</tool_error>"
            ),
        ),
        // §11.2: an abbreviation.
        (
            json!({"action": "crt_inv", "customer_email": "ada@example.com"}),
            format!(
                "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">
<message>The action \"crt_inv\" does not exist on tool \"billing\".</message>
<recovery>Did you mean \"billing.create_invoice\"? Choose one of the available actions and call the tool again.</recovery>
{ACTIONS}
</tool_error>"
            ),
        ),
        (
            invoice(vec![json!({"description": "Consulting", "qty": 2})]),
            format!(
                "<validation_error action=\"billing.create_invoice\">
<field name=\"lines[0].quantity\">Required field is missing. You sent: (missing). Expected an integer >= 1 and &lt;= 4294967295.</field>
<field name=\"lines[0].qty\">Unrecognized field. You sent: 2. Remove it or rename it: did you mean \"quantity\"?</field>
{FIX}
</validation_error>"
            ),
        ),
        // §11.3: a count names the items.
        (
            invoice(Vec::new()),
            format!(
                "<validation_error action=\"billing.create_invoice\">
<field name=\"lines\">Too few items. You sent: array(0). Expected at least 1 item, each an object with fields description, quantity.</field>
{FIX}
</validation_error>"
            ),
        ),
        // §11.4: no u64 range.
        (
            without_amount,
            format!(
                "<validation_error action=\"billing.create_invoice\">
<field name=\"amount_cents\">Required field is missing. You sent: (missing). Expected an integer >= 1.</field>
{FIX}
</validation_error>"
            ),
        ),
        // §11.5: the pattern's example.
        (
            json!({"action": "get_invoice", "id": "INV-2026-0001"}),
            format!(
                "<validation_error action=\"billing.get_invoice\">
<field name=\"id\">Invalid format. You sent: 'INV-2026-0001'. Expected a string matching the pattern ^inv_[0-9]{{4}}_[0-9]{{4}}$ (e.g. 'inv_2026_0001').</field>
{FIX}
</validation_error>"
            ),
        ),
        // §11.6: the same problem in 25 elements, one line.
        (
            invoice(lines_of(25, 0)),
            format!(
                "<validation_error action=\"billing.create_invoice\">
<field name=\"lines[0-24].quantity\">Too small. You sent: 0. Expected a number >= 1.</field>
{FIX}
</validation_error>"
            ),
        ),
    ];
    for (arguments, expected) in cases {
        let result = call(&server, "billing", arguments.clone()).await;
        assert_eq!(result.is_error, Some(true), "{arguments}");
        assert_eq!(text(&result), expected, "{arguments}");
        // The mirror tells a client what the text tells it.
        let mirror = &result.meta.as_ref().expect("a mirror").0[MIRROR_KEY][0];
        let mut from_mirror = ParsedError::from_mirror(mirror).expect("a mirror object");
        from_mirror.fields.iter_mut().for_each(|f| f.problem = None);
        assert_eq!(from_mirror, parse_envelope(text(&result)), "{arguments}");
    }
}

/// A grouped line's elements, in the mirror and read back from the text alike, and by the typed
/// client.
#[tokio::test(flavor = "current_thread")]
async fn grouped_lines_carry_their_elements() {
    let mut lines: Vec<Value> = (0..7).map(|_| line(0)).collect();
    lines[5] = line(1);
    lines.push(line(-1));
    lines.push(line(-1));
    let arguments = invoice(lines);
    let result = call(&billing(), "billing", arguments.clone()).await;
    let mirror = &result.meta.as_ref().unwrap().0[MIRROR_KEY][0];
    assert_eq!(
        mirror["fields"],
        json!([
            {"path": "lines[0-4,6].quantity", "elements": [0, 1, 2, 3, 4, 6], "problem": "minimum",
             "text": "Too small. You sent: 0. Expected a number >= 1."},
            {"path": "lines[7,8].quantity", "elements": [7, 8], "problem": "minimum",
             "text": "Too small. You sent: -1. Expected a number >= 1."}
        ])
    );
    let parsed = parse_envelope(text(&result));
    assert_eq!(parsed.fields[0].elements, [0, 1, 2, 3, 4, 6]);
    assert_eq!(
        parsed.fields[1].paths().collect::<Vec<_>>(),
        ["lines[7].quantity", "lines[8].quantity"]
    );

    let (client, _connection) = Client::in_memory(billing()).await.expect("connected");
    let args = arguments.as_object().cloned().unwrap();
    let mut args = Value::Object(args);
    args.as_object_mut().unwrap().remove("action");
    match client.call("billing.create_invoice", args).await {
        Err(ClientError::Tool(failed)) => {
            let fields = &failed.error.fields;
            assert_eq!(fields[0].elements, [0, 1, 2, 3, 4, 6]);
            assert_eq!(fields[1].elements, [7, 8]);
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
}

/// A qualified action of a grouped tool called as a tool is told, in one sentence, how to call
/// it; under flat exposition the qualified name is a misspelt tool.
#[tokio::test(flavor = "current_thread")]
async fn an_action_called_as_a_tool_is_told_how_to_call_it() {
    use mcp_fusion::rmcp::ServiceExt;

    async fn refused(server: Server, name: &str) -> String {
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = Some(serde_json::Map::new());
        client.call_tool(params).await.unwrap_err().to_string()
    }
    for name in ["billing.get_invoice", "billing_get_invoice"] {
        let message = refused(billing(), name).await;
        let expected = format!(
            "unknown tool: {name}; call the tool \"billing\" with {{\"action\": \"get_invoice\"}} in its arguments."
        );
        assert!(message.contains(&expected), "{message}");
        assert!(message.contains("-32602"), "{message}");
    }
    let flat = Server::builder("billing-server", "1")
        .exposition(mcp_fusion::tools::Exposition::Flat)
        .tool(Billing::seeded())
        .build()
        .unwrap();
    let message = refused(flat, "billing.get_invoice").await;
    assert!(
        message
            .contains("unknown tool: billing.get_invoice; did you mean \"billing_get_invoice\"?"),
        "{message}"
    );
    // Any other name keeps the did-you-mean of the Close rule.
    let message = refused(billing(), "biling").await;
    assert!(
        message.contains("unknown tool: biling; did you mean \"billing\"?"),
        "{message}"
    );
}

struct Notes;

/// Notes.
#[tool]
impl Notes {
    /// Deletes a note.
    async fn delete(&self) -> Result<String, ToolError> {
        Ok("Deleted note_1".into())
    }

    /// Names the store.
    async fn store(&self) -> Result<&'static str, ToolError> {
        Ok("notes \"v2\"")
    }

    /// Says where notes go.
    async fn folder(&self) -> Result<Cow<'static, str>, ToolError> {
        Ok(Cow::Borrowed("inbox\nand archive"))
    }

    /// Counts the notes.
    async fn count(&self) -> Result<Vec<String>, ToolError> {
        Ok(vec!["note_1".into()])
    }
}

/// A successful string is sent as its text (rmcp's `#[tool]` does so too), not JSON-encoded;
/// anything else is its JSON.
#[tokio::test(flavor = "current_thread")]
async fn a_successful_string_is_sent_as_its_text() {
    let server = Server::builder("notes", "1").tool(Notes).build().unwrap();
    for (action, expected) in [
        ("delete", "Deleted note_1"),
        ("store", "notes \"v2\""),
        ("folder", "inbox\nand archive"),
        ("count", r#"["note_1"]"#),
    ] {
        let result = call(&server, "notes", json!({"action": action})).await;
        assert_eq!(result.is_error, Some(false));
        assert_eq!(text(&result), expected, "{action}");
    }
    // A declared string output: the text as it is, the structured content its JSON value.
    let flat = Server::builder("billing-server", "1")
        .exposition(mcp_fusion::tools::Exposition::Flat)
        .tool(Billing::seeded())
        .build()
        .unwrap();
    let export = call(&flat, "billing_export_invoices", json!({"format": "csv"})).await;
    assert!(
        text(&export).starts_with("id,customer_email,amount_cents,currency,status\ninv_2026_0001,"),
        "{}",
        text(&export)
    );
    assert_eq!(
        export.structured_content,
        Some(Value::String(text(&export).to_owned()))
    );
}

/// A `$ref` that is no JSON Pointer (`~` must be followed by `0` or `1`) is checked by the
/// validator but could not be described: the server is not built, and says where.
#[test]
fn a_reference_that_is_no_json_pointer_is_refused_when_the_server_is_built() {
    let schema = json!({
        "type": "object",
        "properties": {"at": {"$ref": "#/$defs/Coord~Inner"}},
        "$defs": {"Coord~Inner": {"type": "string", "pattern": "^[0-9]+,[0-9]+$"}}
    });
    let def = ToolDef::new("maps")
        .description("Maps.")
        .action(ActionDef::with_schema("pin", schema).description("Pins a place."))
        .build();
    let refused = Server::builder("t", "1")
        .tool(Defined(def))
        .build()
        .unwrap_err();
    assert_eq!(
        refused.problems(),
        [
            "tool \"maps\", action \"maps.pin\": the $ref \"#/$defs/Coord~Inner\" is no JSON Pointer into the schema ('~' must be followed by '0' or '1' ('~0' is '~', '~1' is '/')), so the field it describes would be checked but not described; write it as \"#/$defs/Name\", each '~' of the name written '~0' and each '/' written '~1'"
        ]
    );
    // Written as a pointer, the same schema serves.
    let schema = json!({
        "type": "object",
        "properties": {"at": {"$ref": "#/$defs/Coord~0Inner"}},
        "$defs": {"Coord~Inner": {"type": "string", "pattern": "^[0-9]+,[0-9]+$"}}
    });
    let def = ToolDef::new("maps")
        .description("Maps.")
        .action(ActionDef::with_schema("pin", schema).description("Pins a place."))
        .build();
    assert!(Server::builder("t", "1").tool(Defined(def)).build().is_ok());
}

/// The namespaces of ERRORS.md §11.7 (lowercase ASCII letters, digits and `-`, starting with a
/// letter, at most 32 characters: no `_`, so that a listed `{ns}_{name}` splits at its first
/// `_`) are the only ones a gateway is built with.
#[tokio::test(flavor = "current_thread")]
async fn namespaces_version_3_does_not_allow_are_refused_when_the_server_is_built() {
    use mcp_fusion::server::gateway::Upstream;

    let upstream = || Upstream::command("billing-server", ["--stdio"]);
    let long = "a".repeat(33);
    for refused in [
        "Books",
        "books_2",
        "2books",
        "",
        "b\u{f6}oks",
        "books.x",
        long.as_str(),
    ] {
        let problems = Server::builder("front-desk", "1")
            .mount(refused, upstream())
            .build()
            .unwrap_err();
        assert_eq!(
            problems.problems(),
            [format!(
                "mount \"{refused}\": a namespace is lowercase ASCII letters, digits and '-', starting with a letter, at most 32 characters"
            )],
            "{refused:?}"
        );
    }
    let longest = "a".repeat(32);
    for allowed in ["crm", "books-2", "x", longest.as_str()] {
        let built = Server::builder("front-desk", "1")
            .mount(allowed, upstream())
            .build();
        assert!(built.is_ok(), "{allowed:?}: {built:?}");
    }
}
