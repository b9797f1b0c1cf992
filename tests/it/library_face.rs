//! The library as a team adopting it meets it: a server described in any order, mounted in an
//! existing axum application, shut down gracefully, its tools served by a `ServerHandler` of
//! the team's own beside prompts and resources, and a Redis store whose timeout is its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_fusion::client::{Client, ToolCallError, parse_envelope};
use mcp_fusion::middleware::{CallInfo, Middleware, Next};
use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult};
use mcp_fusion::server::limits::{FailPolicy, RedisStore};
use mcp_fusion::server::{HttpOptions, ServerBuilder, StdioOptions, ToolSettings};
use mcp_fusion::tools::{BoxFuture, Exposition, Failure};
use mcp_fusion::{Context, Server, ToolError, tool};
use mcp_fusion_drivers::{raw_http, raw_stdio, redis_server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::timeout;

/// What any one answer may take here before the test says the server hung.
const HUNG: Duration = Duration::from_secs(10);

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// Who orders.
    customer: String,
    /// How many.
    #[schemars(range(min = 1))]
    quantity: u32,
}

struct Shop;

/// Orders.
#[tool(rate_limit(max = 2, window = "1m"))]
impl Shop {
    /// Places an order.
    async fn place(&self, args: Order) -> Result<String, ToolError> {
        Ok(format!("{} × {}", args.customer, args.quantity))
    }

    /// Lists orders.
    #[action(read_only)]
    async fn list(&self) -> Result<Vec<String>, ToolError> {
        Ok(vec![])
    }
}

/// Pings.
#[tool]
async fn ping(f: Context) -> Result<&'static str, ToolError> {
    f.progress(1.0, Some(1.0), None);
    Ok("pong")
}

/// Counts the calls it sees, and tags each result with its name.
struct Counting(&'static str, Arc<AtomicUsize>);

impl Middleware for Counting {
    fn handle<'a>(
        &'a self,
        _info: &'a CallInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let name = self.0;
        Box::pin(async move {
            let mut result = next.run().await?;
            result
                .content
                .push(mcp_fusion::rmcp::model::ContentBlock::text(name));
            Ok(result)
        })
    }
}

/// The settings of the order test, applied to a builder.
fn settings(builder: ServerBuilder, seen: &Arc<AtomicUsize>) -> ServerBuilder {
    builder
        .exposition(Exposition::Flat)
        .middleware(Counting("audit", seen.clone()))
        .rate_limit_key(|call| Some(call.arguments().get("customer")?.as_str()?.to_owned()))
        .max_rate_limit_keys(10)
        .progress_interval(Duration::from_millis(1))
        .instructions("Orders and pings.")
}

/// What a client sees of a server: its listing, then the answers of the same calls.
async fn seen(server: Server) -> (Value, Vec<String>) {
    let (client, _connection) = Client::in_memory(server).await.expect("connected");
    let listed = serde_json::to_value(client.list_tools().await.expect("listed")).unwrap();
    let mut answers = Vec::new();
    let calls = [
        ("shop_place", json!({"customer": "ada", "quantity": 1})),
        ("shop_place", json!({"customer": "ada", "quantity": 2})),
        ("shop_place", json!({"customer": "ada", "quantity": 3})),
        ("shop_place", json!({"customer": "bob", "quantity": 1})),
        ("shop_place", json!({"customer": "bob", "quantity": 0})),
        ("shop_list", json!({})),
        ("ping", json!({})),
    ];
    for (tool, arguments) in calls {
        let result = client.call_raw(tool, arguments).await.expect("answered");
        let texts: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        answers.push(format!("{:?} {}", result.is_error, texts.join(" | ")));
    }
    (listed, answers)
}

/// The same server described with its settings before, between and after its tools lists and
/// answers the same: limits per key, middleware, exposition, progress interval.
#[tokio::test(flavor = "current_thread")]
async fn settings_and_tools_in_any_order_make_the_same_server() {
    let counts: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
    let before = settings(Server::builder("s", "1"), &counts[0])
        .tool(Shop)
        .tool(PingTool);
    let between = settings(Server::builder("s", "1").tool(Shop), &counts[1]).tool(PingTool);
    let after = settings(
        Server::builder("s", "1").tool(Shop).tool(PingTool),
        &counts[2],
    );
    let mut outcomes = Vec::new();
    for builder in [before, between, after] {
        outcomes.push(seen(builder.build().expect("it builds")).await);
    }
    assert_eq!(outcomes[0], outcomes[1]);
    assert_eq!(outcomes[1], outcomes[2]);
    let answers = &outcomes[0].1;
    // Two calls a minute per customer, whatever the order the settings were given in.
    assert!(answers[2].contains("RATE_LIMITED"), "{answers:?}");
    assert!(answers[3].starts_with("Some(false)"), "{answers:?}");
    assert!(answers[4].contains("VALIDATION_ERROR") || answers[4].contains("validation_error"));
    // The middleware saw every call that reached it, in each description.
    let seen: Vec<usize> = counts.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    assert_eq!(seen, [seen[0]; 3]);
    assert!(seen[0] >= 4, "{seen:?}");
}

/// A setting that would apply to no tool is a build error, not a silent no-op.
#[test]
fn settings_that_cannot_apply_are_build_errors() {
    let unkeyed = Server::builder("s", "1")
        .tool(PingTool)
        .rate_limit_key(|_| Some("k".into()))
        .build()
        .unwrap_err();
    assert!(
        unkeyed.problems()[0].starts_with("rate_limit_key:"),
        "{unkeyed}"
    );
    let flat_single = Server::builder("s", "1")
        .tool_with(PingTool, ToolSettings::new().exposition(Exposition::Flat))
        .build()
        .unwrap_err();
    assert!(
        flat_single.problems()[0].contains("it has one action"),
        "{flat_single}"
    );
    let all = Server::builder("s", "1")
        .tool(PingTool)
        .max_contract_changes(2)
        .rate_limit_key(|_| Some("k".into()))
        .limit_store(mcp_fusion::server::limits::MemoryStore::new())
        .build()
        .unwrap_err();
    // Every problem at once.
    assert_eq!(all.problems().len(), 3, "{all}");
}

/// `/mcp` mounted in an axum application beside its own `/health`, behind its own layer: a
/// real MCP client lists and calls tools, the layer sees the requests, and every limit of
/// `HttpOptions` holds through the mount (body size, Origin, sessions).
#[tokio::test]
async fn the_http_service_mounts_in_an_axum_application() {
    let server = Server::builder("s", "1")
        .tool(Shop)
        .tool(PingTool)
        .build()
        .unwrap();
    let mut options = HttpOptions::default();
    options.max_sessions = 2;
    options.max_body_bytes = 64 << 10;
    let layered = Arc::new(AtomicUsize::new(0));
    let counter = layered.clone();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .nest_service("/mcp", server.http_service(options))
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { next.run(request).await }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let health = raw_http::get(&addr, "/health").await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));

    let (client, connection) = Client::connect_http(&format!("http://{addr}/mcp"))
        .await
        .expect("rmcp's client connects");
    let tools = client.list_tools().await.expect("listed");
    assert_eq!(tools.len(), 2);
    let placed = client
        .call("shop.place", json!({"customer": "ada", "quantity": 2}))
        .await
        .expect("placed");
    assert_eq!(placed.content[0].as_text().unwrap().text, "ada × 2");
    let refused = client
        .call("shop.place", json!({"customer": "ada", "quantity": 0}))
        .await
        .unwrap_err();
    assert_eq!(
        refused.tool_error().map(ToolCallError::code),
        Some("VALIDATION_ERROR")
    );
    assert!(
        layered.load(Ordering::SeqCst) > 1,
        "the application's layer saw the requests"
    );

    // The limits hold through the mount: a body over the limit, a foreign Origin, a session
    // past the cap (the client above holds one).
    let big = raw_http::zeros(128 << 10);
    assert_eq!(raw_http::post(&addr, &[], &big).await.status, 413);
    let evil = raw_http::post(
        &addr,
        &[("Origin", "https://evil.example")],
        raw_http::initialize().to_string().as_bytes(),
    )
    .await;
    assert_eq!(evil.status, 403);
    let second = raw_http::post(&addr, &[], raw_http::initialize().to_string().as_bytes()).await;
    assert_eq!(second.status, 200, "{}", second.body);
    let third = raw_http::post(&addr, &[], raw_http::initialize().to_string().as_bytes()).await;
    assert_eq!(third.status, 503, "{}", third.body);
    drop(connection);
}

/// A slow tool for the shutdown tests: waits as long as it is told.
struct Slow;

#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// Milliseconds.
    ms: u64,
}

/// Waits.
#[tool]
impl Slow {
    /// Waits `ms` milliseconds.
    #[action(timeout = "5s")]
    async fn wait(&self, args: Wait) -> Result<&'static str, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok("waited")
    }
}

fn wait(id: u64, ms: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "slow", "arguments": {"action": "wait", "ms": ms}}})
    .to_string()
        + "\n"
}

/// Over stdio: a call in flight when the signal comes is answered, a call after it is refused
/// with SERVER_BUSY, and serving returns once the call in flight is done. On the paused clock
/// (all in process, over a duplex pipe): the 100 ms and 50 ms waits end only once every task
/// waits, so the call is in flight at the signal, and the signal taken before the next call.
#[tokio::test(start_paused = true)]
async fn a_graceful_shutdown_over_stdio_finishes_calls_in_flight_and_refuses_new_ones() {
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let (stop, signal) = tokio::sync::oneshot::channel::<()>();
    let server = Server::builder("s", "1").tool(Slow).build().unwrap();
    let serving = tokio::spawn(
        server
            .serve_io(read, write, StdioOptions::default())
            .with_graceful_shutdown(async {
                let _ = signal.await;
            })
            .into_future(),
    );
    let (reply, mut request) = tokio::io::split(client);
    let mut answers = BufReader::new(reply).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    request
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    answers.next_line().await.unwrap().expect("initialized");
    request
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    request.write_all(wait(1, 400).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    request.write_all(wait(2, 0).as_bytes()).await.unwrap();
    let mut by_id = std::collections::BTreeMap::new();
    for _ in 0..2 {
        let line = timeout(HUNG, answers.next_line())
            .await
            .expect("answered in time")
            .unwrap()
            .expect("a line");
        let answer: Value = serde_json::from_str(&line).unwrap();
        by_id.insert(answer["id"].as_u64().unwrap(), answer);
    }
    assert_eq!(by_id[&1]["result"]["isError"], false, "{}", by_id[&1]);
    let refused = by_id[&2]["result"]["content"][0]["text"].as_str().unwrap();
    let refused = parse_envelope(refused);
    assert_eq!(refused.code, "SERVER_BUSY");
    assert_eq!(
        refused.message,
        "Tool \"slow\" cannot take calls right now."
    );
    timeout(HUNG, serving)
        .await
        .expect("serving returns once the call in flight is answered")
        .unwrap()
        .expect("served");
}

/// The billing example over streamable HTTP, stopped with SIGTERM while a slow call is in
/// flight: that call is answered, a request after the signal gets 503 with `Retry-After`, and
/// the process exits cleanly.
#[cfg(unix)]
#[tokio::test]
async fn the_billing_example_stops_gracefully_on_sigterm() {
    let billing =
        raw_http::Billing::start(&mcp_fusion_drivers::artifacts::billing(), &["--stateless"])
            .await
            .expect("the billing server starts");
    // The export (five parts of 40 ms) is in flight once its first progress is streamed.
    let export = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "export_invoices", "format": "csv"},
                   "_meta": {"progressToken": "export"}}});
    let (stream, streamed) =
        crate::support::post_streaming_until(&billing.addr, &[], &export, "notifications/progress")
            .await;
    let slow = tokio::spawn(crate::support::rest_of_reply(stream, streamed));
    let pid = billing.child.id().expect("a pid");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Requests are served until the signal is taken, refused after: the first refused one.
    // (The export's remaining 160 ms must outlast the signal's delivery, as in any test that
    // signals a server while a call is in flight.)
    let mut id = 1;
    let refused = crate::support::eventually("a request refused after the signal", async || {
        id += 1;
        let reply = raw_http::post(
            &billing.addr,
            &[],
            raw_http::get_invoice(id).to_string().as_bytes(),
        )
        .await;
        assert!(
            matches!(reply.status, 200 | 503),
            "{} {}",
            reply.status,
            reply.body
        );
        (reply.status == 503).then_some(reply)
    })
    .await;
    assert_eq!(refused.header("retry-after"), Some("1"));
    let answered = timeout(HUNG, slow)
        .await
        .expect("answered in time")
        .unwrap();
    // The export's stream: its progress, then its answer, a success.
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(answered.contains(r#""isError":false"#), "{answered}");
    let mut child = billing.child;
    let status = timeout(HUNG, child.wait())
        .await
        .expect("it exits")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// A prompt and a resource of a server of the team's own, written with rmcp.
mod own {
    use mcp_fusion::rmcp::handler::server::ServerHandler;
    use mcp_fusion::rmcp::model::*;
    use mcp_fusion::rmcp::service::RequestContext;
    use mcp_fusion::rmcp::{ErrorData, RoleServer};

    pub(super) struct Own {
        pub tools: mcp_fusion::Server,
    }

    impl ServerHandler for Own {
        fn get_info(&self) -> InitializeResult {
            let capabilities = ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build();
            InitializeResult::new(capabilities)
        }

        async fn list_prompts(
            &self,
            _: Option<PaginatedRequestParams>,
            _: RequestContext<RoleServer>,
        ) -> Result<ListPromptsResult, ErrorData> {
            Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
                "greet",
                Some("Greets."),
                None,
            )]))
        }

        async fn get_prompt(
            &self,
            request: GetPromptRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<GetPromptResponse, ErrorData> {
            let message =
                PromptMessage::new_text(Role::User, format!("Say hello ({}).", request.name));
            Ok(GetPromptResult::new(vec![message]).into())
        }

        async fn list_resources(
            &self,
            _: Option<PaginatedRequestParams>,
            _: RequestContext<RoleServer>,
        ) -> Result<ListResourcesResult, ErrorData> {
            Ok(ListResourcesResult::with_all_items(vec![Resource::new(
                "memo://terms",
                "terms",
            )]))
        }

        async fn read_resource(
            &self,
            request: ReadResourceRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<ReadResourceResponse, ErrorData> {
            let contents = ResourceContents::text("Net 30.", request.uri);
            Ok(ReadResourceResult::new(vec![contents]).into())
        }

        async fn list_tools(
            &self,
            request: Option<PaginatedRequestParams>,
            context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            self.tools.list_tools(request, context).await
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            self.tools.call_tool(request, context).await
        }
    }
}

/// A `ServerHandler` of the team's own, with a prompt and a resource, serves mcp-fusion tools
/// through a built `Server`: an rmcp client gets all three, and the tools' rate limit and
/// validation envelopes apply.
#[tokio::test(flavor = "current_thread")]
async fn tools_are_served_by_a_server_handler_of_ones_own() {
    use mcp_fusion::rmcp::ServiceExt;
    use mcp_fusion::rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};

    let tools = Server::builder("s", "1").tool(Shop).build().unwrap();
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let own = own::Own { tools };
        if let Ok(running) = own.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (client, connection) = Client::connect(client_end).await.expect("connected");
    let peer = client.peer();
    let prompts = peer.list_all_prompts().await.expect("prompts");
    assert_eq!(prompts[0].name, "greet");
    let prompt = peer
        .get_prompt(GetPromptRequestParams::new("greet"))
        .await
        .expect("a prompt");
    assert_eq!(prompt.messages.len(), 1);
    let resources = peer.list_all_resources().await.expect("resources");
    assert_eq!(resources[0].uri, "memo://terms");
    let read = peer
        .read_resource(ReadResourceRequestParams::new("memo://terms"))
        .await
        .expect("read");
    assert_eq!(read.contents.len(), 1);
    let tools = client.list_tools().await.expect("tools");
    assert_eq!(tools[0].name, "shop");

    let invalid = client
        .call("shop.place", json!({"customer": "ada"}))
        .await
        .unwrap_err();
    assert_eq!(
        invalid.tool_error().map(ToolCallError::code),
        Some("VALIDATION_ERROR")
    );
    for quantity in 1..=2 {
        client
            .call(
                "shop.place",
                json!({"customer": "ada", "quantity": quantity}),
            )
            .await
            .expect("within the limit");
    }
    let limited = client
        .call("shop.place", json!({"customer": "ada", "quantity": 3}))
        .await
        .unwrap_err();
    assert_eq!(
        limited.tool_error().map(ToolCallError::code),
        Some("RATE_LIMITED")
    );
    drop(connection);
}

/// A tool of a rate limit, for the Redis test: each call is one script on Redis.
struct Single;

/// A hundred a minute.
#[tool(rate_limit(max = 100, window = "1m"))]
impl Single {
    /// Does it.
    async fn run(&self) -> Result<&'static str, ToolError> {
        Ok("ran")
    }
}

/// A Redis that answers in 500 ms: a store whose timeout is 2 s serves the call, as its
/// timeout says; one with the default 250 ms fails closed.
#[tokio::test(flavor = "current_thread")]
async fn a_redis_store_waits_as_long_as_its_timeout_says() {
    let redis = redis_server::RedisServer::start().expect("redis-server starts");
    let server = |timeout: Option<Duration>| {
        let mut store = RedisStore::builder(redis.url()).fail(FailPolicy::Closed);
        if let Some(timeout) = timeout {
            store = store.timeout(timeout);
        }
        let store = store.build().expect("a store");
        Server::builder("s", "1")
            .limit_store(store)
            .tool(Single)
            .build()
            .unwrap()
    };
    let params = || {
        let mut params = CallToolRequestParams::new("single");
        params.arguments = json!({"action": "run"}).as_object().cloned();
        params
    };
    for (timeout, expected) in [(Some(Duration::from_secs(2)), false), (None, true)] {
        let server = server(timeout);
        // Connected, and the scripts loaded, before Redis slows down.
        let warm = server.call(params()).await.expect("the tool exists");
        assert_eq!(warm.is_error, Some(false), "{warm:?}");
        let port = redis.port;
        // A script that keeps Redis busy for 500 ms: every other command waits.
        let busy = std::thread::spawn(move || {
            let slow = "local s = redis.call('TIME') repeat local n = redis.call('TIME') \
                        until (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 500000 return 1";
            let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            redis_eval(stream, slow)
        });
        // Real clock, the one wait here with no event: a Redis running a script answers no one
        // else, so nothing can tell that it has started; 50 ms of its 500 to start it.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let during = server.call(params()).await.expect("the tool exists");
        busy.join().unwrap();
        assert_eq!(
            during.is_error,
            Some(expected),
            "timeout {timeout:?}: {during:?}"
        );
        if expected {
            let text = during.content[0].as_text().unwrap().text.clone();
            assert_eq!(parse_envelope(&text).code, "SERVER_BUSY");
        }
    }
}

/// Sends `EVAL script 0` and waits for its reply.
fn redis_eval(mut stream: std::net::TcpStream, script: &str) {
    use std::io::{Read, Write};
    let request = format!(
        "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
        script.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = [0u8; 16];
    let _ = stream.read(&mut reply).unwrap();
}

/// The billing example over stdio, stopped with SIGTERM while a slow call is in flight: that
/// call is answered, a call after the signal is refused with SERVER_BUSY, and the process
/// exits cleanly once the call in flight is answered.
#[cfg(unix)]
#[tokio::test]
async fn the_billing_example_over_stdio_stops_gracefully_on_sigterm() {
    let mut billing = raw_stdio::Billing::start(&mcp_fusion_drivers::artifacts::billing(), &[])
        .await
        .expect("the billing server starts");
    // The export (five parts of 40 ms) is in flight once it reports its first part.
    let mut export = raw_stdio::call(1, "export_invoices", json!({"format": "csv"}));
    export["params"]["_meta"] = json!({"progressToken": "export"});
    billing.send(&export).await.unwrap();
    let first = billing.receive(HUNG).await.expect("a message in time");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let pid = billing.child.id().expect("a pid");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Calls are served until the signal is taken, refused after: up to the first refused one.
    // (The export's remaining 160 ms must outlast the signal's delivery, as in any test that
    // signals a server while a call is in flight.)
    let mut answers = std::collections::BTreeMap::new();
    let mut id = 1;
    crate::support::eventually("a call refused after the signal", async || {
        id += 1;
        billing
            .send(&raw_stdio::call(id, "list_invoices", json!({})))
            .await
            .unwrap();
        loop {
            let message = billing.receive(HUNG).await.expect("answered in time");
            let Some(answered) = message["id"].as_u64() else {
                continue; // The export's progress.
            };
            answers.insert(answered, raw_stdio::outcome(&message));
            if answered == id {
                return (answers[&id] == "SERVER_BUSY").then_some(());
            }
        }
    })
    .await;
    if let std::collections::btree_map::Entry::Vacant(first) = answers.entry(1) {
        let answer = loop {
            let message = billing.receive(HUNG).await.expect("answered in time");
            if message["id"] == 1 {
                break message;
            }
        };
        first.insert(raw_stdio::outcome(&answer));
    }
    assert_eq!(answers[&1], "ok");
    assert!(
        answers.values().all(|o| o == "ok" || o == "SERVER_BUSY"),
        "{answers:?}"
    );
    let status = timeout(HUNG, billing.child.wait())
        .await
        .expect("it exits")
        .unwrap();
    assert!(status.success(), "{status}");
}
