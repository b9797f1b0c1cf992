//! Instructions per request on each path, counted by callgrind: a figure the noise of a small
//! shared machine does not move (calls per second and CPU per call under the `load` driver
//! move by a third between runs there), to compare paths and commits exactly.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin instructions
//! INSTRUCTIONS_KINDS=ping,prompt INSTRUCTIONS_REQUESTS=400 cargo run --release -p mcp-fusion-drivers --bin instructions
//! ```
//!
//! Needs Valgrind (Debian: `apt-get install valgrind`). Each server runs under
//! `valgrind --tool=callgrind`, serving stateless streamable HTTP on loopback: `plain` (bare
//! rmcp with the same handlers, `plain_server --http`), `ours` (`bench_server --http`) and
//! `ours-nofast` (`--no-fast-path`: every request through rmcp). For each kind of request,
//! INSTRUCTIONS_WARMUP requests (default 50), the counters zeroed (`callgrind_control -z`),
//! INSTRUCTIONS_REQUESTS requests one at a time (default 200), the counters dumped (`-d`):
//! the instructions of the dump over the requests. Kinds (INSTRUCTIONS_KINDS, default all):
//! `ping`; `call` (`tools/call` of `bench`, valid); `prompt` (`prompts/get`); `resource`
//! (`resources/read`); `listen` (a 2026-07-28 `subscriptions/listen` on a connection of its
//! own, read until acknowledged and dropped). Only the server's own instructions are counted,
//! not the kernel's (the same system calls in every server, `perf stat` shows). Linux only.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mcp_fusion_drivers::artifacts;
use mcp_fusion_drivers::measure::{env_list, env_usize};
use mcp_fusion_drivers::plain::Documents;
use mcp_fusion_drivers::raw_http::Pool;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

type Error = Box<dyn std::error::Error>;

/// The servers: label, binary, arguments.
const SERVERS: [(&str, &str, &[&str]); 3] = [
    ("plain", "plain_server", &["--http"]),
    ("ours", "bench_server", &["--http"]),
    ("ours-nofast", "bench_server", &["--http", "--no-fast-path"]),
];

const KINDS: [&str; 5] = ["ping", "call", "prompt", "resource", "listen"];

/// The method and params of a request of `kind`.
fn request(kind: &str) -> (&'static str, Value) {
    match kind {
        "ping" => ("ping", json!({})),
        "call" => (
            "tools/call",
            json!({"name": "bench", "arguments": {"action": "op07", "id": "item_42", "limit": 10}}),
        ),
        "prompt" => (
            "prompts/get",
            json!({"name": "brief", "arguments": {"topic": "item_42"}}),
        ),
        "resource" => ("resources/read", json!({"uri": Documents::ITEM})),
        _ => (
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "instructions", "version": "1"}}}),
        ),
    }
}

/// A server under callgrind.
struct Counted {
    child: Child,
    /// Kept open while the server runs.
    _stdout: BufReader<tokio::process::ChildStdout>,
    pid: u32,
    url: String,
    /// The dumps are `{out}.1`, `{out}.2`, …
    out: String,
    dumps: usize,
}

impl Counted {
    async fn start(binary: &Path, args: &[&str], out: &str) -> Result<Counted, Error> {
        let mut child = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={out}"))
            .arg(binary)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("valgrind could not start ({e}): apt-get install valgrind"))?;
        let pid = child.id().ok_or("the server has no pid")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut url = String::new();
        let read = stdout.read_line(&mut url);
        tokio::time::timeout(Duration::from_secs(60), read).await??;
        let url = url.trim().to_owned();
        if !url.starts_with("http://") {
            return Err(format!("the server printed no URL: {url:?}").into());
        }
        Ok(Counted {
            child,
            _stdout: stdout,
            pid,
            url,
            out: out.to_owned(),
            dumps: 0,
        })
    }

    /// `callgrind_control` with `flag`, for this server.
    fn control(&self, flag: &str) -> Result<(), Error> {
        let status = std::process::Command::new("callgrind_control")
            .arg(flag)
            .arg(self.pid.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        match status.success() {
            true => Ok(()),
            false => Err(format!("callgrind_control {flag} failed: {status}").into()),
        }
    }

    /// The instructions counted since the counters were last zeroed.
    async fn dump(&mut self) -> Result<u64, Error> {
        self.control("-d")?;
        self.dumps += 1;
        let path = format!("{}.{}", self.out, self.dumps);
        for _ in 0..100 {
            if let Ok(text) = std::fs::read_to_string(&path)
                && let Some(total) = text
                    .lines()
                    .find_map(|l| l.strip_prefix("totals:").or(l.strip_prefix("summary:")))
            {
                return Ok(total.split_whitespace().next().unwrap_or("0").parse()?);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("no dump at {path}").into())
    }
}

/// `count` requests of `kind`, one at a time, each checked to be answered.
async fn drive(pool: &Pool, kind: &str, count: usize, next: &mut u64) -> Result<(), Error> {
    let (method, params) = request(kind);
    for _ in 0..count {
        *next += 1;
        let body = json!({"jsonrpc": "2.0", "id": *next, "method": method, "params": params});
        let body = body.to_string();
        if kind == "listen" {
            let headers = format!("Mcp-Method: {method}\r\n");
            let acknowledged = "notifications/subscriptions/acknowledged";
            let stream = pool.open_stream(body.as_bytes(), &headers, acknowledged);
            drop(stream.await.map_err(|e| e.to_string())?);
            continue;
        }
        let answer = pool
            .post(body.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let answer = String::from_utf8(answer)?;
        if !answer.contains(r#""result""#) {
            return Err(format!("{kind} was not answered: {answer}").into());
        }
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let requests = env_usize("INSTRUCTIONS_REQUESTS", 200)?.max(1);
    let warmup = env_usize("INSTRUCTIONS_WARMUP", 50)?;
    let wanted = env_list("INSTRUCTIONS_KINDS", &KINDS.join(","));
    let kinds: Vec<&str> = KINDS
        .into_iter()
        .filter(|k| wanted.iter().any(|w| w == k))
        .collect();
    let dir = std::env::temp_dir().join(format!("mcp-fusion-instructions-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!("instructions per request (callgrind), {requests} requests after {warmup} warm-up");
    let mut counted: Vec<(&str, Vec<f64>)> = Vec::new();
    for (label, binary, args) in SERVERS {
        let binary = artifacts::driver(binary);
        let out = dir.join(format!("{label}.out"));
        let out = out.to_str().ok_or("a temporary path that is not UTF-8")?;
        let mut server = Counted::start(&binary, args, out).await?;
        let pool = Pool::new(&server.url).map_err(|e| e.to_string())?;
        // `listen` is of 2026-07-28: its client's headers (SEP-2243) say so.
        let current = Pool::with_version(&server.url, "2026-07-28").map_err(|e| e.to_string())?;
        let mut next = 0;
        let mut per_request = Vec::new();
        for &kind in &kinds {
            let pool = if kind == "listen" { &current } else { &pool };
            drive(pool, kind, warmup, &mut next).await?;
            server.control("-z")?;
            drive(pool, kind, requests, &mut next).await?;
            per_request.push(server.dump().await? as f64 / requests as f64);
        }
        server.child.kill().await?;
        counted.push((label, per_request));
    }
    std::fs::remove_dir_all(&dir)?;
    print!("\n{:10}", "kind");
    for (label, _) in &counted {
        print!(" {label:>12}");
    }
    println!("   ours/plain  nofast/plain");
    for (i, kind) in kinds.iter().enumerate() {
        print!("{kind:10}");
        for (_, per_request) in &counted {
            print!(" {:>12.0}", per_request[i]);
        }
        let ratio = |label: &str| {
            let of = |l: &str| counted.iter().find(|(x, _)| *x == l).map(|(_, v)| v[i]);
            of(label).zip(of("plain")).map_or(f64::NAN, |(a, b)| a / b)
        };
        println!("   {:>10.2}  {:>12.2}", ratio("ours"), ratio("ours-nofast"));
    }
    Ok(())
}
