//! The `everything` example over stdio, driven by a real rmcp client: its own handler's
//! prompts, resources (a template, a subscription told of changes), completion and log level
//! served beside its `#[tool]` tools through the same transport. The conformance suite
//! (`cargo xtask conformance`) drives it over streamable HTTP.

#![allow(deprecated)] // Logging and `resources/subscribe` are legacy in rmcp; still served.

use std::sync::{Arc, Mutex};

use mcp_fusion::client::parse_envelope;
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::{NotificationContext, RunningService, ServiceError};
use mcp_fusion::rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use tokio::sync::mpsc;

/// A client that passes on the resources it is told changed, and keeps its progress reports.
#[derive(Clone)]
struct Watcher {
    updated: mpsc::UnboundedSender<String>,
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for Watcher {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updated.send(params.uri);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.progress);
    }
}

async fn everything() -> (
    RunningService<RoleClient, Watcher>,
    Watcher,
    mpsc::UnboundedReceiver<String>,
) {
    let mut command =
        tokio::process::Command::new(mcp_fusion_drivers::artifacts::example("everything"));
    // The watched resource changes every 50 ms.
    command
        .args(["--update-every", "0.05"])
        .stderr(std::process::Stdio::null());
    let transport = mcp_fusion::rmcp::transport::TokioChildProcess::new(command).unwrap();
    let (updated, updates) = mpsc::unbounded_channel();
    let watcher = Watcher {
        updated,
        progress: Arc::default(),
    };
    let client = watcher.clone().serve(transport).await.expect("it starts");
    (client, watcher, updates)
}

fn error_code(error: ServiceError) -> ErrorCode {
    match error {
        ServiceError::McpError(error) => error.code,
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

fn text(content: &ContentBlock) -> &str {
    &content.as_text().expect("a text block").text
}

#[tokio::test(flavor = "current_thread")]
async fn prompts_resources_completion_and_tools_over_stdio() {
    let (client, watcher, mut updates) = everything().await;
    let info = client.peer_info().expect("initialized");
    let capabilities = &info.capabilities;
    assert!(capabilities.tools.is_some() && capabilities.prompts.is_some());
    assert!(capabilities.completions.is_some() && capabilities.logging.is_some());
    let resources = capabilities.resources.as_ref().expect("resources");
    assert_eq!(resources.subscribe, Some(true));

    // Prompts.
    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image"
        ]
    );
    let arguments = json!({"arg1": "first", "arg2": "second"});
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("test_prompt_with_arguments")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let said = text(&prompt.messages[0].content);
    assert!(
        said.contains("\"first\"") && said.contains("\"second\""),
        "{said}"
    );
    let missing = client
        .get_prompt(GetPromptRequestParams::new("test_prompt_with_arguments"))
        .await
        .unwrap_err();
    assert_eq!(error_code(missing), ErrorCode::INVALID_PARAMS);

    // Resources, and the template.
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(listed.len(), 3);
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://template/{id}/data");
    let read = |uri: &str| client.read_resource(ReadResourceRequestParams::new(uri));
    let item = read("test://template/123/data").await.unwrap();
    let ResourceContents::TextResourceContents { text: data, .. } = &item.contents[0] else {
        panic!("a text resource: {item:?}");
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(data).unwrap()["id"],
        "123"
    );
    let binary = read("test://static-binary").await.unwrap();
    assert!(matches!(
        &binary.contents[0],
        ResourceContents::BlobResourceContents { blob, .. } if !blob.is_empty()
    ));
    let nowhere = read("test://template/../data").await.unwrap_err();
    assert_eq!(error_code(nowhere), ErrorCode::RESOURCE_NOT_FOUND);

    // A subscription is told of the watched resource's changes.
    client
        .subscribe(SubscribeRequestParams::new("test://watched-resource"))
        .await
        .unwrap();
    assert_eq!(updates.recv().await.unwrap(), "test://watched-resource");
    client
        .unsubscribe(UnsubscribeRequestParams::new("test://watched-resource"))
        .await
        .unwrap();
    let unknown = client
        .subscribe(SubscribeRequestParams::new("test://nothing"))
        .await
        .unwrap_err();
    assert_eq!(error_code(unknown), ErrorCode::RESOURCE_NOT_FOUND);

    // Completion, of a prompt's argument and of the template's.
    let values = client
        .complete_prompt_simple("test_prompt_with_arguments", "arg1", "testValue")
        .await
        .unwrap();
    assert_eq!(values, ["testValue1", "testValue2", "testValue3"]);
    let ids = client
        .complete_resource_simple("test://template/{id}/data", "id", "4")
        .await
        .unwrap();
    assert_eq!(ids, ["456"]);
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();

    // The tools, beside them: progress reported, log messages sent at the level set, and a
    // client that declared no sampling is not asked.
    let mut call = CallToolRequestParams::new("test_tool_with_progress");
    call.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        NumberOrString::Number(1),
    )));
    let done = client.call_tool(call).await.unwrap();
    assert_eq!(done.is_error, Some(false));
    assert_eq!(*watcher.progress.lock().unwrap(), [0.0, 50.0, 100.0]);
    let mut sampling = CallToolRequestParams::new("test_sampling");
    sampling.arguments = json!({"prompt": "Hello?"}).as_object().cloned();
    let refused = client.call_tool(sampling).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        parse_envelope(text(&refused.content[0])).code,
        "CLIENT_UNSUPPORTED"
    );
    let logged = client
        .call_tool(CallToolRequestParams::new("test_tool_with_logging"))
        .await
        .unwrap();
    assert_eq!(text(&logged.content[0]), "Done: 3 log messages sent.");
}

/// The JSON Schema 2020-12 tool lists the schema the conformance suite declares for it, every
/// keyword kept (SEP-1613, issue 49), and the server enforces each.
#[tokio::test(flavor = "current_thread")]
async fn the_json_schema_2020_12_tool_lists_and_enforces_the_suites_schema() {
    let (client, ..) = everything().await;
    let tools = client.list_all_tools().await.unwrap();
    let tool = (tools.iter())
        .find(|t| t.name == "json_schema_2020_12_tool")
        .expect("listed");
    assert_eq!(
        serde_json::Value::Object(tool.input_schema.as_ref().clone()),
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
    );
    let mut call = CallToolRequestParams::new("json_schema_2020_12_tool");
    call.arguments = json!({"contactMethod": "phone", "email": "ann@example.com"})
        .as_object()
        .cloned();
    let refused = client.call_tool(call.clone()).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused.content[0]).contains(
            "<field name=\"phone\">Required field is missing. You sent: (missing). Expected a string.</field>"
        ),
        "{}",
        text(&refused.content[0])
    );
    call.arguments =
        json!({"contactMethod": "phone", "phone": "555-0100", "address": {"city": "Oslo"}})
            .as_object()
            .cloned();
    let done = client.call_tool(call).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done.content[0]));
}
