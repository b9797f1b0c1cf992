//! The server answers subscriptions itself, in both eras, for whatever it serves: the user's
//! code tells it what changed (`Changes`), and every client that asked is told. MCP 2026-07-28
//! `subscriptions/listen` over streamable HTTP (acknowledged, tagged with its
//! `subscriptionId`, filtered), 2025-11-25 `resources/subscribe` in a session over stdio; and
//! the revision's rules (removed methods 404, a capability the request did not declare -32021).
//! Served in process on tokio's paused clock.

use std::time::Duration;

use axum::body::{Body, HttpBody};
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::RequestContext;
use mcp_fusion::rmcp::{ErrorData, RoleServer, ServerHandler};
use mcp_fusion::server::{Changes, HttpOptions, HttpService, StdioOptions};
use mcp_fusion::tools::Sampling;
use mcp_fusion::{Context, Server, ToolError, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::timeout;

const PATIENCE: Duration = Duration::from_secs(30);

/// Resources and prompts of the user's own, with nothing of subscriptions in it.
struct Notes;

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = ResourceContents::text("a note", request.uri);
        Ok(ReadResourceResult::new(vec![text]).into())
    }
}

/// Asks the client's model: needs sampling.
#[tool]
async fn ask_model(f: Context) -> Result<String, ToolError> {
    let sampled = f.sample(Sampling::new(10).user("hello")).await?;
    Ok(sampled.text().unwrap_or_default().to_owned())
}

/// Declares it needs the client's model, and never asks: refused before it runs.
#[tool(needs(sampling))]
async fn summarize() -> Result<String, ToolError> {
    panic!("a call whose client cannot be asked never reaches the handler")
}

fn server() -> (Server, Changes) {
    let builder = Server::builder("notes", "1");
    let changes = builder.changes();
    let builder = builder
        .tool(AskModelTool)
        .tool(SummarizeTool)
        .handler(Notes);
    (builder.build().expect("the server builds"), changes)
}

fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = crate::support::lifecycle_2026("listener");
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn post(endpoint: &HttpService, message: &Value) -> axum::http::Response<Body> {
    crate::support::post_2026(endpoint, message).await
}

/// The next JSON-RPC message of an event stream.
async fn next_message(body: &mut Body, pending: &mut String) -> Value {
    loop {
        if let Some(end) = pending.find("\n\n") {
            let event: String = pending.drain(..end + 2).collect();
            let data = event.lines().find_map(|l| l.strip_prefix("data: "));
            if let Some(message) = data.and_then(|d| serde_json::from_str(d).ok()) {
                return message;
            }
            continue;
        }
        let frame = std::future::poll_fn(|cx| std::pin::Pin::new(&mut *body).poll_frame(cx));
        let frame = timeout(PATIENCE, frame).await.expect("a message comes");
        let frame = frame.expect("the stream goes on").unwrap();
        if let Ok(data) = frame.into_data() {
            pending.push_str(&String::from_utf8_lossy(&data));
        }
    }
}

/// A listen stream: its body, and what was read of it but not yet parsed.
struct Listening {
    body: Body,
    pending: String,
}

impl Listening {
    async fn open(endpoint: &HttpService, id: u64, filter: Value) -> (Self, Value) {
        let message = request(id, "subscriptions/listen", json!({"notifications": filter}));
        let reply = post(endpoint, &message).await;
        assert_eq!(reply.status(), 200);
        let mut listening = Listening {
            body: reply.into_body(),
            pending: String::new(),
        };
        let ack = listening.next().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        (listening, ack)
    }

    async fn next(&mut self) -> Value {
        next_message(&mut self.body, &mut self.pending).await
    }
}

#[tokio::test(start_paused = true)]
async fn listen_streams_are_told_what_they_asked_for_and_tagged() {
    let (server, changes) = server();
    let endpoint = server.http_service(HttpOptions::default());
    let (mut notes, ack) = Listening::open(
        &endpoint,
        1,
        json!({"resourceSubscriptions": ["note://1"], "promptsListChanged": true}),
    )
    .await;
    let accepted = &ack["params"]["notifications"];
    assert_eq!(
        accepted["resourceSubscriptions"],
        json!(["note://1"]),
        "{ack}"
    );
    let (mut tools, _) = Listening::open(&endpoint, 2, json!({"toolsListChanged": true})).await;

    // Only what each stream's filter names reaches it, tagged with the stream's id.
    changes.resource_updated("note://2");
    changes.tool_list_changed();
    changes.resource_updated("note://1");
    changes.prompt_list_changed();
    let first = notes.next().await;
    assert_eq!(
        first["method"], "notifications/resources/updated",
        "{first}"
    );
    assert_eq!(first["params"]["uri"], "note://1");
    assert_eq!(
        first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    let second = notes.next().await;
    assert_eq!(
        second["method"], "notifications/prompts/list_changed",
        "{second}"
    );
    let told = tools.next().await;
    assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    assert_eq!(
        told["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        2
    );

    // A stream dropped is forgotten at once.
    drop(notes);
    drop(tools);
    support_eventually_streams(&changes, 0).await;
}

/// Waits until the server keeps `streams` open listen streams.
async fn support_eventually_streams(changes: &Changes, streams: usize) {
    let wanted = format!("streams: {streams}");
    crate::support::eventually(&wanted.clone(), async || {
        format!("{changes:?}").contains(&wanted).then_some(())
    })
    .await;
}

/// A filter naming a thousand resources is cut to what the server keeps; one caller cannot
/// hold more than its share of streams; a stream nobody reads loses notifications, not memory.
#[tokio::test(start_paused = true)]
async fn hostile_listeners_are_bounded() {
    let (server, changes) = server();
    let endpoint = server.http_service(HttpOptions::default());
    let uris: Vec<String> = (0..1000).map(|i| format!("note://{i}")).collect();
    let (mut wide, ack) =
        Listening::open(&endpoint, 1, json!({"resourceSubscriptions": uris})).await;
    let accepted = ack["params"]["notifications"]["resourceSubscriptions"]
        .as_array()
        .map(Vec::len);
    assert_eq!(accepted, Some(256), "{ack:.300}");

    // Never read: thousands of changes, while the stream holds at most its queue.
    for _ in 0..5_000 {
        changes.resource_updated("note://3");
    }
    let told = wide.next().await;
    assert_eq!(told["params"]["uri"], "note://3");

    // The caller's share: 16 streams (this one among them), then a refusal.
    let mut held = vec![wide];
    for id in 2..=16 {
        held.push(
            Listening::open(&endpoint, id, json!({"toolsListChanged": true}))
                .await
                .0,
        );
    }
    let refused = post(
        &endpoint,
        &request(
            17,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ),
    )
    .await;
    let mut refused = Listening {
        body: refused.into_body(),
        pending: String::new(),
    };
    let _ack = refused.next().await;
    let error = refused.next().await;
    assert_eq!(error["id"], 17, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many"),
        "{error}"
    );
    drop(held);
    support_eventually_streams(&changes, 0).await;

    // A storm of streams opened and dropped at once: each is forgotten, none is kept.
    for id in 100..300 {
        let (stream, _) = Listening::open(&endpoint, id, json!({"toolsListChanged": true})).await;
        drop(stream);
    }
    support_eventually_streams(&changes, 0).await;
}

/// The requests MCP 2026-07-28 removed are not found there (HTTP 404), however they are
/// written; a handler that asks for a capability the request did not declare answers -32021
/// (HTTP 400) with what it needed, whichever HTTP path serves the call.
#[tokio::test(start_paused = true)]
async fn the_revisions_rules_hold_on_every_path() {
    for fast_path in [false, true] {
        let (server, _) = server();
        let mut options = HttpOptions::default();
        options.stateless = true;
        options.fast_path = fast_path;
        let endpoint = server.http_service(options);
        for (id, method) in [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/subscribe",
            "resources/unsubscribe",
        ]
        .into_iter()
        .enumerate()
        {
            let reply = post(&endpoint, &request(id as u64, method, json!({}))).await;
            let status = reply.status();
            let body = axum::body::to_bytes(reply.into_body(), usize::MAX)
                .await
                .unwrap();
            let answer: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(
                (status.as_u16(), &answer["error"]["code"]),
                (404, &json!(-32601)),
                "{method}: {answer}"
            );
        }
        let call = request(
            9,
            "tools/call",
            json!({"name": "ask_model", "arguments": {}}),
        );
        let reply = post(&endpoint, &call).await;
        let status = reply.status();
        let body = axum::body::to_bytes(reply.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&body);
        let data = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&text);
        let answer: Value = serde_json::from_str(data).unwrap();
        assert_eq!(status, 400, "fast path {fast_path}: {answer}");
        assert_eq!(answer["error"]["code"], -32021, "{answer}");
        assert_eq!(
            answer["error"]["data"]["requiredCapabilities"],
            json!({"sampling": {}}),
            "{answer}"
        );
    }
}

/// Before 2026-07-28, a session subscribes to a resource and is told of its updates until it
/// unsubscribes; every session is told of listing changes.
#[tokio::test(start_paused = true)]
async fn sessions_subscribe_to_resources() {
    let (server, changes) = server();
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let (our_read, our_write) = tokio::io::split(ours);
    let serving = tokio::spawn(
        server
            .serve_io(our_read, our_write, StdioOptions::default())
            .into_future(),
    );
    let mut lines = BufReader::new(read).lines();
    let mut write = write;
    let send = async |write: &mut tokio::io::WriteHalf<tokio::io::DuplexStream>, message: Value| {
        let line = format!("{message}\n");
        write.write_all(line.as_bytes()).await.unwrap();
    };
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "session", "version": "1"}}}),
    )
    .await;
    let mut next = async || -> Value {
        let line = timeout(PATIENCE, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let initialized = next().await;
    let capabilities = &initialized["result"]["capabilities"];
    assert_eq!(
        capabilities["resources"]["subscribe"], true,
        "{initialized}"
    );
    assert_eq!(
        capabilities["prompts"]["listChanged"], true,
        "{initialized}"
    );
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
        "params": {"uri": "note://1"}}),
    )
    .await;
    assert_eq!(next().await["id"], 2);
    changes.resource_updated("note://2");
    changes.resource_updated("note://1");
    let told = next().await;
    assert_eq!(told["method"], "notifications/resources/updated", "{told}");
    assert_eq!(told["params"]["uri"], "note://1");
    send(
        &mut write,
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe",
        "params": {"uri": "note://1"}}),
    )
    .await;
    assert_eq!(next().await["id"], 3);
    changes.resource_updated("note://1");
    changes.tool_list_changed();
    let told = next().await;
    assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
    drop(write);
    let _ = timeout(PATIENCE, serving).await;
}
