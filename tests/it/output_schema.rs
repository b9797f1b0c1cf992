//! Tool metadata hosts read: titles, and the output schema of an action that declares its
//! success type, with `structuredContent` on its successful results only: never on an error,
//! never on a result that is only a warning, never from a grouped tool (one tool, many output
//! types). Over stdio against the billing server started `--flat`, and in process.

use mcp_fusion::Server;
use mcp_fusion::client::{Client, Connection};
use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult};
use mcp_fusion::tools::Exposition;
use mcp_fusion::validate::Schema;
use mcp_fusion::{Context, ErrorCode, Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

async fn billing(flags: &[&str]) -> (Client, Connection) {
    let mut command = tokio::process::Command::new(mcp_fusion_drivers::artifacts::billing());
    command.args(flags).stderr(std::process::Stdio::null());
    let (client, connection) = Client::spawn(command)
        .await
        .expect("the billing server starts");
    (client, connection)
}

/// Calls an MCP tool by its own name (a flat action's).
async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    client.peer().call_tool(params).await.expect("answered")
}

#[tokio::test(flavor = "current_thread")]
async fn flat_billing_lists_titles_and_output_schemas_and_answers_with_structured_content() {
    let (client, _connection) = billing(&["--flat"]).await;
    let tools = client.list_tools().await.expect("tools/list");
    let get = tools
        .iter()
        .find(|t| t.name == "billing_get_invoice")
        .expect("the flat get_invoice");
    assert_eq!(get.title.as_deref(), Some("Get an invoice"));
    let output = Value::Object((**get.output_schema.as_ref().expect("an output schema")).clone());
    assert_eq!(output["type"], "object");
    assert!(
        output["required"]
            .as_array()
            .unwrap()
            .contains(&json!("status"))
    );
    // The typed client speaks 2025-11-25 (the newest version with `initialize`): rmcp keeps
    // only object output schemas and object structured content for such a peer (SEP-2106), so
    // the list and the export (an array, a string) answer with their text alone.
    for tool in &tools {
        assert!(tool.title.is_some(), "{} has a title", tool.name);
        let object = !matches!(
            tool.name.as_ref(),
            "billing_list_invoices" | "billing_export_invoices"
        );
        assert_eq!(tool.output_schema.is_some(), object, "{}", tool.name);
    }

    // A success: the value as text and as structuredContent, which the schema accepts.
    let found = call(
        &client,
        "billing_get_invoice",
        json!({"id": "inv_2026_0001"}),
    )
    .await;
    assert_eq!(found.is_error, Some(false));
    let structured = found.structured_content.clone().expect("structuredContent");
    let text = found.content[0].as_text().expect("text").text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
    let schema = Schema::new(&output).expect("the output schema compiles");
    schema
        .validate("billing.get_invoice", &structured)
        .expect("the structured content matches the listed output schema");
    assert!(found.meta.is_none(), "no envelope, no mirror");

    // The typed client reads structuredContent, or the text when there is none.
    let strict = client.clone();
    let paid: Value = strict
        .call_as("billing_pay_invoice", json!({"id": "inv_2026_0002"}))
        .await
        .expect("an invoice");
    assert_eq!(paid["status"], "paid");
    let listed = call(&client, "billing_list_invoices", json!({"limit": 1})).await;
    assert!(listed.structured_content.is_none());
    let invoices: Value = strict
        .call_as("billing_list_invoices", json!({"limit": 1}))
        .await
        .expect("a list");
    assert_eq!(invoices.as_array().map(Vec::len), Some(1));

    // An error carries its envelope and mirror, never structuredContent.
    let missing = call(
        &client,
        "billing_get_invoice",
        json!({"id": "inv_2026_9999"}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true));
    assert!(missing.structured_content.is_none());
    let invalid = call(&client, "billing_get_invoice", json!({"id": 7})).await;
    assert!(invalid.structured_content.is_none());

    // Data with a warning keeps its structured content; the warning has its mirror.
    let voided = call(
        &client,
        "billing_void_invoice",
        json!({"id": "inv_2026_0005"}),
    )
    .await;
    assert_eq!(voided.is_error, Some(false));
    assert!(voided.structured_content.is_some());
    assert_eq!(mcp_fusion::client::warnings(&voided)[0].code, "DEPRECATED");
}

#[tokio::test(flavor = "current_thread")]
async fn grouped_billing_lists_no_output_schema_and_sends_no_structured_content() {
    let (client, _connection) = billing(&[]).await;
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].title.as_deref(), Some("Billing"));
    assert!(tools[0].output_schema.is_none());
    let found = client
        .call("billing.get_invoice", json!({"id": "inv_2026_0001"}))
        .await
        .expect("answered");
    assert_eq!(found.is_error, Some(false));
    assert!(found.structured_content.is_none());
}

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

#[derive(Serialize, JsonSchema)]
struct Weather {
    city: String,
    celsius: f64,
    /// Only when the station reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    wind_kmh: Option<f64>,
}

/// The weather in a city.
#[tool(title = "Weather", output_schema)]
async fn weather(args: City, f: Context) -> Result<Weather, ToolError> {
    match args.city.as_str() {
        "Lyon" => Ok(Weather {
            city: args.city,
            celsius: 21.5,
            wind_kmh: None,
        }),
        "Old" => {
            // A result that is only a warning: no data, so no structured content.
            Err(f
                .error(ErrorCode::DEPRECATED, "This station closed.")
                .warning())
        }
        _ => Err(ToolError::new(ErrorCode::NOT_FOUND, "No station there.")),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_single_action_tool_lists_its_output_as_it_serializes() {
    let listed = WeatherTool.definition().to_rmcp();
    assert_eq!(listed.title.as_deref(), Some("Weather"));
    let output = Value::Object((**listed.output_schema.as_ref().expect("listed")).clone());
    // The schema of the serialized form: a skipped `None` is not required.
    assert_eq!(output["required"], json!(["city", "celsius"]));

    let ok = WeatherTool
        .call(json!({"city": "Lyon"}).as_object().cloned())
        .await
        .into_result();
    assert_eq!(
        ok.structured_content,
        Some(json!({"city": "Lyon", "celsius": 21.5}))
    );
    Schema::new(&output)
        .unwrap()
        .validate("weather", ok.structured_content.as_ref().unwrap())
        .expect("matches");

    let warned = WeatherTool
        .call(json!({"city": "Old"}).as_object().cloned())
        .await
        .into_result();
    assert_eq!(warned.is_error, Some(false));
    assert!(warned.structured_content.is_none(), "a warning-only result");
    let failed = WeatherTool
        .call(json!({"city": "Atlantis"}).as_object().cloned())
        .await
        .into_result();
    assert!(failed.structured_content.is_none());

    // Served, the same.
    let server = Server::builder("w", "1")
        .exposition(Exposition::Flat)
        .tool(WeatherTool)
        .build()
        .unwrap();
    let mut params = CallToolRequestParams::new("weather");
    params.arguments = json!({"city": "Lyon"}).as_object().cloned();
    let served = server.call(params).await.expect("the tool exists");
    assert!(served.structured_content.is_some());
}
