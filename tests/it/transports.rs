//! Real MCP transports, in process: the typed client against a server over an in-memory duplex
//! stream (the same framing as stdio) and over streamable HTTP on loopback. A burst of 1,000
//! concurrent calls against 4 active / 8 queued is answered exactly once per call, and a panic
//! does not stop the server. Over HTTP the client is rmcp's own, with and without sessions.

use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::client::{BatchOptions, Client, ClientError, Connection, ToolCallError};
use mcp_fusion::rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use mcp_fusion::rmcp::{ServerHandler, ServiceExt};
use mcp_fusion::server::HttpOptions;
use mcp_fusion::{ToolError, tool};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::eventually;

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
        std::future::pending::<()>().await;
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
    Server::builder("work-server", "1")
        .tool(Work)
        .tool(Quota)
        .build()
        .unwrap()
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
    (client, connection)
}

/// On the paused clock (all in process): the handlers' 20 ms pass only when every task waits.
#[tokio::test(flavor = "current_thread", start_paused = true)]
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

/// A batch keeps at most its concurrency in flight (4 against 4 active: nobody is turned away,
/// and 20 calls of 20 ms take 5 rounds of the paused clock), and gives up a call past its timeout
/// in that call's place.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_batch_is_bounded_in_flight_and_in_time() {
    let (client, _connection) = over_duplex().await;
    let client = client.batch_options(BatchOptions::default().concurrency(4));
    let start = tokio::time::Instant::now();
    let outcomes = client
        .batch((0..20).map(|_| ("work.slow", json!({}))))
        .await;
    assert!(
        start.elapsed() >= Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    for outcome in outcomes {
        let result = outcome.expect("every call completes");
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }

    let client = client.batch_options(BatchOptions::default().timeout(Duration::from_millis(5)));
    let calls = [
        ("work.ping", json!({})),
        ("work.slow", json!({})),
        ("work.ping", json!({})),
    ];
    let outcomes = client.batch(calls).await;
    assert!(
        outcomes[0]
            .as_ref()
            .is_ok_and(|r| r.is_error == Some(false))
    );
    match &outcomes[1] {
        Err(ClientError::TimedOut { after }) => assert_eq!(*after, Duration::from_millis(5)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(
        outcomes[2]
            .as_ref()
            .is_ok_and(|r| r.is_error == Some(false))
    );
    assert_eq!(
        outcomes[1].as_ref().unwrap_err().to_string(),
        "no answer within 5ms"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn after_a_panic_the_next_call_is_served() {
    let (client, _connection) = over_duplex().await;
    let crashed = client.call_raw("work.crash", json!({})).await.unwrap();
    let error = ToolCallError::from_result(crashed);
    assert_eq!(error.code(), "INTERNAL_ERROR");
    assert!(!format!("{:?}", error.raw).contains("crashed"));
    let pong: String = client.call_as("work.ping", json!({})).await.unwrap();
    assert_eq!(pong, "pong");
}

/// A user's handler serving prompts only.
struct Prompts;

impl ServerHandler for Prompts {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_prompts().build())
            .with_server_info(Implementation::new("the-handler", "0"))
    }
}

/// What `initialize` answers is the server's: its name, version and instructions, and the tools
/// capability beside what a user's handler serves, over rmcp's service, the crate's own stdio
/// transport and streamable HTTP alike.
#[tokio::test(flavor = "current_thread")]
async fn initialize_answers_with_the_server_and_its_tools() {
    let said = |client: &Client| {
        let info = client.peer().peer_info().expect("initialized");
        let capabilities = &info.capabilities;
        let served = (capabilities.tools.is_some(), capabilities.prompts.is_some());
        (
            info.server_info.as_ref().map(|s| s.name.clone()),
            served,
            info.instructions.clone(),
        )
    };
    let (client, _connection) = over_duplex().await;
    assert_eq!(
        said(&client),
        (Some("work-server".into()), (true, false), None)
    );
    let (url, _) = http_server(false).await;
    let (client, _connection) = Client::connect_http(&url).await.expect("connects");
    assert_eq!(
        said(&client),
        (Some("work-server".into()), (true, false), None)
    );

    let composed = Server::builder("desk", "2")
        .instructions("Prompts and a quota.")
        .tool(Quota)
        .handler(Prompts)
        .build()
        .unwrap();
    let (client, _connection) = Client::in_memory(composed).await.expect("connects");
    let instructions = Some("Prompts and a quota.".to_owned());
    assert_eq!(
        said(&client),
        (Some("desk".into()), (true, true), instructions)
    );
}

/// Serves [`server`] over streamable HTTP on a free loopback port; the endpoint's URL.
async fn http_server(stateless: bool) -> (String, std::net::SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut options = HttpOptions::default();
    options.stateless = stateless;
    tokio::spawn(server().serve_http(listener, options).into_future());
    (format!("http://{addr}/mcp"), addr)
}

/// rmcp's own HTTP client against the server: listing, envelopes, a panic and the next call,
/// several clients at once, and a burst past the limit answered once per call.
async fn served_over_http(stateless: bool) {
    let (url, _) = http_server(stateless).await;
    let (client, connection) = Client::connect_http(&url).await.expect("connects");
    let client = client;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["work", "quota"]);

    let unknown =
        ToolCallError::from_result(client.call_raw("work.slwo", json!({})).await.unwrap());
    assert_eq!(unknown.code(), "UNKNOWN_ACTION");
    assert_eq!(
        unknown.error.recovery.as_deref(),
        Some(
            "Did you mean \"work.slow\"? Choose one of the available actions and call the tool again."
        )
    );
    let crashed =
        ToolCallError::from_result(client.call_raw("work.crash", json!({})).await.unwrap());
    assert_eq!(crashed.code(), "INTERNAL_ERROR");
    let pong: String = client.call_as("work.ping", json!({})).await.unwrap();
    assert_eq!(pong, "pong");

    // Several clients at once, each with its own connection (its own session when stateful),
    // each calling in turn: within the tool's 4 running and 8 queued, every call is answered.
    let mut others = Vec::new();
    for _ in 0..4 {
        let (other, other_connection) = Client::connect_http(&url).await.expect("connects");
        others.push((other, other_connection));
    }
    let mut pings = tokio::task::JoinSet::new();
    for (other, _) in &others {
        let other = other.clone();
        pings.spawn(async move {
            for _ in 0..10 {
                let pong = other.call_as::<String>("work.ping", json!({})).await;
                assert_eq!(pong.unwrap(), "pong");
            }
        });
    }
    while let Some(pinged) = pings.join_next().await {
        pinged.unwrap();
    }

    // A burst past 4 active / 8 queued: every call answered once, done or SERVER_BUSY.
    let outcomes = client
        .batch((0..60).map(|_| ("work.slow", json!({}))))
        .await;
    assert_eq!(outcomes.len(), 60);
    let mut done = 0;
    for outcome in outcomes {
        let result = outcome.expect("every call completes");
        if result.is_error == Some(true) {
            assert_eq!(ToolCallError::from_result(result).code(), "SERVER_BUSY");
        } else {
            done += 1;
        }
    }
    assert!(done >= 12, "4 running and 8 queued get through: {done}");

    for (_, other_connection) in others {
        other_connection.cancel().await.unwrap();
    }
    connection.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn streamable_http_with_sessions() {
    served_over_http(false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamable_http_stateless() {
    served_over_http(true).await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamable_http_refuses_a_foreign_host() {
    let (_, addr) = http_server(true).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

/// Whether `Hang::wait` is running, and how many of its calls were stopped.
static HANGING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static STOPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Hang;

/// A tool whose one action never ends.
#[tool]
impl Hang {
    /// Waits forever.
    async fn wait(&self) -> Result<&'static str, ToolError> {
        struct Stopped;
        impl Drop for Stopped {
            fn drop(&mut self) {
                STOPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let _stopped = Stopped;
        HANGING.store(true, std::sync::atomic::Ordering::SeqCst);
        std::future::pending().await
    }
}

/// Over stateless HTTP no notification can reach a call: a client that drops the connection
/// has cancelled it, and the handler stops then.
#[tokio::test(flavor = "current_thread")]
async fn stateless_http_stops_the_handler_when_the_client_goes() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut options = HttpOptions::default();
    options.stateless = true;
    tokio::spawn(
        Server::builder("t", "1")
            .tool(Hang)
            .build()
            .unwrap()
            .serve_http(listener, options)
            .into_future(),
    );
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "hang", "arguments": {"action": "wait"}},
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    eventually("the handler to start", async || {
        HANGING
            .load(std::sync::atomic::Ordering::SeqCst)
            .then_some(())
    })
    .await;
    assert_eq!(STOPPED.load(std::sync::atomic::Ordering::SeqCst), 0);
    drop(stream);
    eventually(
        "the handler to be stopped when the client went",
        async || (STOPPED.load(std::sync::atomic::Ordering::SeqCst) > 0).then_some(()),
    )
    .await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_runtime_envelopes_over_a_transport() {
    let (client, _connection) = over_duplex().await;
    let code =
        |result: mcp_fusion::rmcp::model::CallToolResult| ToolCallError::from_result(result).error;
    let missing = code(client.call_raw("work", json!({})).await.unwrap());
    assert_eq!(missing.code, "MISSING_DISCRIMINATOR");
    let timeout = code(client.call_raw("work.stuck", json!({})).await.unwrap());
    assert_eq!(
        (timeout.code.as_str(), timeout.message.as_str()),
        (
            "TIMEOUT",
            "The action \"work.stuck\" did not finish within 1 second."
        )
    );
    let required = code(client.call_raw("work.lookup", json!({})).await.unwrap());
    assert_eq!(required.code, "MISSING_REQUIRED_FIELD");
    assert_eq!(
        client
            .call_raw("quota.once", json!({}))
            .await
            .unwrap()
            .is_error,
        Some(false)
    );
    let limited = code(client.call_raw("quota.once", json!({})).await.unwrap());
    assert_eq!(limited.code, "RATE_LIMITED");
    assert!(limited.retry_after.is_some_and(|s| s > 3500), "{limited:?}");
}
