//! Serving that holds over stdio, tried as a hostile or careless client would: the billing
//! server as a child process, spoken to in raw newline-delimited JSON-RPC.
//!
//! Every request with an id is answered exactly once, also when stdin closes right after it;
//! a request reusing an id in flight is refused; a cancelled call stops and frees its slot;
//! messages before `initialize` do not stop the server; rate limits are per caller; and memory
//! stays bounded (read from `/proc/PID/status` on Linux) under floods, a client that never
//! reads stdout, and lines of the smallest JSON values.

mod common;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, timeout, timeout_at};

/// How long any one answer may take in these tests.
const ANSWER: Duration = Duration::from_secs(10);

/// The billing server as a child process.
struct Billing {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Billing {
    /// Starts the server with `args`, without the MCP handshake.
    fn spawn(args: &[&str]) -> Billing {
        let mut child = Command::new(common::billing_binary())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the billing server starts");
        Billing {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().expect("piped stdout")),
            child,
        }
    }

    /// Starts the server with `args` and does the handshake.
    async fn start(args: &[&str]) -> Billing {
        let mut billing = Billing::spawn(args);
        billing.initialize().await;
        billing
    }

    async fn initialize(&mut self) {
        self.send(&json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "serving-test", "version": "1.0.0"},
            },
        }))
        .await;
        let answer = self.receive().await.expect("initialize is answered");
        assert_eq!(answer["id"], "init", "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    async fn send_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let write = async {
            stdin.write_all(line).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        timeout(ANSWER, write)
            .await
            .expect("the server reads its input")
            .expect("the server's stdin is open");
    }

    async fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes()).await;
    }

    /// The next message, or `None` when stdout ends.
    async fn receive(&mut self) -> Option<Value> {
        self.receive_until(Instant::now() + ANSWER)
            .await
            .expect("an answer in time")
    }

    /// The next message; `Err` when none came before `until`, `Ok(None)` at the end.
    async fn receive_until(&mut self, until: Instant) -> Result<Option<Value>, ()> {
        let mut line = Vec::new();
        match timeout_at(until, self.stdout.read_until(b'\n', &mut line)).await {
            Err(_) => Err(()),
            Ok(read) => {
                if read.expect("stdout is readable") == 0 {
                    return Ok(None);
                }
                Ok(Some(serde_json::from_slice(&line).expect("a line of JSON")))
            }
        }
    }

    /// Every message until stdout ends.
    async fn receive_all(&mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(message) = self.receive().await {
            all.push(message);
        }
        all
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The exit status, once stdin is closed and the server is done.
    async fn exit_code(&mut self) -> Option<i32> {
        timeout(ANSWER, self.child.wait())
            .await
            .expect("the server exits")
            .expect("the exit status")
            .code()
    }

    /// The peak resident memory of the server so far, in MiB.
    #[cfg(target_os = "linux")]
    fn peak_mib(&self) -> u64 {
        let pid = self.child.id().expect("the server is running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .expect("VmHWM in /proc/PID/status");
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap();
        kib / 1024
    }
}

fn call(id: impl Into<Value>, action: &str, arguments: Value) -> Value {
    let mut arguments = arguments;
    arguments["action"] = action.into();
    json!({
        "jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
        "params": {"name": "billing", "arguments": arguments},
    })
}

fn cancel(id: impl Into<Value>) -> Value {
    json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id.into(), "reason": "the user gave up"},
    })
}

/// The envelope code of a `tools/call` answer, or `ok` for a success.
fn outcome(answer: &Value) -> String {
    let result = &answer["result"];
    if result["isError"] == true {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        return mcp_fusion::parse_envelope(text).code;
    }
    if result.is_object() {
        return "ok".into();
    }
    format!("jsonrpc {}", answer["error"]["code"])
}

/// A request nested deeper than serde_json reads, which the server itself answers -32600.
fn too_deep(id: u64) -> Vec<u8> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{{"x":{deep}}}}}}}"#)
        .into_bytes()
}

#[tokio::test]
async fn answers_made_while_reading_are_written_when_stdin_closes_right_after() {
    let mut billing = Billing::start(&[]).await;
    for id in 1..=10 {
        billing.send_line(&too_deep(id)).await;
    }
    billing.close_stdin();
    let answers = billing.receive_all().await;
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(
        ids,
        (1..=10)
            .map(Value::from)
            .collect::<Vec<_>>()
            .iter()
            .collect::<Vec<_>>()
    );
    assert!(answers.iter().all(|a| a["error"]["code"] == -32600));
    assert_eq!(billing.exit_code().await, Some(0));
}

#[tokio::test]
async fn calls_in_flight_when_stdin_closes_are_answered_within_the_drain() {
    let mut billing = Billing::start(&[]).await;
    billing
        .send(&call(1, "export_invoices", json!({"format": "csv"})))
        .await;
    billing.close_stdin();
    let answers = billing.receive_all().await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(
        (&answers[0]["id"], outcome(&answers[0]).as_str()),
        (&json!(1), "ok")
    );
    assert_eq!(billing.exit_code().await, Some(0));

    // With no drain period, the call is stopped instead: no answer, and a prompt exit.
    let mut billing = Billing::start(&["--drain", "0"]).await;
    billing
        .send(&call(1, "export_invoices", json!({"format": "csv"})))
        .await;
    let started = Instant::now();
    billing.close_stdin();
    assert_eq!(billing.receive_all().await, Vec::<Value>::new());
    assert_eq!(billing.exit_code().await, Some(0));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn an_id_in_flight_is_refused_and_free_again_once_answered() {
    let mut billing = Billing::start(&[]).await;
    billing
        .send(&call(7, "export_invoices", json!({"format": "csv"})))
        .await;
    billing.send(&call(7, "list_invoices", json!({}))).await;
    let first = billing.receive().await.unwrap();
    assert_eq!(first["id"], 7);
    assert_eq!(first["error"]["code"], -32600, "{first}");
    assert!(
        first["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already used by a request in flight")
    );
    let second = billing.receive().await.unwrap();
    assert_eq!(
        (&second["id"], outcome(&second).as_str()),
        (&json!(7), "ok")
    );
    // Answered: the id may be used again.
    billing.send(&call(7, "list_invoices", json!({}))).await;
    let third = billing.receive().await.unwrap();
    assert_eq!((&third["id"], outcome(&third).as_str()), (&json!(7), "ok"));
}

#[tokio::test]
async fn a_cancelled_call_stops_and_gives_back_its_slot() {
    let mut billing = Billing::start(&[]).await;
    // export_invoices runs 2 at a time with 2 waiting; four fill it.
    for id in 1..=4 {
        billing
            .send(&call(id, "export_invoices", json!({"format": "csv"})))
            .await;
    }
    for id in 1..=4 {
        billing.send(&cancel(id)).await;
    }
    for id in 5..=8 {
        billing
            .send(&call(id, "export_invoices", json!({"format": "csv"})))
            .await;
    }
    let mut answers = Vec::new();
    for _ in 5..=8 {
        answers.push(billing.receive().await.unwrap());
    }
    let mut seen: Vec<(i64, String)> = answers
        .iter()
        .map(|a| (a["id"].as_i64().unwrap(), outcome(a)))
        .collect();
    seen.sort();
    let expected: Vec<(i64, String)> = (5..=8).map(|id| (id, "ok".to_owned())).collect();
    assert_eq!(seen, expected);
    // The cancelled calls are never answered: a ping behind them is the next message.
    billing
        .send(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}))
        .await;
    assert_eq!(billing.receive().await.unwrap()["id"], "ping");
}

#[tokio::test]
async fn messages_before_initialize_do_not_stop_the_server() {
    let mut billing = Billing::spawn(&[]);
    billing
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    billing
        .send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await;
    billing.send(&cancel(5)).await;
    // A request is answered, as rmcp does before initialization: a ping, or an error.
    billing
        .send(&json!({"jsonrpc": "2.0", "id": "early", "method": "ping"}))
        .await;
    let pong = billing.receive().await.unwrap();
    assert_eq!((&pong["id"], &pong["result"]), (&json!("early"), &json!({})));
    billing
        .send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
        .await;
    let refused = billing.receive().await.unwrap();
    assert_eq!(refused["id"], "list");
    assert!(refused["error"]["code"].is_i64(), "{refused}");
    billing.initialize().await;
    billing.send(&call(1, "list_invoices", json!({}))).await;
    let answer = billing.receive().await.unwrap();
    assert_eq!(
        (&answer["id"], outcome(&answer).as_str()),
        (&json!(1), "ok")
    );
}

#[tokio::test]
async fn rate_limits_are_per_caller_whatever_the_middleware() {
    let mut billing = Billing::start(&["--rate-limit", "2/3600", "--no-audit"]).await;
    let mut outcomes = Vec::new();
    for (id, customer) in ["alice", "alice", "bob", "carol", "alice"]
        .iter()
        .enumerate()
    {
        let email = format!("{customer}@example.com");
        billing
            .send(&call(id, "list_invoices", json!({"customer_email": email})))
            .await;
        outcomes.push(outcome(&billing.receive().await.unwrap()));
    }
    assert_eq!(outcomes, ["ok", "ok", "ok", "ok", "RATE_LIMITED"]);
}

/// Writes `line` for `duration` (or until the server stops reading), reading stdout or not.
#[cfg(target_os = "linux")]
async fn flood(billing: &mut Billing, line: &[u8], duration: Duration, read_stdout: bool) {
    let mut stdin = billing.stdin.take().expect("stdin is open");
    let chunk: Vec<u8> = std::iter::repeat_n([line, b"\n"].concat(), 4096)
        .flatten()
        .collect();
    let writing = async {
        loop {
            if stdin.write_all(&chunk).await.is_err() {
                break;
            }
        }
    };
    let reading = async {
        let mut sink = Vec::with_capacity(1 << 16);
        loop {
            sink.clear();
            if !read_stdout
                || billing
                    .stdout
                    .read_until(b'\n', &mut sink)
                    .await
                    .unwrap_or(0)
                    == 0
            {
                std::future::pending::<()>().await;
            }
        }
    };
    let _ = timeout(duration, async { tokio::join!(writing, reading) }).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_flood_of_lines_the_server_answers_stays_bounded() {
    for read_stdout in [false, true] {
        let mut billing = Billing::start(&[]).await;
        flood(&mut billing, b"[]", Duration::from_secs(2), read_stdout).await;
        let peak = billing.peak_mib();
        assert!(peak < 64, "peak {peak} MiB (stdout read: {read_stdout})");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_client_that_never_reads_stdout_cannot_grow_the_server() {
    let mut billing = Billing::start(&[]).await;
    let list = call(1, "list_invoices", json!({"limit": 100})).to_string();
    flood(&mut billing, list.as_bytes(), Duration::from_secs(2), false).await;
    let peak = billing.peak_mib();
    assert!(peak < 64, "peak {peak} MiB");
}

/// A request whose arguments are one array of `n` zeros.
fn zeros(id: u64, n: usize) -> Vec<u8> {
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{{"action":"list_invoices","zeros":["#
    )
    .into_bytes();
    line.extend(std::iter::repeat_n(*b"0,", n).flatten());
    line.extend_from_slice(b"0]}}}");
    line
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn lines_of_the_smallest_values_cost_a_bounded_memory() {
    // Over the limit (1 MiB by default): refused without being held.
    let mut billing = Billing::start(&[]).await;
    billing.send_line(&zeros(1, 8 << 20)).await;
    let answer = billing.receive().await.unwrap();
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&json!(1), &json!(-32600))
    );
    let peak = billing.peak_mib();
    assert!(peak < 64, "peak {peak} MiB for a refused 16 MiB line");
    billing.send(&call(2, "list_invoices", json!({}))).await;
    assert_eq!(outcome(&billing.receive().await.unwrap()), "ok");

    // Just within it: read, answered, at most the bound StdioOptions states.
    let mut billing = Billing::start(&[]).await;
    billing.send_line(&zeros(1, (1 << 20) / 2 - 200)).await;
    let answer = billing.receive().await.unwrap();
    assert_eq!(outcome(&answer), "VALIDATION_ERROR");
    let peak = billing.peak_mib();
    assert!(peak < 160, "peak {peak} MiB for a 1 MiB line");
}

#[tokio::test]
async fn past_the_key_cap_new_callers_share_one_budget_and_known_ones_keep_theirs() {
    let args = [
        "--rate-limit",
        "1/3600",
        "--rate-limit-keys",
        "2",
        "--no-audit",
    ];
    let mut billing = Billing::start(&args).await;
    let mut outcomes = Vec::new();
    for (id, customer) in ["alice", "bob", "carol", "dave", "alice"]
        .iter()
        .enumerate()
    {
        let email = format!("{customer}@example.com");
        billing
            .send(&call(id, "list_invoices", json!({"customer_email": email})))
            .await;
        outcomes.push(outcome(&billing.receive().await.unwrap()));
    }
    // carol spends the shared overflow budget, dave finds it empty; alice's own is spent.
    assert_eq!(outcomes, ["ok", "ok", "ok", "RATE_LIMITED", "RATE_LIMITED"]);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn many_distinct_callers_cost_a_bounded_memory() {
    let args = [
        "--rate-limit",
        "1000000/1",
        "--rate-limit-keys",
        "1000",
        "--no-audit",
    ];
    let mut billing = Billing::start(&args).await;
    let calls = |from: usize, to: usize| -> Vec<u8> {
        (from..to)
            .flat_map(|i| {
                let email = format!("customer-{i}@example.com");
                let mut line = call(
                    i,
                    "list_invoices",
                    json!({"customer_email": email, "limit": 1}),
                )
                .to_string()
                .into_bytes();
                line.push(b'\n');
                line
            })
            .collect()
    };
    let exchange = async |billing: &mut Billing, from: usize, to: usize| {
        let batch = calls(from, to);
        let mut stdin = billing.stdin.take().unwrap();
        let writing = async move {
            stdin.write_all(&batch).await.unwrap();
            stdin
        };
        let reading = async {
            for _ in from..to {
                billing.receive().await.unwrap();
            }
        };
        let (stdin, ()) = tokio::join!(writing, reading);
        billing.stdin = Some(stdin);
    };
    exchange(&mut billing, 0, 5_000).await;
    let warm = billing.peak_mib();
    exchange(&mut billing, 5_000, 40_000).await;
    let peak = billing.peak_mib();
    assert!(
        peak <= warm + 4,
        "{warm} MiB after 5,000 callers, {peak} MiB after 40,000"
    );
}
