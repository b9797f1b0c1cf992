//! The client the official MCP conformance suite runs (`conformance client --command ...`):
//! each scenario, by its name, through the typed client (`mcp_fusion::client`).
//!
//! `conformance_client <url>`, with the scenario in `MCP_CONFORMANCE_SCENARIO`, the revision
//! whose lifecycle to speak in `MCP_CONFORMANCE_PROTOCOL_VERSION` (2025-11-25 when unset), and
//! what some scenarios give (the calls to make) as JSON in `MCP_CONFORMANCE_CONTEXT`. It exits
//! 0 when the scenario ran to its end, 1 with the reason on stderr otherwise; what the client
//! did right is for the suite to judge. `cargo xtask conformance` runs it for every client
//! scenario of both requirement sets.

pub mod auth;

use std::error::Error;

use mcp_fusion::client::{Answers, Client, Era};
use mcp_fusion::rmcp::model::{
    CallToolRequestParams, ElicitResult, ElicitationAction, GetPromptRequestParams,
    ReadResourceRequestParams, Tool,
};
use serde_json::{Map, Value, json};

type Failure = Box<dyn Error + Send + Sync>;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_client <url> (the scenario in MCP_CONFORMANCE_SCENARIO)");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let outcome = match run(&scenario, &url).await {
        Ok(()) => return,
        Err(e) => e,
    };
    eprintln!("conformance_client: {scenario}: {outcome}");
    let mut source = outcome.source();
    while let Some(cause) = source {
        eprintln!("  caused by: {cause}");
        source = cause.source();
    }
    std::process::exit(1);
}

/// Runs `scenario` against the mock server at `url`.
async fn run(scenario: &str, url: &str) -> Result<(), Failure> {
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => Some(serde_json::from_str::<Value>(&text)?),
        Err(_) => None,
    };
    if scenario.starts_with("auth/") {
        return auth::run(scenario, url, context).await;
    }
    let revision = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .unwrap_or_else(|_| "2025-11-25".to_owned());
    let era = Era::of_revision(&revision)
        .ok_or_else(|| format!("MCP_CONFORMANCE_PROTOCOL_VERSION={revision:?} is no revision"))?;
    let answers = Answers::new()
        .era(era)
        .named("mcp-fusion-conformance-client", env!("CARGO_PKG_VERSION"))
        // The user accepts each form as the client shows it: filled with the schema's
        // defaults (the client adds them to an accepted answer).
        .elicitation(|_form| async { ElicitResult::new(ElicitationAction::Accept) });
    let (client, connection) = answers.connect_http(url).await?;
    let ran = scenario_steps(scenario, &client, context.as_ref()).await;
    // Closing the connection ends the session (a DELETE) on the stateful wire.
    let closed = connection.cancel().await;
    ran?;
    closed?;
    Ok(())
}

/// What each scenario asks the client to do, once connected.
async fn scenario_steps(
    scenario: &str,
    client: &Client,
    context: Option<&Value>,
) -> Result<(), Failure> {
    // What the server offers first, as a client does: the listing says which arguments go in
    // headers, and drops the tools whose header annotations are invalid. (On the stateful
    // wire it also lets the session's own stream open before a call's.)
    let tools = client.list_tools().await?;
    match scenario {
        // The lifecycle alone (and the version's retry, for request-metadata).
        "initialize" | "request-metadata" => {}
        "tools_call" => {
            call(client, "add_numbers", json!({"a": 5, "b": 3})).await?;
        }
        "elicitation-sep1034-client-defaults" => {
            call(client, "test_client_elicitation_defaults", json!({})).await?;
        }
        "sse-retry" => {
            call(client, "test_reconnection", json!({})).await?;
        }
        "sep-2322-client-request-state" => {
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                call(client, tool, json!({})).await?;
            }
        }
        // Every method once, each with its headers.
        "http-standard-headers" => {
            for tool in &tools {
                let arguments = sample_arguments(tool);
                call(client, &tool.name, Value::Object(arguments)).await?;
            }
            let peer = client.peer();
            for resource in peer.list_all_resources().await? {
                let read = ReadResourceRequestParams::new(resource.uri.clone());
                peer.read_resource(read).await?;
            }
            for prompt in peer.list_all_prompts().await? {
                let get = GetPromptRequestParams::new(prompt.name.clone());
                peer.get_prompt(get).await?;
            }
        }
        // The calls the context names, after the listing that tells which arguments go
        // in headers.
        "http-custom-headers" => {
            let calls = context
                .and_then(|c| c.get("toolCalls"))
                .and_then(Value::as_array)
                .ok_or("the context names no toolCalls")?;
            for made in calls {
                let name = made["name"]
                    .as_str()
                    .ok_or("a tool call without its name")?;
                call(client, name, made["arguments"].clone()).await?;
            }
        }
        // Each tool the listing keeps (a tool whose header annotations are invalid is not).
        "http-invalid-tool-headers" => {
            for tool in &tools {
                let arguments = sample_arguments(tool);
                call(client, &tool.name, Value::Object(arguments)).await?;
            }
        }
        // The schema is listed as it came: its `$ref` to another document is kept, and is
        // nobody's to fetch (the server serves no call of it).
        "json-schema-ref-no-deref" => {
            let lookup = tools.iter().find(|t| t.name == "lookup_user");
            let lookup = lookup.ok_or("the server lists no lookup_user")?;
            let profile = &lookup.input_schema["properties"]["profile"]["$ref"];
            if !profile.as_str().is_some_and(|r| r.starts_with("http")) {
                return Err(format!("lookup_user's profile $ref came as {profile}").into());
            }
        }
        "json-schema-2020-12-preservation" => {
            let focal = (tools.iter())
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("the server lists no json_schema_2020_12_tool")?;
            let schema = Value::Object((*focal.input_schema).clone());
            call(client, "json_schema_echo", json!({"schema": schema})).await?;
        }
        other => return Err(format!("no scenario is named {other:?}").into()),
    }
    Ok(())
}

/// Calls `name` with `arguments` as they are, answering what it asks.
async fn call(client: &Client, name: &str, arguments: Value) -> Result<(), Failure> {
    let Value::Object(arguments) = arguments else {
        return Err(format!("the arguments of {name} are no object").into());
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    client.call_tool(params).await?;
    Ok(())
}

/// Arguments a tool's schema accepts: a value of its type for each required property.
fn sample_arguments(tool: &Tool) -> Map<String, Value> {
    let schema = &tool.input_schema;
    let required = schema.get("required").and_then(Value::as_array);
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut arguments = Map::new();
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("us-west1"),
        };
        arguments.insert(name.to_owned(), value);
    }
    arguments
}
