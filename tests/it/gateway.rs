//! The gateway: upstream MCP servers mounted under namespaces, as real processes (the
//! `upstream` driver, which misbehaves on demand, and the billing example), behind a server
//! served in process on the stdio transport and spoken to in raw JSON-RPC lines; and the
//! `gateway` example as a process fronting billing on stdio and over HTTP.

use std::path::PathBuf;
use std::time::Duration;

use mcp_fusion::contract::{ChangeSeverity, Contract, Diff, LockfileError, UpstreamContract};
use mcp_fusion::middleware::{CallInfo, Middleware, Next};
use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
use mcp_fusion::server::StdioOptions;
use mcp_fusion::server::gateway::Upstream;
use mcp_fusion::tools::{BoxFuture, Failure};
use mcp_fusion::{Server, ToolError, tool};
use mcp_fusion_drivers::artifacts;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

use crate::support::eventually;

use crate::hostile_upstream::{FLOOD, Hostile};

/// The most pages of `tools/list` a gateway reads of one upstream
/// (`runtime/src/server/gateway/listing.rs`).
const MAX_PAGES: usize = 64;

/// Far above what any machine needs; never a claim about speed.
const PATIENCE: Duration = Duration::from_secs(30);

/// The gateway's own tool.
#[tool]
async fn ping() -> Result<&'static str, ToolError> {
    Ok("pong")
}

/// A front desk that hands questions about echoes to the `t` upstream.
struct Desk;

/// The front desk.
#[tool]
impl Desk {
    /// Hands the conversation over.
    async fn echoes(&self, f: mcp_fusion::Context) -> Result<(), ToolError> {
        Err(f.handoff("t", Some("the echo team answers these")))
    }
}

/// The `upstream` driver with `args`, quick to retry.
fn upstream(args: &[&str]) -> Upstream {
    let binary = artifacts::driver("upstream");
    Upstream::command(binary.to_string_lossy(), args.iter().copied())
        .connect_timeout(Duration::from_secs(20))
        .backoff(Duration::from_millis(200), Duration::from_millis(400))
}

/// A file of the test's own, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "mcp-fusion-gateway-{}-{n}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        TempFile(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }

    fn read(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap_or_default()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A gateway served in process on the stdio transport, spoken to in raw lines.
struct Gateway {
    requests: WriteHalf<DuplexStream>,
    lines: mpsc::UnboundedReceiver<Value>,
    /// Lines read while waiting for another answer: notifications, other answers.
    seen: Vec<Value>,
}

impl Gateway {
    /// Sends call `id` of `t_slow` for 20 s (progress token `held`) and waits until the
    /// upstream runs it: until its first progress comes.
    async fn hold_slow_call(&mut self, id: u64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "t_slow", "arguments": {"ms": 20_000},
                       "_meta": {"progressToken": "held"}}}))
            .await;
        self.wait_for(|l| {
            l["method"] == "notifications/progress" && l["params"]["progressToken"] == "held"
        })
        .await;
    }

    /// Served, the session begun with `initialize` (2025-06-18).
    async fn serve(server: Server) -> Gateway {
        let mut gateway = Gateway::start(server);
        gateway
            .send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "1"}}}))
            .await;
        gateway.answer(0).await;
        gateway
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        gateway
    }

    /// Served, nothing sent yet.
    fn start(server: Server) -> Gateway {
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(
            server
                .serve_io(read, write, StdioOptions::default())
                .into_future(),
        );
        let (answers, requests) = tokio::io::split(client);
        let (sender, lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut answers = BufReader::new(answers).lines();
            while let Ok(Some(line)) = answers.next_line().await {
                let value = serde_json::from_str(&line).expect("every line is JSON");
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        Gateway {
            requests,
            lines,
            seen: Vec::new(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.requests.write_all(&line).await.unwrap();
    }

    /// The answer to request `id`.
    async fn answer(&mut self, id: u64) -> Value {
        if let Some(i) = self.seen.iter().position(|l| l["id"] == id) {
            return self.seen.remove(i);
        }
        loop {
            let line = timeout(PATIENCE, self.lines.recv())
                .await
                .unwrap_or_else(|_| panic!("no answer to {id}"))
                .expect("the gateway is serving");
            if line["id"] == id {
                return line;
            }
            self.seen.push(line);
        }
    }

    /// The first line read (since `seen` was last cleared) that `wanted` accepts, waiting
    /// for it; it stays among those seen.
    async fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            if let Some(line) = self.seen.iter().find(|l| wanted(l)) {
                return line.clone();
            }
            assert!(started.elapsed() < PATIENCE, "never came: {:?}", self.seen);
            if let Ok(Some(line)) = timeout(Duration::from_millis(100), self.lines.recv()).await {
                self.seen.push(line);
            }
        }
    }

    /// Whether request `id` is answered within `wait`.
    async fn answered_within(&mut self, id: u64, wait: Duration) -> bool {
        timeout(wait, self.answer(id)).await.is_ok()
    }

    async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(call(id, name, arguments)).await;
        self.answer(id).await["result"].clone()
    }

    async fn list(&mut self, id: u64) -> Vec<String> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
            .await;
        let answer = self.answer(id).await;
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Calls until the call succeeds; the codes of the envelopes met on the way.
    async fn until_ok(
        &mut self,
        ids: std::ops::RangeFrom<u64>,
        name: &str,
        args: Value,
    ) -> Vec<String> {
        let mut ids = ids;
        let mut met = Vec::new();
        eventually(&format!("a call to {name} to be served"), async || {
            let result = self.call(ids.next()?, name, args.clone()).await;
            match code(&result).as_str() {
                "ok" => Some(()),
                other => {
                    met.push(other.to_owned());
                    None
                }
            }
        })
        .await;
        met
    }
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// `ok`, or the code of the result's envelope.
fn code(result: &Value) -> String {
    if result["isError"] != true {
        return "ok".to_owned();
    }
    text(result)
        .split("code=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("an envelope: {result}"))
        .to_owned()
}

fn retry_after(result: &Value) -> u64 {
    let text = text(result);
    let inner = text
        .split("<retry_after>")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("a retry_after: {text}"));
    inner.parse().unwrap()
}

fn kill(pidfile: &TempFile) {
    let pid = pidfile.read();
    let status = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {pid}");
}

/// A gateway mounting `upstream` as `t` and nothing else, served, once it lists `t_echo`.
async fn serving_t(upstream: Upstream) -> Gateway {
    let mut gateway = Gateway::serve(mounting_t(upstream)).await;
    listed(&mut gateway, 1.., "t_echo").await;
    gateway
}

/// A gateway with only `upstream`, mounted as `t`.
fn mounting_t(upstream: Upstream) -> Server {
    Server::builder("gateway", "1")
        .mount("t", upstream)
        .build()
        .unwrap()
}

/// Waits until the gateway has sent `notifications/tools/list_changed` (since `seen` was
/// last cleared).
async fn told_list_changed(gateway: &mut Gateway) {
    gateway
        .wait_for(|l| l["method"] == "notifications/tools/list_changed")
        .await;
}

/// Waits until the gateway lists `name`.
async fn listed(gateway: &mut Gateway, ids: std::ops::RangeFrom<u64>, name: &str) -> Vec<String> {
    let mut ids = ids;
    eventually(&format!("{name} to be listed"), async || {
        let names = gateway.list(ids.next()?).await;
        names.iter().any(|n| n == name).then_some(names)
    })
    .await
}

#[tokio::test]
async fn an_upstream_killed_mid_call_is_unavailable_listed_still_and_served_again() {
    let pidfile = TempFile::new("pid");
    let server = Server::builder("gateway", "1")
        .tool(PingTool)
        .mount(
            "t",
            upstream(&["--pidfile", pidfile.arg()])
                .backoff(Duration::from_secs(3), Duration::from_secs(3)),
        )
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    let listing = listed(&mut gateway, 1.., "t_echo").await;
    let expected = [
        "ping",
        "t_echo",
        "t_slow",
        "t_refuse",
        "t_fail",
        "t_garbage",
        "t_silent",
        "t_twice",
        "t_die",
        "t_grow",
    ];
    assert_eq!(
        listing, expected,
        "local and upstream tools, in one listing"
    );
    let echoed = gateway.call(100, "t_echo", json!({"text": "hi"})).await;
    assert_eq!((code(&echoed), text(&echoed)), ("ok".to_owned(), "hi"));

    // A call in flight when the upstream dies.
    gateway
        .send(call(101, "t_slow", json!({"ms": 20_000})))
        .await;
    assert!(
        !gateway
            .answered_within(101, Duration::from_millis(300))
            .await
    );
    kill(&pidfile);
    let in_flight = gateway.answer(101).await["result"].clone();
    assert_eq!(
        code(&in_flight),
        "HANDOFF_UPSTREAM_UNAVAILABLE",
        "{in_flight}"
    );
    let first_wait = retry_after(&in_flight);
    assert!((1..=3).contains(&first_wait), "{in_flight}");
    assert!(
        text(&in_flight).contains("The upstream \"t\" is temporarily unavailable."),
        "{in_flight}"
    );

    // During the backoff: the same listing, and the remaining wait.
    assert_eq!(gateway.list(102).await, expected);
    let during = gateway.call(103, "t_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&during), "HANDOFF_UPSTREAM_UNAVAILABLE", "{during}");
    assert!(retry_after(&during) <= first_wait, "{during}");
    let ping = gateway.call(104, "ping", json!({})).await;
    assert_eq!(
        code(&ping),
        "ok",
        "the gateway's own tools are served meanwhile"
    );

    // The gateway starts it again once the backoff is over; no restart of the gateway.
    let met = gateway
        .until_ok(200.., "t_echo", json!({"text": "again"}))
        .await;
    assert!(
        met.iter().all(|c| c.starts_with("HANDOFF_")),
        "only handoff envelopes on the way: {met:?}"
    );
}

#[tokio::test]
async fn a_slow_starting_upstream_is_connecting_then_serves() {
    let server = Server::builder("gateway", "1")
        .mount("slow", upstream(&["--start-delay-ms", "1500"]))
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    let first = gateway.call(1, "slow_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&first), "HANDOFF_CONNECTING", "{first}");
    assert_eq!(retry_after(&first), 2);
    assert!(text(&first).contains("<message>The upstream \"slow\" is connecting.</message>"));
    assert!(
        text(&first).contains("<recovery>Wait 2 seconds, then retry the same call.</recovery>")
    );
    let met = gateway
        .until_ok(2.., "slow_echo", json!({"text": "hi"}))
        .await;
    assert!(met.iter().all(|c| c == "HANDOFF_CONNECTING"), "{met:?}");
}

#[tokio::test]
async fn a_name_the_upstream_does_not_list_gets_the_closest() {
    let mut gateway = serving_t(upstream(&[])).await;
    let wrong = gateway.call(100, "t_ecko", json!({"text": "hi"})).await;
    assert_eq!(code(&wrong), "HANDOFF_NAMESPACE_MISMATCH");
    let text = text(&wrong);
    assert!(
        text.contains("<message>The upstream \"t\" has no tool \"ecko\".</message>"),
        "{text}"
    );
    assert!(text.contains("<recovery>Did you mean \"t_echo\"? Choose one of the available tools and call it.</recovery>"), "{text}");
    assert!(
        text.contains("<action>t_echo</action>\n  <action>t_slow</action>"),
        "{text}"
    );
    // An abbreviation of one tool alone is close to it (ERRORS.md §11.2): `gbg` of `garbage`.
    let short = gateway.call(103, "t_gbg", json!({})).await;
    assert!(
        self::text(&short).contains("<recovery>Did you mean \"t_garbage\"? Choose one of the available tools and call it.</recovery>"),
        "{short}"
    );
    let far = gateway.call(101, "t_zzzzzzzzzz", json!({})).await;
    assert!(
        self::text(&far)
            .contains("<recovery>Choose one of the available tools and call it.</recovery>")
    );
    // A name under no namespace stays an unknown tool (a JSON-RPC error, as MCP says).
    gateway.send(call(102, "u_echo", json!({}))).await;
    let unknown = gateway.answer(102).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test]
async fn every_call_gets_one_answer_whatever_the_upstream_does() {
    let log = TempFile::new("log");
    let mut gateway =
        serving_t(upstream(&["--log", log.arg()]).call_timeout(Duration::from_secs(1))).await;

    let refused = gateway.call(100, "t_refuse", json!({})).await;
    assert_eq!(code(&refused), "VALIDATION_ERROR");
    assert!(text(&refused).contains("<message>The upstream \"t\" refused the arguments: missing field `invoice_id`</message>"), "{refused}");

    let failed = gateway.call(101, "t_fail", json!({})).await;
    assert_eq!(code(&failed), "INTERNAL_ERROR");
    assert!(text(&failed).contains("The tool \"fail\" of upstream \"t\" failed unexpectedly."));
    assert!(
        text(&failed).contains("<detail key=\"incident\">inc_"),
        "{failed}"
    );
    assert!(
        !failed.to_string().contains("hunter2"),
        "no internals: {failed}"
    );

    // Never answered: TIMEOUT at the gateway's deadline, and the upstream is told.
    let silent = gateway.call(102, "t_silent", json!({})).await;
    assert_eq!(code(&silent), "TIMEOUT", "{silent}");
    assert!(text(&silent).contains("The action \"t_silent\" did not finish within 1 second."));
    eventually("the upstream to be told of the cancellation", async || {
        log.read().contains("cancelled").then_some(())
    })
    .await;

    // Answered twice: one answer; the next call is served.
    let twice = gateway.call(103, "t_twice", json!({})).await;
    assert_eq!(text(&twice), "first");
    let echoed = gateway
        .call(104, "t_echo", json!({"text": "after twice"}))
        .await;
    assert_eq!(text(&echoed), "after twice");
    assert!(
        gateway.seen.iter().all(|l| l["id"] != 103),
        "no second answer: {:?}",
        gateway.seen
    );

    // A line that is no JSON-RPC, then nothing: one answer.
    let garbage = gateway.call(105, "t_garbage", json!({})).await;
    assert!(
        ["TIMEOUT", "HANDOFF_UPSTREAM_UNAVAILABLE"].contains(&code(&garbage).as_str()),
        "{garbage}"
    );

    // Dies during the call: unavailable, then started again.
    listed(&mut gateway, 106.., "t_echo").await;
    let _ = gateway
        .until_ok(200.., "t_echo", json!({"text": "up"}))
        .await;
    let died = gateway.call(300, "t_die", json!({})).await;
    assert_eq!(code(&died), "HANDOFF_UPSTREAM_UNAVAILABLE", "{died}");
    let _ = gateway
        .until_ok(301.., "t_echo", json!({"text": "up again"}))
        .await;
}

#[tokio::test]
async fn progress_and_cancellation_go_through() {
    let log = TempFile::new("log");
    let mut gateway = serving_t(upstream(&["--log", log.arg()])).await;

    gateway
        .send(json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
            "params": {"name": "t_slow", "arguments": {"ms": 300},
                       "_meta": {"progressToken": "mine"}}}))
        .await;
    let answer = gateway.answer(100).await;
    assert_eq!(text(&answer["result"]), "slept");
    let progress: Vec<&Value> = gateway
        .seen
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 2, "{:?}", gateway.seen);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "mine")
    );
    let ticks: Vec<u64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap() as u64)
        .collect();
    assert!(ticks.windows(2).all(|w| w[0] < w[1]), "in order: {ticks:?}");

    // Cancelled once the upstream runs it: once it reports progress.
    gateway.hold_slow_call(101).await;
    gateway
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 101}}),
        )
        .await;
    eventually("the cancellation to reach the upstream", async || {
        log.read().contains("cancelled").then_some(())
    })
    .await;
    assert!(
        !gateway
            .answered_within(101, Duration::from_millis(200))
            .await
    );
    let echoed = gateway
        .call(102, "t_echo", json!({"text": "still here"}))
        .await;
    assert_eq!(text(&echoed), "still here");

    // The trace goes on: the upstream's call is a child of the gateway's span for the call.
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 103, "method": "tools/call",
            "params": {"name": "t_echo", "arguments": {"text": "traced"},
                       "_meta": {"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")}}}))
        .await;
    gateway.answer(103).await;
    let logged = log.read();
    let line = logged
        .lines()
        .find(|l| l.contains(trace))
        .unwrap_or_else(|| panic!("the trace reached the upstream: {logged}"));
    let parent = line
        .split(&format!("00-{trace}-"))
        .nth(1)
        .and_then(|rest| rest.split('-').next())
        .unwrap();
    assert_eq!(parent.len(), 16, "{line}");
    assert_ne!(
        parent, "00f067aa0ba902b7",
        "the gateway's own span is the parent: {line}"
    );
    assert!(line.ends_with("-01\""), "sampled still: {line}");
    assert!(
        logged.contains("call echo traceparent=null"),
        "no trace made up for untraced calls: {logged}"
    );
}

#[tokio::test]
async fn an_mcp_fusion_upstream_answers_through_the_gateway_as_it_answers_directly() {
    let billing = artifacts::billing();
    let server = Server::builder("gateway", "1")
        .mount(
            "books",
            Upstream::command(billing.to_string_lossy(), Vec::<String>::new()),
        )
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "books_billing").await;
    let mut direct = mcp_fusion_drivers::raw_stdio::Billing::start(&billing, &[])
        .await
        .unwrap();
    let calls = [
        json!({"action": "get_invoice", "id": "inv_2026_0001"}),
        json!({"action": "get_invoice", "id": "inv_2026_0404"}),
        json!({"action": "get_invoice", "id": "inv_1"}),
        json!({"action": "get_invoise"}),
        json!({"action": "create_invoice", "customer_email": 5, "amount_cents": -1,
               "lines": "</message><evil/>"}),
        json!({"action": "void_invoice", "id": "inv_2026_0002"}),
    ];
    for (i, arguments) in calls.into_iter().enumerate() {
        let id = 100 + i as u64;
        let through = gateway.call(id, "books_billing", arguments.clone()).await;
        direct
            .send(&call(id, "billing", arguments.clone()))
            .await
            .unwrap();
        let answered = direct.receive(PATIENCE).await.expect("billing answers");
        assert_eq!(through, answered["result"], "{arguments}");
    }
}

/// The answer to request `id` of a raw stdio process, past notifications.
async fn answer_to(process: &mut mcp_fusion_drivers::raw_stdio::Billing, id: u64) -> Value {
    loop {
        let line = process.receive(PATIENCE).await.expect("an answer");
        if line["id"] == id {
            return line;
        }
        assert!(line["id"].is_null(), "another request's answer: {line}");
    }
}

#[tokio::test]
async fn the_example_gateway_fronts_billing_on_stdio_and_over_http() {
    let billing = artifacts::billing();
    let http = mcp_fusion_drivers::raw_http::Billing::start(&billing, &["--stateless"])
        .await
        .unwrap();
    let books = format!("books={}", billing.display());
    let crm = format!("crm=http://{}/mcp", http.addr);
    let mut gateway = mcp_fusion_drivers::raw_stdio::Billing::start(
        &artifacts::example("gateway"),
        &["--upstream", &books, "--upstream", &crm],
    )
    .await
    .unwrap();
    let mut id = 0;
    eventually("the gateway to list both upstreams' tools", async || {
        id += 1;
        gateway
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
            .await
            .unwrap();
        let answer = answer_to(&mut gateway, id).await;
        let names: Vec<&str> = answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        (names == ["desk", "books_billing", "crm_billing"]).then_some(())
    })
    .await;
    for (id, name) in [(100, "books_billing"), (101, "crm_billing")] {
        gateway
            .send(&call(
                id,
                name,
                json!({"action": "get_invoice", "id": "inv_2026_0001"}),
            ))
            .await
            .unwrap();
        let answer = answer_to(&mut gateway, id).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    gateway
        .send(&call(102, "desk", json!({"action": "directory"})))
        .await
        .unwrap();
    let answer = answer_to(&mut gateway, 102).await;
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("crm")
    );
}

#[tokio::test]
async fn the_official_typescript_sdk_client_calls_through_the_example_gateway() {
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk-client");
    assert!(
        client
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "the official TypeScript SDK client is not installed: run `cargo xtask setup`"
    );
    let books = format!("books={}", artifacts::billing().display());
    let mut gateway = tokio::process::Command::new(artifacts::example("gateway"))
        .args(["--http", "127.0.0.1:0", "--upstream", &books])
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut log = BufReader::new(gateway.stderr.take().unwrap()).lines();
    let (mut url, mut connected) = (None, false);
    while url.is_none() || !connected {
        let line = timeout(PATIENCE, log.next_line())
            .await
            .expect("the gateway starts")
            .unwrap()
            .expect("the gateway runs");
        if let Some(rest) = line.strip_prefix("gateway: streamable HTTP on ") {
            url = Some(rest.to_owned());
        }
        connected |= line.contains("connected to the upstream");
    }
    let steps = json!([
        {"list": true},
        {"call": "books_billing", "arguments": {"action": "get_invoice", "id": "inv_2026_0001"}},
        {"call": "books_billing", "arguments": {"action": "get_invoice", "id": "inv_1"}},
        {"call": "books_biling", "arguments": {}},
    ]);
    let output = timeout(
        Duration::from_secs(60),
        tokio::process::Command::new("node")
            .arg(client.join("client.mjs"))
            .arg(url.unwrap())
            .env("MCP_STEPS", steps.to_string())
            .env_remove("MCP_BEARER_TOKEN")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the SDK client finishes within a minute")
    .expect("node runs");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON line per step"))
        .collect();
    assert_eq!(output.status.code(), Some(0), "{lines:?}");
    assert_eq!(
        lines[0]["tools"],
        json!(["desk", "books_billing"]),
        "{lines:?}"
    );
    assert_eq!(lines[1]["result"]["isError"], false, "{lines:?}");
    let invalid = &lines[2]["result"];
    assert_eq!(invalid["isError"], true, "{lines:?}");
    assert!(text(invalid).starts_with("<validation_error action=\"billing.get_invoice\">"));
    assert_eq!(
        invalid["_meta"]["dev.mcp-fusion/errors"][0]["code"], "VALIDATION_ERROR",
        "the upstream's mirror arrives: {invalid}"
    );
    assert_eq!(
        code(&lines[3]["result"]),
        "HANDOFF_NAMESPACE_MISMATCH",
        "{lines:?}"
    );
    assert!(text(&lines[3]["result"]).contains("Did you mean \"books_billing\"?"));
}

#[tokio::test]
async fn a_handler_hands_the_conversation_to_an_upstream() {
    let server = Server::builder("gateway", "1")
        .tool(Desk)
        .mount("t", upstream(&[]))
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "t_echo").await;
    let handed = gateway.call(100, "desk", json!({"action": "echoes"})).await;
    assert_eq!(
        handed["isError"], false,
        "a warning: the call succeeded: {handed}"
    );
    let text = text(&handed);
    assert!(
        text.starts_with("<tool_error code=\"HANDOFF_CONNECTING\" severity=\"warning\">"),
        "{text}"
    );
    assert!(text.contains("<message>Handed off to \"t\": the echo team answers these</message>"));
    assert!(text.contains("<recovery>Continue with the tools of \"t\".</recovery>"));
    assert!(
        text.contains("<action>t_echo</action>\n  <action>t_slow</action>"),
        "{text}"
    );
    let mirror = &handed["_meta"]["dev.mcp-fusion/errors"][0];
    assert_eq!(mirror["code"], "HANDOFF_CONNECTING", "{handed}");
    assert_eq!(mirror["severity"], "warning");
}

#[tokio::test]
async fn when_an_upstream_lists_other_tools_clients_are_told() {
    let mut gateway = serving_t(upstream(&[])).await;
    let grown = gateway.call(100, "t_grow", json!({})).await;
    assert_eq!(text(&grown), "grown");
    // Told after the upstream said so (the first connection's notice came before), and the
    // listing has the new tool.
    gateway.seen.clear();
    told_list_changed(&mut gateway).await;
    let names = listed(&mut gateway, 101.., "t_extra").await;
    assert_eq!(
        names.last().map(String::as_str),
        Some("t_extra"),
        "{names:?}"
    );
    let extra = gateway.call(1000, "t_extra", json!({})).await;
    assert_ne!(code(&extra), "HANDOFF_NAMESPACE_MISMATCH", "{extra}");
}

/// A session is counted once however many `notifications/initialized` it sends: it is told
/// of a change once, not once for each.
#[tokio::test]
async fn a_session_that_says_initialized_again_and_again_is_told_once_a_change() {
    let mut gateway = serving_t(upstream(&[])).await;
    for _ in 0..100 {
        gateway
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
    gateway.list(50).await;
    gateway.seen.clear();
    let grown = gateway.call(100, "t_grow", json!({})).await;
    assert_eq!(text(&grown), "grown");
    told_list_changed(&mut gateway).await;
    listed(&mut gateway, 101.., "t_extra").await;
    let told = (gateway.seen.iter())
        .filter(|l| l["method"] == "notifications/tools/list_changed")
        .count();
    assert_eq!(told, 1, "one session, told once: {:?}", gateway.seen);
}

#[tokio::test]
async fn the_gateways_own_limits_apply_before_a_call_is_forwarded() {
    let mut gateway = serving_t(
        upstream(&[])
            .rate_limit(3, Duration::from_secs(600))
            .concurrency(1, 0),
    )
    .await;
    // A call that holds the one place until cancelled; running once the upstream reports
    // progress.
    gateway.hold_slow_call(100).await;
    let busy = gateway.call(101, "t_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&busy), "SERVER_BUSY", "{busy}");
    assert!(text(&busy).contains("Tool \"t_echo\" is at capacity (1 active, 0 queued)."));
    gateway
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 100}}),
        )
        .await;
    // The busy calls spent nothing: once the place is free, two more fit in the budget of 3.
    let mut id = 101;
    eventually("the cancelled call to free its place", async || {
        id += 1;
        let answered = gateway.call(id, "t_echo", json!({"text": "hi"})).await;
        match code(&answered).as_str() {
            "ok" => Some(()),
            "SERVER_BUSY" => None,
            other => panic!("{other}: {answered}"),
        }
    })
    .await;
    let ok = gateway.call(id + 1, "t_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&ok), "ok");
    let limited = gateway.call(id + 2, "t_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&limited), "RATE_LIMITED", "{limited}");
    assert!(text(&limited).contains("Rate limit exceeded: at most 3 calls per 10 minutes."));
}

/// A concurrency limit an upstream's calls could never pass is a build error naming the mount
/// and the fix, as a tool's is: 0 calls at once, or leases a Redis store could not renew in
/// time (the upstream's call timeout plus a margin shorter than three Redis timeouts).
#[tokio::test]
async fn an_upstream_limit_no_call_could_pass_is_a_build_error() {
    use mcp_fusion::server::limits::RedisStore;
    let crm = || Upstream::http("http://127.0.0.1:1/mcp");
    let refused = Server::builder("front-desk", "1")
        .mount("crm", crm().concurrency(0, 4))
        .build()
        .expect_err("no call could run");
    assert_eq!(refused.problems().len(), 1, "{refused}");
    let problem = &refused.problems()[0];
    assert!(
        problem.starts_with("mount \"crm\": a concurrency limit of 0 calls at once")
            && problem.contains("Upstream::concurrency"),
        "{problem}"
    );
    // Connected lazily: nothing listens there, and nothing needs to.
    let store = RedisStore::builder("redis://127.0.0.1:1")
        .leases(Duration::from_millis(10), Duration::from_secs(30))
        .build()
        .unwrap();
    let refused = Server::builder("front-desk", "1")
        .mount(
            "crm",
            crm()
                .concurrency(2, 0)
                .call_timeout(Duration::from_millis(100)),
        )
        .limit_store(store)
        .build()
        .expect_err("leases too short to renew");
    let problem = &refused.problems()[0];
    assert!(
        problem.starts_with("mount \"crm\": its Redis leases would last 110 ms"),
        "{problem}"
    );
    assert!(
        Server::builder("front-desk", "1")
            .mount("crm", crm().concurrency(1, 0))
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn an_upstream_behind_oauth_is_reached_with_the_gateways_own_token() {
    use mcp_fusion_drivers::issuer::Issuer;
    const AUDIENCE: &str = "https://billing.example/mcp";
    let issuer = Issuer::start().await.unwrap();
    let billing = mcp_fusion_drivers::raw_http::Billing::start(
        &artifacts::billing(),
        &[
            "--oauth-issuer",
            issuer.url.as_str(),
            "--oauth-audience",
            AUDIENCE,
        ],
    )
    .await
    .unwrap();
    let url = format!("http://{}/mcp", billing.addr);
    let token = issuer.token(AUDIENCE, "gateway", "invoices:write");
    let server = Server::builder("gateway", "1")
        .mount("books", Upstream::http(&url).bearer(token))
        .mount(
            "nobody",
            Upstream::http(&url).backoff(Duration::from_secs(60), Duration::from_secs(60)),
        )
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "books_billing").await;
    let created = gateway
        .call(
            100,
            "books_billing",
            json!({"action": "create_invoice", "customer_email": "a@example.com",
                   "amount_cents": 100, "currency": "EUR",
                   "lines": [{"description": "Tea", "quantity": 1}]}),
        )
        .await;
    assert_eq!(
        code(&created),
        "ok",
        "the gateway's token grants the scope: {created}"
    );
    // Without a token of its own, the upstream refuses the gateway (401): its credentials
    // were refused, which no retry mends (FORBIDDEN, critical, no retry_after).
    let mut id = 100;
    let refused = eventually("nobody_billing to be past connecting", async || {
        id += 1;
        let result = gateway
            .call(id, "nobody_billing", json!({"action": "get_invoice"}))
            .await;
        (code(&result) != "HANDOFF_CONNECTING").then_some(result)
    })
    .await;
    assert_eq!(code(&refused), "FORBIDDEN", "{refused}");
    assert!(
        refused
            .to_string()
            .contains("refused the gateway's credentials"),
        "{refused}"
    );
}

/// The names of the tools an upstream contract records.
fn recorded(contract: &Contract, namespace: &str) -> Vec<String> {
    let upstream = contract
        .upstream(namespace)
        .expect("the upstream is recorded");
    upstream.tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn the_lockfile_records_upstreams_and_the_gateway_lists_them_before_reaching_them() {
    // A gateway that reached its upstream records what it lists, sorted by name.
    let reached = mounting_t(upstream(&[]));
    assert_eq!(reached.reach_upstreams().await, Vec::<String>::new());
    let contract = Contract::of(&reached);
    let names = recorded(&contract, "t");
    assert_eq!(
        names,
        [
            "die", "echo", "fail", "garbage", "grow", "refuse", "silent", "slow", "twice"
        ]
    );
    let text = contract.to_lockfile();
    assert!(
        text.contains("\"upstreams\": [\n    {\n      \"namespace\": \"t\","),
        "{text}"
    );
    assert_eq!(Contract::from_lockfile(&text).unwrap(), contract);
    // An upstream tool edited by hand is refused like an action.
    let edited = text.replacen("Echoes text.", "Echoes text loudly.", 1);
    assert!(matches!(
        Contract::from_lockfile(&edited),
        Err(LockfileError::Digest { action }) if action == "t_echo"
    ));

    // The lockfile of yesterday: without `die`, and with an upstream `gone` that cannot be
    // reached today.
    let mut locked = Contract::from_lockfile(&text).unwrap();
    let mut yesterday = contract.upstream("t").unwrap().tools.clone();
    yesterday.retain(|tool| tool.name != "die");
    locked.upstreams = vec![
        UpstreamContract::new("gone", yesterday.clone()),
        UpstreamContract::new("t", yesterday),
    ];
    // The diff names upstream tools as the gateway lists them.
    let diff = Diff::between(&locked, &contract);
    assert_eq!(
        diff.tool("t_die")[0].severity,
        ChangeSeverity::Safe,
        "{diff}"
    );
    assert_eq!(diff.tool("gone_echo")[0].severity, ChangeSeverity::Breaking);

    let server = Server::builder("gateway", "1")
        .tool(PingTool)
        .mount("t", upstream(&["--start-delay-ms", "3000"]))
        .mount(
            "gone",
            Upstream::command("/nonexistent/mcp-fusion-upstream", Vec::<String>::new())
                .backoff(Duration::from_millis(200), Duration::from_millis(400)),
        )
        .contract_lock(locked)
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server.clone()).await;
    // Before either is reached: the recorded tools, never an empty listing.
    let names = gateway.list(1).await;
    let locked_names = [
        "echo", "fail", "garbage", "grow", "refuse", "silent", "slow", "twice",
    ];
    let expected: Vec<String> = std::iter::once("ping".to_owned())
        .chain(locked_names.iter().map(|n| format!("t_{n}")))
        .chain(locked_names.iter().map(|n| format!("gone_{n}")))
        .collect();
    assert_eq!(names, expected);
    let connecting = gateway.call(2, "t_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&connecting), "HANDOFF_CONNECTING", "{connecting}");
    // The upstream that cannot be reached keeps its recorded tools listed, and its calls are
    // told when to come back.
    assert_eq!(server.reach_upstreams().await, ["gone"]);
    let gone = gateway.call(3, "gone_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&gone), "HANDOFF_UPSTREAM_UNAVAILABLE", "{gone}");
    // Once `t` answers, its own listing replaces the recorded one (with `die`), and the
    // clients are told.
    let names = listed(&mut gateway, 10.., "t_die").await;
    assert!(names.iter().any(|n| n == "gone_echo"), "{names:?}");
    told_list_changed(&mut gateway).await;
    let echoed = gateway.call(1000, "t_echo", json!({"text": "hi"})).await;
    assert_eq!(code(&echoed), "ok", "{echoed}");
}

#[tokio::test]
async fn the_example_gateway_writes_and_checks_a_lockfile_with_its_upstreams() {
    let lockfile = TempFile::new("gateway.lock");
    let t = format!("t={}", artifacts::driver("upstream").display());
    let run = |args: &[&str]| {
        std::process::Command::new(artifacts::example("gateway"))
            .args(["--upstream", &t])
            .args(args)
            .output()
            .unwrap()
    };
    let written = run(&["--contract-write", lockfile.arg()]);
    assert!(written.status.success(), "{written:?}");
    let text = lockfile.read();
    let contract = Contract::from_lockfile(&text).unwrap();
    assert_eq!(contract.tools[0].name, "desk");
    assert_eq!(recorded(&contract, "t").len(), 9);
    let checked = run(&["--contract-diff", lockfile.arg()]);
    assert!(checked.status.success(), "{checked:?}");
    assert_eq!(
        String::from_utf8_lossy(&checked.stdout),
        "The contract matches the lockfile.\n"
    );
    // An upstream it cannot reach: no lockfile that forgets its tools.
    let unreachable = run(&[
        "--upstream",
        "gone=/nonexistent/mcp-fusion-upstream",
        "--contract-write",
        lockfile.arg(),
    ]);
    assert_eq!(unreachable.status.code(), Some(2), "{unreachable:?}");
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("\"gone\""));
    assert_eq!(lockfile.read(), text);
}

/// The server's middleware: records what it sees of each call, refuses `forbidden`, panics on
/// `panic`, and marks what passed.
struct Screening(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Middleware for Screening {
    fn handle<'a>(
        &'a self,
        info: &'a CallInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
        Box::pin(async move {
            let text = info.arguments()["text"].as_str().unwrap_or_default();
            self.0
                .lock()
                .unwrap()
                .push(format!("{} {} {text}", info.tool(), info.action()));
            match text {
                "forbidden" => Err(ToolError::new(
                    mcp_fusion::ErrorCode::FORBIDDEN,
                    "Echoes of this word are not allowed.",
                )
                .into()),
                "panic" => panic!("the middleware's bug, with secret=hunter2"),
                _ => {
                    let mut result = next.run().await?;
                    result.content.push(ContentBlock::text("seen by the desk"));
                    Ok(result)
                }
            }
        })
    }
}

#[tokio::test]
async fn the_servers_middleware_and_callers_budgets_apply_to_forwarded_calls() {
    let log = TempFile::new("calls.log");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = Server::builder("gateway", "1")
        .middleware(Screening(seen.clone()))
        .rate_limit_key(|call| Some(call.arguments()["user"].as_str()?.to_owned()))
        .mount(
            "t",
            upstream(&["--log", log.arg()]).rate_limit(1, Duration::from_secs(600)),
        )
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "t_echo").await;

    let mut answers = Vec::new();
    for (id, said, user, expected) in [
        // What passes the middleware is forwarded, and its answer comes back through it.
        (100, "hi", "ann", "ok"),
        // Each caller key has its own budget of the upstream's limit.
        (101, "hi", "ann", "RATE_LIMITED"),
        (102, "hi", "bob", "ok"),
        // The middleware's refusal is the answer; the upstream never sees the call.
        (103, "forbidden", "cid", "FORBIDDEN"),
        // A middleware that panics: INTERNAL_ERROR naming the call, nothing of the panic.
        (104, "panic", "dee", "INTERNAL_ERROR"),
        // The gateway is still serving.
        (105, "after", "eve", "ok"),
    ] {
        let answer = gateway
            .call(id, "t_echo", json!({"text": said, "user": user}))
            .await;
        assert_eq!(code(&answer), expected, "{answer}");
        answers.push(answer);
    }
    assert_eq!(answers[0]["content"][1]["text"], "seen by the desk");
    let panicked = text(&answers[4]);
    assert!(panicked.contains("\"t_echo\""), "{panicked}");
    assert!(!panicked.contains("hunter2"), "{panicked}");

    assert_eq!(
        *seen.lock().unwrap(),
        // The limits come before the middleware: the call refused by them is not seen.
        [
            "t_echo t_echo hi",
            "t_echo t_echo hi",
            "t_echo t_echo forbidden",
            "t_echo t_echo panic",
            "t_echo t_echo after",
        ]
    );
    let forwarded: Vec<String> = log
        .read()
        .lines()
        .filter(|l| l.starts_with("call "))
        .map(|l| l.split(' ').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(forwarded, ["echo", "echo", "echo"], "{}", log.read());
}

#[tokio::test]
async fn a_2026_client_listening_for_tools_is_told_on_its_stream() {
    let mut gateway = Gateway::start(mounting_t(upstream(&[])));
    // No `initialize`: each request carries what it was (MCP 2026-07-28).
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    });
    gateway
        .send(json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": {"toolsListChanged": true, "promptsListChanged": true}}}))
        .await;
    // Acknowledged with what the gateway tells: tools listing changes, nothing else.
    let acknowledged = gateway
        .wait_for(|l| l["method"] == "notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        acknowledged["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{acknowledged}"
    );
    // The upstream grows a tool: the stream is told, under its id.
    let mut id = 0;
    eventually("t_grow to be served", async || {
        id += 1;
        gateway
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "t_grow", "arguments": {}, "_meta": meta}}))
            .await;
        let result = gateway.answer(id).await["result"].clone();
        (code(&result) == "ok").then_some(())
    })
    .await;
    let told = |l: &Value| {
        l["method"] == "notifications/tools/list_changed"
            && l["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
    };
    gateway.wait_for(told).await;
    // Nothing unsolicited: every list_changed came on the stream.
    assert!(
        gateway
            .seen
            .iter()
            .filter(|l| l["method"] == "notifications/tools/list_changed")
            .all(told),
        "{:?}",
        gateway.seen
    );
}

#[tokio::test]
async fn an_upstream_failing_calls_in_a_row_trips_the_breaker_then_is_probed_again() {
    let pidfile = TempFile::new("pid");
    let mut gateway = serving_t(
        upstream(&["--pidfile", pidfile.arg()])
            .call_timeout(Duration::from_millis(300))
            .backoff(Duration::from_millis(1500), Duration::from_secs(3))
            .breaker(2),
    )
    .await;
    let _ = gateway
        .until_ok(10.., "t_echo", json!({"text": "up"}))
        .await;
    let first = pidfile.read();

    // A refusal and an upstream's result are answers: they count for nothing.
    let refused = gateway.call(100, "t_refuse", json!({})).await;
    assert_eq!(code(&refused), "VALIDATION_ERROR", "{refused}");
    let silent = gateway.call(101, "t_silent", json!({})).await;
    assert_eq!(code(&silent), "TIMEOUT", "{silent}");
    let echoed = gateway
        .call(102, "t_echo", json!({"text": "between"}))
        .await;
    assert_eq!(code(&echoed), "ok", "{echoed}");
    // Two failures in a row: the second trips the breaker.
    for id in [103, 104] {
        let silent = gateway.call(id, "t_silent", json!({})).await;
        assert_eq!(code(&silent), "TIMEOUT", "{silent}");
    }
    // Nothing is forwarded meanwhile, even a call the upstream would serve: the time until the
    // probe instead.
    let open = gateway.call(105, "t_echo", json!({"text": "open"})).await;
    assert_eq!(code(&open), "HANDOFF_UPSTREAM_UNAVAILABLE", "{open}");
    assert!((1..=2).contains(&retry_after(&open)), "{open}");
    // After the backoff, a new connection (a new process) serves again.
    let _ = gateway
        .until_ok(200.., "t_echo", json!({"text": "probe"}))
        .await;
    assert_ne!(
        pidfile.read(),
        first,
        "the dropped connection's process was started again"
    );
}

#[tokio::test]
async fn the_first_listing_waits_for_an_upstream_it_has_not_listed_yet() {
    let billing = artifacts::billing();
    let server = Server::builder("gateway", "1")
        .tool(PingTool)
        .mount(
            "books",
            Upstream::command(billing.to_string_lossy(), Vec::<String>::new()),
        )
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    // A host that lists once sees the upstream's tools: the first listing waited for them.
    assert_eq!(gateway.list(1).await, ["ping", "books_billing"]);
}

#[tokio::test]
async fn one_callers_failing_calls_open_the_breaker_for_that_caller_alone() {
    let server = Server::builder("gateway", "1")
        .rate_limit_key(|call| Some(call.arguments()["user"].as_str()?.to_owned()))
        .mount(
            "t",
            upstream(&[])
                .call_timeout(Duration::from_millis(300))
                .backoff(Duration::from_secs(60), Duration::from_secs(60))
                .breaker(2)
                .rate_limit(1000, Duration::from_secs(60)),
        )
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "t_echo").await;
    let echo = |user: &str| json!({"text": "hi", "user": user});
    // Two callers are served.
    for (id, user) in [(100, "ann"), (101, "bob")] {
        let served = gateway.call(id, "t_echo", echo(user)).await;
        assert_eq!(code(&served), "ok", "{served}");
    }
    // Bob's calls fail in a row (never answered upstream): the second opens his breaker.
    for id in [102, 103] {
        let silent = gateway.call(id, "t_silent", json!({"user": "bob"})).await;
        assert_eq!(code(&silent), "TIMEOUT", "{silent}");
    }
    let refused = gateway.call(104, "t_echo", echo("bob")).await;
    assert_eq!(code(&refused), "HANDOFF_UPSTREAM_UNAVAILABLE", "{refused}");
    assert!(retry_after(&refused) > 30, "the backoff: {refused}");
    // Ann is still served, on the same connection.
    let served = gateway.call(105, "t_echo", echo("ann")).await;
    assert_eq!(code(&served), "ok", "{served}");
}

/// An upstream that says its tools changed at every page of a listing that never ends: the
/// gateway lists it one listing at a time, at most 64 pages each, and meanwhile serves its
/// last whole listing and its calls.
#[tokio::test]
async fn an_endless_relisting_is_bounded_in_pages_and_one_at_a_time() {
    relisted_within(0, MAX_PAGES).await;
}

/// The same upstream, its pages of one tool of 512 KiB: each listing ends at the 4 MiB a
/// gateway keeps of an upstream's tools, on the eighth page.
#[tokio::test]
async fn an_endless_relisting_is_bounded_in_bytes() {
    relisted_within(512 << 10, 8).await;
}

/// Storms a gateway with an endless relisting of pages whose one tool has a description of
/// `description` bytes; checks that each listing reads `pages` pages, one listing at a time.
async fn relisted_within(description: usize, pages: usize) {
    let hostile = Hostile::start().await;
    let server = Server::builder("gateway", "1")
        .tool(PingTool)
        .mount("h", Upstream::http(&hostile.url).connect_timeout(PATIENCE))
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "h_echo").await;
    hostile.storm(description).await;
    // Three whole listings, and the first page of the next.
    timeout(PATIENCE, hostile.asked(3 * pages + 1))
        .await
        .expect("the gateway lists again and again");
    assert_eq!(
        gateway.list(100).await,
        ["ping", "h_echo", "h_flood", "h_ask"]
    );
    let echoed = gateway.call(101, "h_echo", json!({"text": "calm"})).await;
    assert_eq!(text(&echoed), "calm", "{echoed}");
    let asked = hostile.pages();
    assert_eq!(asked[0], 0, "{asked:?}");
    // Each page asked for follows the one before it: one listing at a time, each begun again
    // only after the last page the gateway reads.
    let last = pages as u64 - 1;
    for (i, pair) in asked.windows(2).enumerate() {
        let next = pair[1] == pair[0] + 1 || (pair[1] == 0 && pair[0] == last);
        assert!(
            next,
            "request {}: page {} after page {}: {:?}",
            i + 1,
            pair[1],
            pair[0],
            &asked[..asked.len().min(400)]
        );
    }
    assert!(asked.iter().all(|&page| page <= last), "{asked:?}");
}

/// An upstream that floods a call with progress before it answers: the client is told at most
/// one note per `progress_interval` (an hour here: the first, and none of the rest), then the
/// answer, and nothing of that call after it.
#[tokio::test]
async fn an_upstreams_flood_of_progress_is_throttled_and_ends_with_the_answer() {
    let hostile = Hostile::start().await;
    let server = Server::builder("gateway", "1")
        .progress_interval(Duration::from_secs(3600))
        .mount("h", Upstream::http(&hostile.url))
        .build()
        .unwrap();
    let mut gateway = Gateway::serve(server).await;
    listed(&mut gateway, 1.., "h_flood").await;
    gateway.seen.clear();
    gateway
        .send(json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
            "params": {"name": "h_flood", "arguments": {},
                       "_meta": {"progressToken": "flood"}}}))
        .await;
    let answer = gateway.answer(100).await;
    assert_eq!(text(&answer["result"]), "flooded", "{answer}");
    let progress = |lines: &[Value]| {
        lines
            .iter()
            .filter(|l| l["method"] == "notifications/progress")
            .count()
    };
    let before = progress(&gateway.seen);
    assert!(before <= 1, "{before} of {FLOOD} notes: {:?}", gateway.seen);
    // Nothing of the call after its answer: the next answer comes first.
    gateway.seen.clear();
    let echoed = gateway.call(101, "h_echo", json!({"text": "after"})).await;
    assert_eq!(text(&echoed), "after", "{echoed}");
    assert_eq!(progress(&gateway.seen), 0, "{:?}", gateway.seen);
}
