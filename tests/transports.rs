//! Real MCP transports, in process: the typed client against a server over an in-memory duplex
//! stream (the same framing as stdio) and over streamable HTTP on loopback. A burst of 1,000
//! concurrent calls against 4 active / 8 queued is answered exactly once per call, and a panic
//! does not stop the server.

use std::time::Duration;

use mcp_fusion::client::{Client, Connection, ToolCallError};
use mcp_fusion::rmcp::ServiceExt;
use mcp_fusion::server::{HttpOptions, Server};
use mcp_fusion::{ToolError, parse, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Work;

/// A tool with a tight limit.
#[tool(concurrency(max_active = 4, max_queued = 8))]
impl Work {
    /// Takes a moment.
    async fn slow(&self) -> Result<&'static str, ToolError> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok("done")
    }

    /// Crashes.
    async fn crash(&self) -> Result<&'static str, ToolError> {
        panic!("the handler crashed")
    }

    /// Answers.
    async fn ping(&self) -> Result<&'static str, ToolError> {
        Ok("pong")
    }

    /// Never finishes in time.
    #[action(timeout = "10ms")]
    async fn stuck(&self) -> Result<&'static str, ToolError> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok("late")
    }

    /// Needs a field the schema leaves optional.
    async fn lookup(&self, args: Lookup, f: mcp_fusion::Context) -> Result<String, ToolError> {
        args.key.ok_or_else(|| f.required("key"))
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Lookup {
    key: Option<String>,
}

struct Quota;

/// A tool with a tight rate limit.
#[tool(rate_limit(max = 1, window = "1h"))]
impl Quota {
    /// Once an hour.
    async fn once(&self) -> Result<&'static str, ToolError> {
        Ok("ok")
    }
}

fn server() -> Server {
    Server::new("work-server", "1").tool(Work).tool(Quota)
}

async fn over_duplex() -> (Client, Connection) {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server().serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (client, connection) = Client::connect(client_end)
        .await
        .expect("the client connects");
    (client.throw_on_error(false), connection)
}

#[tokio::test(flavor = "current_thread")]
async fn a_thousand_calls_are_each_answered_once() {
    let (client, _connection) = over_duplex().await;
    let outcomes = client
        .batch((0..1000).map(|_| ("work.slow", json!({}))))
        .await;
    assert_eq!(outcomes.len(), 1000);
    let (mut ok, mut busy) = (0, 0);
    for outcome in outcomes {
        let result = outcome.expect("every call completes");
        if result.is_error == Some(true) {
            let error = ToolCallError::from_result(result);
            assert_eq!(error.code(), "SERVER_BUSY", "{error}");
            assert_eq!(
                error.error.message,
                "Tool \"work\" is at capacity (4 active, 8 queued)."
            );
            busy += 1;
        } else {
            ok += 1;
        }
    }
    assert_eq!(ok + busy, 1000);
    assert!(ok >= 12, "4 running and 8 queued get through: {ok}");
    assert!(busy > 0);
}

#[tokio::test(flavor = "current_thread")]
async fn after_a_panic_the_next_call_is_served() {
    let (client, _connection) = over_duplex().await;
    let crashed = client.call("work.crash", json!({})).await.unwrap();
    let error = ToolCallError::from_result(crashed);
    assert_eq!(error.code(), "INTERNAL_ERROR");
    assert!(!format!("{:?}", error.raw).contains("crashed"));
    let pong: String = client.call_as("work.ping", json!({})).await.unwrap();
    assert_eq!(pong, "pong");
}

/// One JSON-RPC request over HTTP/1.1 on loopback, the way any MCP client sends it.
async fn post(addr: std::net::SocketAddr, body: Value) -> Value {
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test(flavor = "current_thread")]
async fn streamable_http_stateless_on_loopback() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server().serve_http(
        listener,
        HttpOptions {
            stateless: true,
            ..HttpOptions::default()
        },
    ));

    let call = |id: u32, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "work", "arguments": arguments}});
    let listed = post(
        addr,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(listed["result"]["tools"][0]["name"], "work");

    let unknown = post(addr, call(2, json!({"action": "slwo"}))).await;
    assert_eq!(unknown["result"]["isError"], true);
    let parsed = parse(unknown["result"]["content"][0]["text"].as_str().unwrap());
    assert_eq!(parsed.code, "UNKNOWN_ACTION");
    assert_eq!(
        parsed.recovery.as_deref(),
        Some(
            "Did you mean \"work.slow\"? Choose one of the available actions and call the tool again."
        )
    );

    let crashed = post(addr, call(3, json!({"action": "crash"}))).await;
    assert_eq!(
        parse(crashed["result"]["content"][0]["text"].as_str().unwrap()).code,
        "INTERNAL_ERROR"
    );
    let pong = post(addr, call(4, json!({"action": "ping"}))).await;
    assert_eq!(pong["result"]["content"][0]["text"], "\"pong\"");

    // Several clients at once, each answered.
    let replies: Vec<_> = (0..8)
        .map(|i| tokio::spawn(post(addr, call(10 + i, json!({"action": "ping"})))))
        .collect();
    for reply in replies {
        assert_eq!(reply.await.unwrap()["result"]["isError"], false);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_runtime_envelopes_over_a_transport() {
    let (client, _connection) = over_duplex().await;
    let code =
        |result: mcp_fusion::rmcp::model::CallToolResult| ToolCallError::from_result(result).error;
    let missing = code(client.call("work", json!({})).await.unwrap());
    assert_eq!(missing.code, "MISSING_DISCRIMINATOR");
    let timeout = code(client.call("work.stuck", json!({})).await.unwrap());
    assert_eq!(
        (timeout.code.as_str(), timeout.message.as_str()),
        (
            "TIMEOUT",
            "The action \"work.stuck\" did not finish within 1 second."
        )
    );
    let required = code(client.call("work.lookup", json!({})).await.unwrap());
    assert_eq!(required.code, "MISSING_REQUIRED_FIELD");
    assert_eq!(
        client.call("quota.once", json!({})).await.unwrap().is_error,
        Some(false)
    );
    let limited = code(client.call("quota.once", json!({})).await.unwrap());
    assert_eq!(limited.code, "RATE_LIMITED");
    assert!(limited.retry_after.is_some_and(|s| s > 3500), "{limited:?}");
}
