//! The typed client as the official conformance suite's client scenarios hold it, against our
//! own server behind a front that records every request (and, where a case needs it, refuses
//! the first, or alters an answer): the 2026-07-28 lifecycle (`server/discover` retried at a
//! supported version after -32022, with a new id; the `MCP-Protocol-Version` header equal to
//! each request's `_meta`; `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` in Base64 where unsafe), its
//! rounds (`requestState` echoed exactly, left out when none came, a new id each round, nothing
//! carried to another call), a form's defaults in both eras, and a tool whose header
//! annotations are invalid never listed.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mcp_fusion::client::{Answers, Client, Era};
use mcp_fusion::rmcp::model::{
    CallToolRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
};
use mcp_fusion::tools::ElicitForm;
use mcp_fusion::{Context, Server, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Where to deploy.
#[derive(Deserialize, JsonSchema)]
struct Deploy {
    /// The region, as the proxy routes on it.
    region: String,
}

/// Deploys to a region: the region is mirrored in `Mcp-Param-Region`.
#[tool(header(region = "Region"))]
async fn deploy(args: Deploy) -> Result<String, ToolError> {
    Ok(format!("deployed to [{}]", args.region))
}

/// The form `greet` shows: every field has its default.
#[derive(Deserialize)]
struct Greeting {
    name: String,
    times: u32,
}

impl ElicitForm for Greeting {
    fn schema() -> ElicitationSchema {
        serde_json::from_value(json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "times": {"type": "integer", "default": 2},
        }}))
        .expect("a form of two fields")
    }
}

/// Greets whoever the form names, as many times as it says.
#[tool]
async fn greet(f: Context) -> Result<String, ToolError> {
    let form = f.elicit::<Greeting>("Who?").await?.accepted()?;
    Ok(vec![format!("Hello, {}", form.name); form.times as usize].join("; "))
}

/// What the front saw of one request: its HTTP method, headers and JSON body (`Null` for a
/// GET), and the JSON-RPC message answering it (`Null` when none came back whole).
#[derive(Debug, Clone)]
struct Seen {
    headers: HeaderMap,
    body: Value,
    answer: Value,
}

impl Seen {
    fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What the front does besides recording (and giving each 2026-07-28 answer as JSON).
#[derive(Clone, Copy, PartialEq)]
enum Front {
    /// Passes everything through.
    Records,
    /// Refuses the first POST with 400 and -32022, as a server of another version would.
    RefusesTheFirst,
    /// Takes `requestState` out of every `input_required` answer.
    DropsStates,
    /// Adds a tool whose header annotation is empty to every `tools/list` answer.
    AddsAnInvalidTool,
}

#[derive(Clone)]
struct Recorder {
    front: Front,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// The JSON-RPC message of a reply body: the body itself, or the last `data:` of an SSE stream
/// that carries a message.
fn message_of(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(message) = serde_json::from_str(&text) {
        return message;
    }
    (text.lines())
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .rfind(|message| message.get("result").is_some() || message.get("error").is_some())
        .unwrap_or(Value::Null)
}

async fn record(State(recorder): State<Recorder>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let first = recorder.seen.lock().unwrap().is_empty();
    let mut seen = Seen {
        headers: parts.headers.clone(),
        body: body.clone(),
        answer: Value::Null,
    };
    if first && recorder.front == Front::RefusesTheFirst {
        let refusal = json!({"jsonrpc": "2.0", "id": body["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"},
        }});
        seen.answer = refusal.clone();
        recorder.seen.lock().unwrap().push(seen);
        let headers = [("content-type", "application/json")];
        return (StatusCode::BAD_REQUEST, headers, refusal.to_string()).into_response();
    }
    let request = Request::from_parts(parts, Body::from(bytes));
    let reply = next.run(request).await;
    // A stream of the stateful era (a GET's, or a call's that asks the client something on
    // the way) is the client's to read as it comes: only its request is recorded.
    let stateful = seen.header("mcp-protocol-version") != Some("2026-07-28");
    let streams = (reply.headers().get("content-type"))
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
    if body.is_null() || (stateful && streams) {
        recorder.seen.lock().unwrap().push(seen);
        return reply;
    }
    let (mut parts, reply_body) = reply.into_parts();
    let bytes = axum::body::to_bytes(reply_body, 1 << 20).await.unwrap();
    let mut answer = message_of(&bytes);
    let altered = match recorder.front {
        Front::DropsStates if answer["result"]["resultType"] == "input_required" => {
            answer["result"]
                .as_object_mut()
                .unwrap()
                .remove("requestState");
            true
        }
        Front::AddsAnInvalidTool if answer["result"]["tools"].is_array() => {
            let invalid = json!({"name": "invalid_empty_header", "inputSchema": {
                "type": "object",
                "properties": {"value": {"type": "string", "x-mcp-header": ""}},
            }});
            answer["result"]["tools"]
                .as_array_mut()
                .unwrap()
                .push(invalid);
            true
        }
        _ => false,
    };
    seen.answer = answer.clone();
    recorder.seen.lock().unwrap().push(seen);
    // A 2026-07-28 answer goes back as JSON even when the server streamed it: rmcp 3.11's
    // transport reads the tools of a `tools/list` answered on a stream it sees end first
    // without keeping their header annotations (`drain_queued_stream_messages` skips
    // `cache_tools_from_response`), and would then send a call without its `Mcp-Param-*`.
    if !altered && (answer.is_null() || !streams) {
        return Response::from_parts(parts, Body::from(bytes));
    }
    parts.headers.remove("content-length");
    parts.headers.insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(answer.to_string()))
}

/// Our server (`deploy` and `greet`) behind a `front`, its URL and what the front sees.
async fn fronted(front: Front) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let server = Server::builder("eras", "1")
        .tool(DeployTool)
        .tool(GreetTool)
        .build()
        .expect("the server builds");
    let endpoint = server.http_service(mcp_fusion::server::HttpOptions::default());
    let recorder = Recorder {
        front,
        seen: Arc::default(),
    };
    let seen = recorder.seen.clone();
    let app = axum::Router::new()
        .route_service("/mcp", endpoint)
        .layer(axum::middleware::from_fn_with_state(recorder, record));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// A client that accepts every form as it is shown (its defaults), in `era`.
async fn connect(url: &str, era: Era) -> (Client, mcp_fusion::client::Connection) {
    let answers = Answers::new()
        .era(era)
        .named("eras-test", "1.2.3")
        .elicitation(|_form| async { ElicitResult::new(ElicitationAction::Accept) });
    answers.connect_http(url).await.expect("connected")
}

fn text(result: &mcp_fusion::rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().expect("a text").text.clone()
}

fn posts(seen: &Mutex<Vec<Seen>>) -> Vec<Seen> {
    let seen = seen.lock().unwrap();
    seen.iter().filter(|s| !s.body.is_null()).cloned().collect()
}

#[tokio::test(flavor = "current_thread")]
async fn a_refused_version_is_asked_again_and_every_request_names_its_version_and_method() {
    let (url, seen) = fronted(Front::RefusesTheFirst).await;
    let (client, _connection) = connect(&url, Era::Discover).await;
    let tools = client.list_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "deploy"), "{tools:?}");
    for region in ["eu-west-1", " padded ", "Zürich"] {
        let call = CallToolRequestParams::new("deploy")
            .with_arguments(json!({"region": region}).as_object().unwrap().clone());
        let result = client.call_tool(call).await.expect("tools/call");
        assert_eq!(text(&result), format!("deployed to [{region}]"));
    }

    let posts = posts(&seen);
    // Discovery, refused, then asked again with a new id at the version the server named.
    let (refused, retried) = (&posts[0], &posts[1]);
    assert_eq!(
        (refused.method(), retried.method()),
        ("server/discover", "server/discover")
    );
    assert_eq!(refused.answer["error"]["code"], -32022);
    assert_ne!(refused.body["id"], retried.body["id"]);
    assert!(
        retried.answer["result"]["supportedVersions"].is_array(),
        "{:?}",
        retried.answer
    );
    for post in &posts {
        let meta = &post.body["params"]["_meta"];
        let version = meta["io.modelcontextprotocol/protocolVersion"].as_str();
        assert_eq!(
            post.header("mcp-protocol-version"),
            version,
            "{:?}",
            post.body
        );
        assert_eq!(version, Some("2026-07-28"));
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "eras-test"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object());
        assert_eq!(post.header("mcp-method"), Some(post.method()));
    }
    // Each call names its tool, and mirrors the region: as it is when a header can carry
    // it, in Base64 when it cannot (spaces at its ends, a letter beyond ASCII).
    let calls: Vec<&Seen> = posts
        .iter()
        .filter(|p| p.method() == "tools/call")
        .collect();
    let mirrored: Vec<_> = (calls.iter())
        .map(|c| (c.header("mcp-name"), c.header("mcp-param-region")))
        .collect();
    assert_eq!(
        mirrored,
        [
            (Some("deploy"), Some("eu-west-1")),
            (Some("deploy"), Some("=?base64?IHBhZGRlZCA=?=")),
            (Some("deploy"), Some("=?base64?WsO8cmljaA==?=")),
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_round_echoes_the_state_exactly_under_a_new_id_and_fills_the_forms_defaults() {
    let (url, seen) = fronted(Front::Records).await;
    let (client, _connection) = connect(&url, Era::Discover).await;
    let said: String = client.call_as("greet", json!({})).await.expect("greet");
    assert_eq!(said, "Hello, Ada; Hello, Ada");
    let deployed = client.call("deploy", json!({"region": "eu"})).await;
    assert_eq!(text(&deployed.expect("deploy")), "deployed to [eu]");

    let posts = posts(&seen);
    // The tools are listed before the first call (the listing says what goes in headers),
    // and once.
    let methods: Vec<&str> = posts.iter().map(Seen::method).collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call"
        ]
    );
    let calls: Vec<&Seen> = posts
        .iter()
        .filter(|p| p.method() == "tools/call")
        .collect();
    let [asked, answered, unrelated] = calls[..] else {
        panic!("{calls:?}")
    };
    let state = &asked.answer["result"]["requestState"];
    assert!(state.is_string(), "{:?}", asked.answer);
    assert!(asked.body["params"].get("requestState").is_none());
    assert_eq!(&answered.body["params"]["requestState"], state);
    assert_ne!(asked.body["id"], answered.body["id"]);
    let key = (asked.answer["result"]["inputRequests"].as_object())
        .and_then(|requests| requests.keys().next().cloned())
        .expect("an input request");
    assert_eq!(
        answered.body["params"]["inputResponses"][&key],
        json!({"action": "accept", "content": {"name": "Ada", "times": 2}})
    );
    // The next call carries nothing of that round.
    let params = &unrelated.body["params"];
    assert!(params.get("requestState").is_none() && params.get("inputResponses").is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn a_round_without_a_state_is_answered_without_one() {
    let (url, seen) = fronted(Front::DropsStates).await;
    let (client, _connection) = connect(&url, Era::Discover).await;
    let said: String = client.call_as("greet", json!({})).await.expect("greet");
    assert_eq!(said, "Hello, Ada; Hello, Ada");
    let posts = posts(&seen);
    let calls: Vec<&Seen> = posts
        .iter()
        .filter(|p| p.method() == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].answer["result"]["resultType"], "input_required");
    assert!(calls[0].answer["result"].get("requestState").is_none());
    let retried = &calls[1].body["params"];
    assert!(retried.get("requestState").is_none(), "{retried}");
    assert!(retried["inputResponses"].is_object(), "{retried}");
}

#[tokio::test(flavor = "current_thread")]
async fn the_stateful_era_fills_the_forms_defaults_too() {
    let (url, seen) = fronted(Front::Records).await;
    let (client, _connection) = connect(&url, Era::Initialize).await;
    let said: String = client.call_as("greet", json!({})).await.expect("greet");
    assert_eq!(said, "Hello, Ada; Hello, Ada");
    let posts = posts(&seen);
    let initialize = &posts[0];
    assert_eq!(initialize.method(), "initialize");
    assert_eq!(initialize.body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(initialize.body["params"]["clientInfo"]["version"], "1.2.3");
    // The form was answered on the session, with its defaults.
    let answered = posts.iter().find(|p| p.body.get("result").is_some());
    let answered = answered.expect("the client's answer to the form");
    assert_eq!(
        answered.body["result"],
        json!({"action": "accept", "content": {"name": "Ada", "times": 2}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_tool_whose_header_annotation_is_invalid_is_never_listed() {
    let (url, seen) = fronted(Front::AddsAnInvalidTool).await;
    let (client, _connection) = connect(&url, Era::Discover).await;
    let tools = client.list_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["deploy", "greet"]);
    let listed = posts(&seen);
    let listed = listed.iter().find(|p| p.method() == "tools/list").unwrap();
    assert_eq!(
        listed.answer["result"]["tools"].as_array().unwrap().len(),
        3
    );
}

#[test]
fn defaults_fill_only_what_the_answer_leaves_out() {
    let schema = serde_json::to_value(Greeting::schema()).unwrap();
    let given = serde_json::Map::from_iter([("name".to_owned(), json!("Grace"))]);
    let filled = mcp_fusion::client::with_defaults(&schema, given);
    assert_eq!(Value::Object(filled), json!({"name": "Grace", "times": 2}));
    // A schema without properties adds nothing.
    let nothing = mcp_fusion::client::with_defaults(&json!({"type": "object"}), Default::default());
    assert!(nothing.is_empty());
}
