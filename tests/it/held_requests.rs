//! Requests a client holds open hold nothing another request waits for: MCP 2026-07-28
//! `subscriptions/listen` streams held open over streamable HTTP, listens and requests of the
//! user's own handler cancelled over stdio. Served in process (the HTTP endpoint as a service,
//! stdio on an in-memory pipe), on tokio's paused clock: a request that waits for what is held
//! waits for nothing else, so a test that would hang fails at once instead.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, HttpBody};
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::RequestContext;
use mcp_fusion::rmcp::{ErrorData, RoleServer, ServerHandler};
use mcp_fusion::server::{HttpOptions, HttpService, StdioOptions};
use mcp_fusion::{Server, ToolError, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;
use tokio::time::timeout;

/// Far above what anything here needs; on the paused clock, no time at all.
const PATIENCE: Duration = Duration::from_secs(30);

/// The user's own handler: resources whose listing changes, told on `subscriptions/listen`
/// streams (rmcp's own `listen`: open until cancelled), and a resource whose read never ends.
#[derive(Clone, Default)]
struct Shelf {
    /// Told each time a read begins.
    reading: Arc<Notify>,
}

impl ServerHandler for Shelf {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities)
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build(),
        )
    }

    async fn read_resource(
        &self,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.reading.notify_one();
        std::future::pending().await
    }
}

/// Pings.
#[tool]
async fn ping() -> Result<&'static str, ToolError> {
    Ok("pong")
}

fn shelf_server(shelf: Shelf) -> Server {
    Server::builder("shelf", "1")
        .tool(PingTool)
        .handler(shelf)
        .build()
        .expect("the server builds")
}

/// A 2026-07-28 request: its method, id and params, its lifecycle in `_meta`.
fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = crate::support::lifecycle_2026("held");
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn listen(id: u64) -> Value {
    request(
        id,
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true}}),
    )
}

fn list(id: u64) -> Value {
    request(id, "tools/list", json!({}))
}

fn call(id: u64) -> Value {
    request(id, "tools/call", json!({"name": "ping", "arguments": {}}))
}

fn cancelled(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
}

async fn post(endpoint: &HttpService, message: &Value) -> axum::http::Response<Body> {
    crate::support::post_2026(endpoint, message).await
}

/// Reads `body` until a frame holds `wanted`; what was read.
async fn read_until(body: &mut Body, wanted: &str) -> String {
    let mut read = String::new();
    while !read.contains(wanted) {
        let frame = std::future::poll_fn(|cx| std::pin::Pin::new(&mut *body).poll_frame(cx))
            .await
            .unwrap_or_else(|| panic!("the body ended before {wanted}: {read}"))
            .unwrap();
        if let Ok(data) = frame.into_data() {
            read.push_str(&String::from_utf8_lossy(&data));
        }
    }
    read
}

/// The one JSON-RPC message of a whole answer (JSON, or the data of an event stream).
async fn answer(reply: axum::http::Response<Body>) -> (u16, Value) {
    let status = reply.status().as_u16();
    let body = axum::body::to_bytes(reply.into_body(), usize::MAX)
        .await
        .unwrap();
    let text = String::from_utf8(body.to_vec()).unwrap();
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .chain(std::iter::once(text.as_str()))
        .find_map(|data| serde_json::from_str::<Value>(data).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message: {status} {text}"));
    (status, message)
}

/// With the default two parse places, two `subscriptions/listen` streams held open leave
/// every later POST answered: a body gives its place back as its request is handed to the
/// server, whatever the method, not only a call.
#[tokio::test(start_paused = true)]
async fn listen_streams_held_open_over_http_leave_later_posts_answered() {
    for stateless in [false, true] {
        let mut options = HttpOptions::default();
        assert_eq!(options.max_parsing, 2);
        options.stateless = stateless;
        let endpoint = shelf_server(Shelf::default()).http_service(options);
        let mut streams = Vec::new();
        for id in [1, 2] {
            let reply = timeout(PATIENCE, post(&endpoint, &listen(id)))
                .await
                .expect("the stream opens");
            assert_eq!(reply.status(), 200, "stateless {stateless}");
            let mut body = reply.into_body();
            timeout(
                PATIENCE,
                read_until(&mut body, "notifications/subscriptions/acknowledged"),
            )
            .await
            .expect("the stream is acknowledged");
            // Held open: never read again until the end of the test.
            streams.push(body);
        }
        let listed = timeout(PATIENCE, async {
            answer(post(&endpoint, &list(3)).await).await
        })
        .await
        .unwrap_or_else(|_| panic!("stateless {stateless}: tools/list not answered"));
        assert_eq!(listed.0, 200, "stateless {stateless}: {listed:?}");
        assert_eq!(listed.1["result"]["tools"][0]["name"], "ping", "{listed:?}");
        let called = timeout(PATIENCE, async {
            answer(post(&endpoint, &call(4)).await).await
        })
        .await
        .unwrap_or_else(|_| panic!("stateless {stateless}: tools/call not answered"));
        assert_eq!(called.0, 200, "stateless {stateless}: {called:?}");
        assert_eq!(called.1["result"]["isError"], false, "{called:?}");
        drop(streams);
    }
}

/// The server on an in-memory pipe as stdio, spoken to in raw lines.
struct Piped {
    requests: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    serving: tokio::task::JoinHandle<()>,
}

impl Piped {
    fn serve(server: Server, options: StdioOptions) -> Piped {
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        let serving = server.serve_io(read, write, options).into_future();
        let serving = tokio::spawn(async move {
            serving.await.expect("served");
        });
        let (answers, requests) = tokio::io::split(client);
        Piped {
            requests,
            lines: BufReader::new(answers).lines(),
            serving,
        }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.requests.write_all(line.as_bytes()).await.unwrap();
    }

    /// The answer to request `id`, with the lines read before it.
    async fn answer(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        let reading = async {
            loop {
                let line = self.lines.next_line().await.unwrap();
                let line: Value = serde_json::from_str(&line.expect("serving")).unwrap();
                if line["id"] == id {
                    return line;
                }
                before.push(line);
            }
        };
        let answer = timeout(PATIENCE, reading)
            .await
            .unwrap_or_else(|_| panic!("no answer to {id}"));
        (answer, before)
    }

    /// Closes the input: every line written until the server ends.
    async fn close(mut self) -> Vec<Value> {
        self.requests.shutdown().await.unwrap();
        let mut rest = Vec::new();
        let reading = async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                rest.push(serde_json::from_str::<Value>(&line).unwrap());
            }
        };
        timeout(PATIENCE, reading).await.expect("the output ends");
        timeout(PATIENCE, self.serving)
            .await
            .expect("the server ends")
            .unwrap();
        rest
    }
}

/// Over stdio, 70 `subscriptions/listen` requests each followed by `notifications/cancelled`
/// (more than the 64 requests that may await their answer) leave the server answering: the
/// transport's cancellation stops a listen as it stops a call, which gives its place back.
/// No cancelled listen is answered.
#[tokio::test(start_paused = true)]
async fn cancelled_listens_over_stdio_give_their_places_back() {
    let options = StdioOptions::default();
    assert_eq!(options.max_pending_answers, 64);
    let mut piped = Piped::serve(shelf_server(Shelf::default()), options);
    for id in 1..=70 {
        piped.send(&listen(id)).await;
        piped.send(&cancelled(id)).await;
    }
    piped.send(&list(100)).await;
    let (listed, mut seen) = piped.answer(100).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "ping", "{listed}");
    piped.send(&call(101)).await;
    let (called, before) = piped.answer(101).await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    seen.extend(before);
    seen.extend(piped.close().await);
    let answered: Vec<&Value> = seen.iter().filter(|l| !l["id"].is_null()).collect();
    assert!(
        answered.is_empty(),
        "cancelled listens answered: {answered:?}"
    );
    assert!(
        seen.iter()
            .all(|l| l["method"] == "notifications/subscriptions/acknowledged"),
        "{seen:?}"
    );
}

/// Requests of the user's handler that never finish (`resources/read`), each cancelled once
/// it began, give their places back and are never answered: with two places, one held by a
/// read and one for the line after it, each next read is read only once the one before it
/// gave its place back.
#[tokio::test(start_paused = true)]
async fn cancelled_requests_of_the_users_handler_give_their_places_back_unanswered() {
    let shelf = Shelf::default();
    let mut options = StdioOptions::default();
    options.max_pending_answers = 2;
    let mut piped = Piped::serve(shelf_server(shelf.clone()), options);
    for id in 1..=3 {
        let read = request(id, "resources/read", json!({"uri": "note://never"}));
        piped.send(&read).await;
        timeout(PATIENCE, shelf.reading.notified())
            .await
            .unwrap_or_else(|_| panic!("read {id} never began"));
        piped.send(&cancelled(id)).await;
    }
    piped.send(&list(4)).await;
    let (listed, before) = piped.answer(4).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "ping", "{listed}");
    let mut seen = before;
    seen.extend(piped.close().await);
    assert!(seen.is_empty(), "a cancelled read was answered: {seen:?}");
}
