//! The stdio server tried as a hostile or careless client would, at length: the long variants
//! of `tests/serving.rs`, one row each, with the server's peak memory (`VmHWM`). Linux only.
//!
//! ```text
//! cargo build --release --examples
//! target/release/examples/stdio_limits [--server PATH] [--seconds 5]
//! ```
//!
//! The server is the `billing` example next to this executable unless `--server` names another
//! build of it (an older commit's, to compare). Rows that need the billing server's limit
//! flags (`--rate-limit`, `--rate-limit-keys`) report what a build without them does.

#[path = "common/measure.rs"]
mod measure;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout;

type Error = Box<dyn std::error::Error>;

struct Billing {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Billing {
    async fn start(server: &PathBuf, args: &[&str], handshake: bool) -> Result<Billing, Error> {
        let mut child = Command::new(server)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let mut billing = Billing {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().ok_or("no stdout")?),
            child,
        };
        if handshake {
            billing.initialize().await?;
        }
        Ok(billing)
    }

    async fn initialize(&mut self) -> Result<(), Error> {
        self.send(&json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "stdio-limits", "version": "1"}},
        }))
        .await?;
        self.receive(Duration::from_secs(10))
            .await
            .ok_or("initialize was not answered")?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }

    async fn send_line(&mut self, line: &[u8]) -> Result<(), Error> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        stdin.write_all(line).await?;
        stdin.write_all(b"\n").await?;
        Ok(stdin.flush().await?)
    }

    async fn send(&mut self, message: &Value) -> Result<(), Error> {
        self.send_line(message.to_string().as_bytes()).await
    }

    /// The next message within `wait`; `None` when none came or stdout ended.
    async fn receive(&mut self, wait: Duration) -> Option<Value> {
        let mut line = Vec::new();
        match timeout(wait, self.stdout.read_until(b'\n', &mut line)).await {
            Ok(Ok(n)) if n > 0 => serde_json::from_slice(&line).ok(),
            _ => None,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    fn peak_mib(&self) -> f64 {
        measure::status_kib(self.pid(), "VmHWM").unwrap_or(0) as f64 / 1024.0
    }

    fn rss_mib(&self) -> f64 {
        measure::status_kib(self.pid(), "VmRSS").unwrap_or(0) as f64 / 1024.0
    }

    /// Whether the process is still running.
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

fn call(id: impl Into<Value>, action: &str, mut arguments: Value) -> Value {
    arguments["action"] = action.into();
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": "billing", "arguments": arguments}})
}

fn outcome(answer: &Value) -> String {
    let result = &answer["result"];
    if result["isError"] == true {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        return mcp_fusion::parse_envelope(text).code;
    }
    if result.is_object() {
        return "ok".into();
    }
    format!("error {}", answer["error"]["code"])
}

/// Writes `line` repeatedly for `seconds`, reading stdout or not; returns the lines written.
async fn flood(billing: &mut Billing, line: &[u8], seconds: Duration, read: bool) -> usize {
    let Some(mut stdin) = billing.stdin.take() else {
        return 0;
    };
    let per_chunk = 1024;
    let chunk: Vec<u8> = std::iter::repeat_n([line, b"\n"].concat(), per_chunk)
        .flatten()
        .collect();
    let mut written = 0;
    let writing = async {
        while stdin.write_all(&chunk).await.is_ok() {
            written += per_chunk;
        }
    };
    let reading = async {
        let mut sink = Vec::new();
        loop {
            sink.clear();
            if !read
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
    let _ = timeout(seconds, async { tokio::join!(writing, reading) }).await;
    written
}

fn too_deep(id: u64) -> Vec<u8> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{{"x":{deep}}}}}}}"#).into_bytes()
}

fn zeros(id: u64, bytes: usize) -> Vec<u8> {
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{{"action":"list_invoices","zeros":["#).into_bytes();
    line.extend(std::iter::repeat_n(*b"0,", bytes / 2).flatten());
    line.extend_from_slice(b"0]}}}");
    line
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).cloned()
    };
    let server: PathBuf = match value("--server") {
        Some(path) => path.into(),
        None => std::env::current_exe()?.with_file_name("billing"),
    };
    let seconds = Duration::from_secs(value("--seconds").map_or(Ok(5), |s| s.parse())?);
    println!("server: {}\n", server.display());
    println!("| row | measured |\n|---|---|");

    // Answers made while reading, then stdin closed at once.
    let mut billing = Billing::start(&server, &[], true).await?;
    for id in 1..=10 {
        billing.send_line(&too_deep(id)).await?;
    }
    billing.stdin = None;
    let mut answered = 0;
    while billing.receive(Duration::from_secs(5)).await.is_some() {
        answered += 1;
    }
    println!("| guard answers, stdin closed right after | {answered} of 10 answered |");

    // A call in flight when stdin closes.
    let mut billing = Billing::start(&server, &[], true).await?;
    billing
        .send(&call(1, "export_invoices", json!({"format": "csv"})))
        .await?;
    billing.stdin = None;
    let answer = billing.receive(Duration::from_secs(10)).await;
    let shown = answer.as_ref().map_or("no answer".into(), outcome);
    println!("| export_invoices in flight, stdin closed | {shown} |");

    // Floods of lines the server answers itself.
    for read in [false, true] {
        let mut billing = Billing::start(&server, &[], true).await?;
        let lines = flood(&mut billing, b"[]", seconds, read).await;
        println!(
            "| `[]` flood for {seconds:?}, stdout {} | {lines} lines written, peak {:.0} MiB |",
            if read { "read" } else { "not read" },
            billing.peak_mib()
        );
    }

    // Calls from a client that never reads stdout.
    let mut billing = Billing::start(&server, &[], true).await?;
    let list = call(1, "list_invoices", json!({"limit": 100})).to_string();
    let calls = flood(&mut billing, list.as_bytes(), seconds, false).await;
    println!(
        "| list_invoices for {seconds:?}, stdout never read | {calls} calls written, peak {:.0} MiB |",
        billing.peak_mib()
    );

    // Lines of the smallest JSON values.
    for mib in [1, 16] {
        let mut billing = Billing::start(&server, &[], true).await?;
        let before = billing.peak_mib();
        billing.send_line(&zeros(1, (mib << 20) - 200)).await?;
        let answer = billing.receive(Duration::from_secs(60)).await;
        let shown = answer.as_ref().map_or("no answer".into(), |a| {
            if a["error"].is_object() {
                format!("error {}", a["error"]["code"])
            } else {
                outcome(a)
            }
        });
        println!(
            "| one {mib} MiB line of `[0,0,…]` | {shown}; peak {before:.0} → {:.0} MiB |",
            billing.peak_mib()
        );
    }

    // Rate limits per caller without middleware.
    let limited = ["--rate-limit", "2/3600", "--no-audit"];
    let mut billing = Billing::start(&server, &limited, true).await?;
    let mut outcomes = Vec::new();
    for (id, customer) in ["alice", "alice", "bob", "carol", "alice"]
        .iter()
        .enumerate()
    {
        let email = format!("{customer}@example.com");
        billing
            .send(&call(id, "list_invoices", json!({"customer_email": email})))
            .await?;
        let answer = billing.receive(Duration::from_secs(10)).await;
        outcomes.push(format!(
            "{customer} {}",
            answer.as_ref().map_or("no answer".into(), outcome)
        ));
    }
    println!(
        "| per-caller limit 2/h, no middleware | {} |",
        outcomes.join(", ")
    );

    // Many distinct callers.
    let keyed = ["--rate-limit", "10/3600", "--no-audit"];
    let mut billing = Billing::start(&server, &keyed, true).await?;
    let before = billing.rss_mib();
    let total = 300_000;
    let mut stdin = billing.stdin.take().ok_or("stdin")?;
    let writing = async move {
        for batch in (0..total).collect::<Vec<_>>().chunks(1000) {
            let mut bytes = Vec::new();
            for i in batch {
                let email = format!("customer-{i}@example.com");
                bytes.extend(
                    call(
                        *i,
                        "list_invoices",
                        json!({"customer_email": email, "limit": 1}),
                    )
                    .to_string()
                    .into_bytes(),
                );
                bytes.push(b'\n');
            }
            if stdin.write_all(&bytes).await.is_err() {
                break;
            }
        }
        stdin
    };
    let reading = async {
        for _ in 0..total {
            if billing.receive(Duration::from_secs(30)).await.is_none() {
                break;
            }
        }
    };
    let started = Instant::now();
    let (stdin, ()) = tokio::join!(writing, reading);
    billing.stdin = Some(stdin);
    println!(
        "| {total} distinct callers, limit 10/h each | RSS {before:.0} → {:.0} MiB (peak {:.0}) in {:.1} s |",
        billing.rss_mib(),
        billing.peak_mib(),
        started.elapsed().as_secs_f64()
    );

    // Cancellation.
    let mut billing = Billing::start(&server, &[], true).await?;
    for id in 1..=4 {
        billing
            .send(&call(id, "export_invoices", json!({"format": "csv"})))
            .await?;
    }
    for id in 1..=4 {
        billing
            .send(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": id, "reason": "gave up"}}),
            )
            .await?;
    }
    for id in 5..=6 {
        billing
            .send(&call(id, "export_invoices", json!({"format": "csv"})))
            .await?;
    }
    let mut answers = Vec::new();
    while let Some(answer) = billing.receive(Duration::from_secs(2)).await {
        answers.push(format!("{} {}", answer["id"], outcome(&answer)));
    }
    println!(
        "| 4 exports cancelled, then 2 more | answers: {} |",
        answers.join(", ")
    );

    // One id, two calls in flight.
    let mut billing = Billing::start(&server, &[], true).await?;
    billing
        .send(&call(7, "export_invoices", json!({"format": "csv"})))
        .await?;
    billing.send(&call(7, "list_invoices", json!({}))).await?;
    let mut answers = Vec::new();
    while let Some(answer) = billing.receive(Duration::from_secs(2)).await {
        answers.push(format!("{} {}", answer["id"], outcome(&answer)));
    }
    println!(
        "| id 7: a slow then a fast call in flight | answers: {} |",
        answers.join(", ")
    );

    // Before initialize.
    let mut billing = Billing::start(&server, &[], false).await?;
    billing
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await?;
    billing
        .send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let alive = billing.alive();
    let served = alive && billing.initialize().await.is_ok();
    println!(
        "| a notification and a response before initialize | {} |",
        if served {
            "ignored; initialize then served"
        } else {
            "the server exited"
        }
    );
    Ok(())
}
