//! `#[tool]` behaviour through `Tool::call`: dispatch, missing or unknown action with a
//! suggestion, validation before decoding, errors of every kind, warnings, panics.

use mcp_fusion::client::parse_envelope;
use mcp_fusion::{Context, ErrorCode, Tool, ToolError, ToolErrors, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

struct Billing;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetInvoice {
    /// The invoice ID, such as `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[0-9]{4}_[0-9]{4}$"))]
    id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read by validation only
struct CreateInvoice {
    #[schemars(email)]
    customer_email: String,
    #[schemars(range(min = 1))]
    amount_cents: u64,
    #[schemars(length(min = 1, max = 50))]
    lines: Vec<Line>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read by validation only
struct Line {
    #[schemars(length(min = 1, max = 200))]
    description: String,
    #[schemars(range(min = 1))]
    quantity: u32,
}

#[derive(Serialize)]
struct Invoice {
    id: String,
    status: &'static str,
}

#[derive(Debug, ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with that ID", recovery = "List invoices first, then retry with a real ID",
                 actions(Billing::list_invoices), details(requestedId = id))]
    NotFound { id: String },
}

/// Invoices of the billing system.
#[tool(concurrency(max_active = 2, max_queued = 2))]
impl Billing {
    /// Lists invoices.
    #[action(read_only)]
    async fn list_invoices(&self) -> Result<Vec<Invoice>, ToolError> {
        Ok(vec![Invoice {
            id: "inv_2026_0001".into(),
            status: "open",
        }])
    }

    /// Gets one invoice by ID.
    #[action(read_only, idempotent)]
    async fn get_invoice(&self, args: GetInvoice) -> Result<Invoice, BillingError> {
        match args.id.as_str() {
            "inv_2026_0001" => Ok(Invoice {
                id: args.id,
                status: "open",
            }),
            _ => Err(BillingError::NotFound { id: args.id }),
        }
    }

    /// Creates an invoice.
    #[action(destructive)]
    async fn create_invoice(&self, args: CreateInvoice, f: Context) -> Result<Invoice, ToolError> {
        if args.amount_cents > 1_000_000 {
            return Err(f
                .error(
                    ErrorCode::custom("AMOUNT_TOO_LARGE").unwrap(),
                    "Amount too large.",
                )
                .critical());
        }
        if args.lines.len() > 10 {
            f.warn(f.error(
                ErrorCode::custom("MANY_LINES").unwrap(),
                "Large invoices print slowly.",
            ));
        }
        Ok(Invoice {
            id: "inv_2026_0042".into(),
            status: "draft",
        })
    }

    /// Voids an invoice.
    #[action(deprecated, replacement = cancel_invoice)]
    async fn void_invoice(&self, args: GetInvoice) -> Result<Invoice, ToolError> {
        Ok(Invoice {
            id: args.id,
            status: "void",
        })
    }

    /// Cancels an invoice.
    async fn cancel_invoice(&self, args: GetInvoice) -> Result<Invoice, std::io::Error> {
        Err(std::io::Error::other(format!(
            "postgres://admin:hunter2@db/{}",
            args.id
        )))
    }

    /// Exports invoices.
    async fn export(&self) -> Result<String, anyhow::Error> {
        panic!("the exporter crashed with secret token abc123")
    }
}

fn args(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

async fn call(value: Value) -> (bool, Vec<String>) {
    let result = Billing.call(args(value)).await;
    let json = serde_json::to_value(&result).unwrap();
    let texts = json["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect();
    (json["isError"].as_bool().unwrap(), texts)
}

#[tokio::test]
async fn routes_bare_and_qualified_names() {
    let (is_error, texts) = call(json!({"action": "get_invoice", "id": "inv_2026_0001"})).await;
    assert!(!is_error);
    assert_eq!(texts, [r#"{"id":"inv_2026_0001","status":"open"}"#]);
    let (is_error, _) = call(json!({"action": "billing.get_invoice", "id": "inv_2026_0001"})).await;
    assert!(!is_error);
    let (is_error, texts) = call(json!({"action": "list_invoices"})).await;
    assert!(!is_error, "{texts:?}");
}

#[tokio::test]
async fn unknown_and_missing_actions_list_every_action() {
    let (is_error, texts) = call(json!({"action": "get_invoise"})).await;
    assert!(is_error);
    let parsed = parse_envelope(&texts[0]);
    assert_eq!(parsed.code, "UNKNOWN_ACTION");
    assert_eq!(
        parsed.recovery.as_deref(),
        Some(
            r#"Did you mean "billing.get_invoice"? Choose one of the available actions and call the tool again."#
        )
    );
    assert_eq!(parsed.actions.len(), 6);
    let (_, texts) = call(json!({"id": "x"})).await;
    assert_eq!(parse_envelope(&texts[0]).code, "MISSING_DISCRIMINATOR");
}

#[tokio::test]
async fn arguments_are_validated_before_decoding_with_every_problem() {
    let (is_error, texts) = call(json!({
        "action": "create_invoice",
        "customer_email": "ada.example.com",
        "amount_cents": 0,
        "lines": [{"description": "", "quantity": 0}],
        "extra": true
    }))
    .await;
    assert!(is_error);
    assert_eq!(
        texts[0],
        "<validation_error action=\"billing.create_invoice\">\n\
         <field name=\"customer_email\">Invalid email format. You sent: 'ada.example.com'. Expected a valid email address.</field>\n\
         <field name=\"amount_cents\">Too small. You sent: 0. Expected a number >= 1.</field>\n\
         <field name=\"lines[0].description\">Too short. You sent: ''. Expected at least 1 character.</field>\n\
         <field name=\"lines[0].quantity\">Too small. You sent: 0. Expected a number >= 1.</field>\n\
         <field name=\"extra\">Unrecognized field. You sent: true. Remove it. Known fields: customer_email, amount_cents, lines.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         </validation_error>"
    );
}

#[tokio::test]
async fn domain_errors_travel_intact_with_typed_actions() {
    let (is_error, texts) = call(json!({"action": "get_invoice", "id": "inv_2026_9999"})).await;
    assert!(is_error);
    assert_eq!(
        texts[0],
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>No invoice with that ID</message>\n\
         <recovery>List invoices first, then retry with a real ID</recovery>\n\
         <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
         <details>\n  <detail key=\"requestedId\">inv_2026_9999</detail>\n</details>\n</tool_error>"
    );
}

#[tokio::test]
async fn context_errors_and_warnings() {
    let line = json!({"description": "x", "quantity": 1});
    let (is_error, texts) = call(json!({"action": "create_invoice", "customer_email": "a@b.co", "amount_cents": 2_000_000, "lines": [line]})).await;
    assert!(is_error);
    assert_eq!(
        parse_envelope(&texts[0]).severity,
        mcp_fusion::Severity::Critical
    );

    let lines: Vec<Value> = (0..11).map(|_| line.clone()).collect();
    let (is_error, texts) = call(json!({"action": "create_invoice", "customer_email": "a@b.co", "amount_cents": 5, "lines": lines})).await;
    assert!(!is_error);
    assert_eq!(texts.len(), 2);
    assert_eq!(parse_envelope(&texts[1]).code, "MANY_LINES");
    assert_eq!(
        parse_envelope(&texts[1]).severity,
        mcp_fusion::Severity::Warning
    );
}

#[tokio::test]
async fn deprecated_actions_work_and_warn() {
    let (is_error, texts) = call(json!({"action": "void_invoice", "id": "inv_2026_0001"})).await;
    assert!(!is_error);
    assert_eq!(texts.len(), 2);
    let warning = parse_envelope(&texts[1]);
    assert_eq!(warning.code, "DEPRECATED");
    assert_eq!(
        warning.recovery.as_deref(),
        Some("Use billing.cancel_invoice instead.")
    );
    assert_eq!(warning.actions, ["billing.cancel_invoice"]);
}

#[tokio::test]
async fn other_errors_and_panics_become_internal_errors_without_leaking() {
    for call_args in [
        json!({"action": "cancel_invoice", "id": "inv_2026_0001"}),
        json!({"action": "export"}),
    ] {
        let action = call_args["action"].as_str().unwrap().to_owned();
        let (is_error, texts) = call(call_args).await;
        assert!(is_error);
        let parsed = parse_envelope(&texts[0]);
        assert_eq!(parsed.code, "INTERNAL_ERROR");
        assert_eq!(
            parsed.message,
            format!("The action \"billing.{action}\" failed unexpectedly.")
        );
        assert!(parsed.details[0].1.starts_with("inc_"));
        assert!(
            !texts[0].contains("hunter2") && !texts[0].contains("abc123"),
            "{}",
            texts[0]
        );
    }
    // The tool keeps serving after a panic.
    let (is_error, _) = call(json!({"action": "list_invoices"})).await;
    assert!(!is_error);
}

#[test]
fn definition_schema_and_annotations() {
    let def = Billing.definition();
    assert_eq!(def.name(), "billing");
    assert_eq!(def.description(), Some("Invoices of the billing system."));
    assert_eq!(
        def.concurrency().map(|c| (c.max_active, c.max_queued)),
        Some((2, 2))
    );
    let schema = def.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["action"]));
    let names = json!([
        "list_invoices",
        "get_invoice",
        "create_invoice",
        "void_invoice",
        "cancel_invoice",
        "export"
    ]);
    assert_eq!(schema["properties"]["action"]["enum"], names);
    let id = &schema["properties"]["id"];
    assert_eq!(id["pattern"], "^inv_[0-9]{4}_[0-9]{4}$");
    assert_eq!(
        id["description"],
        "The invoice ID, such as `inv_2026_0001`. (For get_invoice, void_invoice, cancel_invoice; required by get_invoice, void_invoice, cancel_invoice.)"
    );
    assert_eq!(
        def.actions()[1].description(),
        Some("Gets one invoice by ID.")
    );
    assert_eq!(
        Billing::ACTIONS.list_invoices.as_str(),
        "billing.list_invoices"
    );
    let listed = def.to_rmcp();
    assert_eq!(listed.name, "billing");
}

/// Current weather for a city.
#[tool(read_only)]
async fn get_weather(args: City) -> Result<Weather, ToolError> {
    if args.city == "Atlantis" {
        return ToolError::new(ErrorCode::NOT_FOUND, "No such city.")
            .actions([GetWeatherTool::ACTIONS.get_weather])
            .into();
    }
    Ok(Weather { celsius: 21.5 })
}

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

#[derive(Serialize)]
struct Weather {
    celsius: f64,
}

#[tokio::test]
async fn a_single_action_tool_has_no_discriminator() {
    let result = GetWeatherTool.call(args(json!({"city": "Lyon"}))).await;
    assert!(!result.is_error());
    let result = GetWeatherTool.call(args(json!({"city": "Atlantis"}))).await;
    let text = serde_json::to_value(&result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(parse_envelope(&text).actions, ["get_weather"]);
    let result = GetWeatherTool.call(None).await;
    let text = serde_json::to_value(&result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with("<validation_error action=\"get_weather\">\n<field name=\"city\">Required field is missing."), "{text}");
    let def = GetWeatherTool.definition();
    assert_eq!(def.discriminator(), None);
    assert_eq!(def.input_schema()["required"], json!(["city"]));
    assert_eq!(
        def.to_rmcp().annotations.and_then(|a| a.read_only_hint),
        Some(true)
    );
}

#[tokio::test]
async fn removing_the_discriminator_keeps_the_order_keys_were_sent_in() {
    let (_, texts) =
        call(json!({"action": "get_invoice", "id": "inv_2026_0001", "zzz": 1, "yyy": 2})).await;
    let parsed = parse_envelope(&texts[0]);
    let names: Vec<&str> = parsed
        .fields
        .iter()
        .map(|field| field.path.as_str())
        .collect();
    assert_eq!(names, ["zzz", "yyy"]);
}

struct Invoices;

/// Invoices, behind OAuth scopes.
#[tool(scopes("invoices:read"))]
impl Invoices {
    /// Lists invoices.
    #[action(read_only)]
    async fn list(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }

    /// Voids an invoice.
    #[action(scopes("invoices:write", "audit:log"))]
    async fn void(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

/// Archives an invoice.
#[tool(scopes("invoices:write", "invoices:archive"))]
async fn archive_invoice() -> Result<String, ToolError> {
    Ok(String::new())
}

#[test]
fn scopes_of_the_tool_merge_into_each_actions_sorted() {
    let def = Invoices.definition();
    assert_eq!(def.actions()[0].scopes(), ["invoices:read"]);
    assert_eq!(
        def.actions()[1].scopes(),
        ["audit:log", "invoices:read", "invoices:write"]
    );
    let def = ArchiveInvoiceTool.definition();
    assert_eq!(
        def.actions()[0].scopes(),
        ["invoices:archive", "invoices:write"]
    );
}
