//! The `everything` example over stdio, driven by a real rmcp client: its own handler's
//! prompts, resources (a template, a subscription told of changes), completion and log level
//! served beside its `#[tool]` tools through the same transport. Over streamable HTTP at MCP
//! 2026-07-28, the conformance suite's input-required fixtures, round by round as the suite
//! sends them. The conformance suite itself (`cargo xtask conformance`) drives it over
//! streamable HTTP.

#![allow(deprecated)] // Logging and `resources/subscribe` are legacy in rmcp; still served.

use std::sync::{Arc, Mutex};

use mcp_fusion::client::parse_envelope;
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::{NotificationContext, RunningService, ServiceError};
use mcp_fusion::rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
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
            "test_prompt_with_image",
            "test_input_required_result_prompt"
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
    // Subscriptions are the server's: any URI may be subscribed to, and is told of what the
    // server's code says changed (nothing, for a resource that does not exist).

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

/// The example on streamable HTTP, and where it listens (`127.0.0.1:PORT`).
async fn everything_over_http() -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child =
        tokio::process::Command::new(mcp_fusion_drivers::artifacts::example("everything"))
            .args(["--http", "127.0.0.1:0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
    let mut log = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = log.next_line().await.unwrap().expect("it listens");
        let listening = (line.strip_prefix("everything: streamable HTTP on http://"))
            .and_then(|rest| rest.strip_suffix("/mcp"));
        if let Some(addr) = listening {
            // Its later log is not read: it goes nowhere once the pipe is dropped.
            return (child, addr.to_owned());
        }
    }
}

/// What a client that can be asked anything declares.
fn can_be_asked() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// A 2026-07-28 request as the conformance suite sends it (the protocol version, method and
/// name in its headers and its `_meta`), retried with `retry`'s answers and state; the result.
async fn request_2026(
    addr: &str,
    method: &str,
    name: &str,
    capabilities: &Value,
    retry: Option<(Value, &Value)>,
) -> Value {
    let mut params = json!({"name": name, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }});
    if method == "tools/call" {
        params["arguments"] = json!({});
    }
    if let Some((answers, state)) = retry {
        params["inputResponses"] = answers;
        if !state.is_null() {
            params["requestState"] = state.clone();
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("mcp-name", name),
    ];
    let body = body.to_string();
    let reply = mcp_fusion_drivers::raw_http::post(addr, &headers, body.as_bytes()).await;
    let answer = (reply.messages().into_iter())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer: {} {}", reply.status, reply.body));
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

/// The keys of a round's `inputRequests`, each with the method it asks.
fn asked(round: &Value) -> Vec<(String, String)> {
    assert_eq!(round["resultType"], "input_required", "{round}");
    let requests = round["inputRequests"].as_object().expect("inputRequests");
    (requests.iter())
        .map(|(key, request)| (key.clone(), request["method"].as_str().unwrap().to_owned()))
        .collect()
}

fn accepted(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn completed_text(result: &Value) -> &str {
    assert_ne!(result["resultType"], "input_required", "{result}");
    result["content"][0]["text"].as_str().expect("a text block")
}

/// At 2026-07-28 the conformance suite's input-required fixtures ask in rounds, under the keys
/// the suite expects, and complete once the retried request carries the answers.
#[tokio::test(flavor = "current_thread")]
async fn input_required_rounds_over_http_at_2026_07_28() {
    let (_server, addr) = everything_over_http().await;
    let all = can_be_asked();
    let call = |name: &'static str, caps: Value, retry: Option<(Value, Value)>| {
        let addr = addr.clone();
        async move {
            let retry = retry
                .as_ref()
                .map(|(answers, state)| (answers.clone(), state));
            request_2026(&addr, "tools/call", name, &caps, retry).await
        }
    };

    // One elicitation round, under `user_name`, then its completion.
    let elicitation = "test_input_required_result_elicitation";
    let first = call(elicitation, all.clone(), None).await;
    let user_name = ("user_name".to_owned(), "elicitation/create".to_owned());
    assert_eq!(asked(&first), [user_name]);
    assert_eq!(
        first["inputRequests"]["user_name"]["params"]["message"],
        "What is your name?"
    );
    let state = first["requestState"].clone();
    assert!(state.is_string(), "{first}");
    let answers = json!({"user_name": accepted(json!({"name": "Alice"}))});
    let done = call(elicitation, all.clone(), Some((answers, state))).await;
    assert_eq!(completed_text(&done), "Hello, Alice!");

    // Three asks in one round, then the answers to all of them.
    let multiple = "test_input_required_result_multiple_inputs";
    let first = call(multiple, all.clone(), None).await;
    let methods = ["roots/list", "sampling/createMessage", "elicitation/create"];
    let keys = ["client_roots", "greeting", "user_name"];
    let expected: Vec<(String, String)> = (keys.iter().zip(methods))
        .map(|(k, m)| ((*k).to_owned(), m.to_owned()))
        .collect();
    assert_eq!(asked(&first), expected);
    let answers = json!({
        "user_name": accepted(json!({"name": "Alice"})),
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi!"},
                     "model": "m", "stopReason": "endTurn"},
        "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
    });
    let state = first["requestState"].clone();
    let done = call(multiple, all.clone(), Some((answers, state))).await;
    assert_eq!(
        completed_text(&done),
        "Hello, Alice! The model's greeting: \"Hi!\"; the client's roots: 1."
    );

    // Two rounds, the second with a state of its own, then the answer.
    let rounds = "test_input_required_result_multi_round";
    let first = call(rounds, all.clone(), None).await;
    assert_eq!(asked(&first)[0].0, "step1");
    let answers = json!({"step1": accepted(json!({"name": "Alice"}))});
    let second = call(
        rounds,
        all.clone(),
        Some((answers, first["requestState"].clone())),
    )
    .await;
    assert_eq!(asked(&second)[0].0, "step2");
    assert_ne!(second["requestState"], first["requestState"]);
    let answers = json!({"step2": accepted(json!({"color": "blue"}))});
    let done = call(
        rounds,
        all.clone(),
        Some((answers, second["requestState"].clone())),
    )
    .await;
    assert_eq!(completed_text(&done), "Alice likes blue.");

    // A client that declared sampling alone is asked no form.
    let sampling_only = json!({"sampling": {}});
    let first = call(
        "test_input_required_result_capabilities",
        sampling_only,
        None,
    )
    .await;
    let word = ("word".to_owned(), "sampling/createMessage".to_owned());
    assert_eq!(asked(&first), [word]);

    // The prompt of the example's own handler asks for its context, then is given.
    let prompt = "test_input_required_result_prompt";
    let first = request_2026(&addr, "prompts/get", prompt, &all, None).await;
    let user_context = ("user_context".to_owned(), "elicitation/create".to_owned());
    assert_eq!(asked(&first), [user_context]);
    let answers = json!({"user_context": accepted(json!({"context": "test context"}))});
    let retry = Some((answers, &Value::Null));
    let done = request_2026(&addr, "prompts/get", prompt, &all, retry).await;
    let said = done["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(said.contains("\"test context\""), "{done}");
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
