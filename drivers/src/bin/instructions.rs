//! Instructions per request on each path, counted by callgrind: a figure the noise of a small
//! shared machine does not move (calls per second and CPU per call under the `load` driver
//! move by a third between runs there), to compare paths and commits exactly.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin instructions
//! INSTRUCTIONS_TRANSPORTS=stdio INSTRUCTIONS_KINDS=ping,prompt INSTRUCTIONS_REQUESTS=400 cargo run --release -p mcp-fusion-drivers --bin instructions
//! ```
//!
//! Needs Valgrind (Debian: `apt-get install valgrind`). Each server runs under
//! `valgrind --tool=callgrind`: `plain` (bare rmcp with the same handlers, `plain_server`),
//! `ours` (`bench_server`) and `ours-nofast` (`--no-fast-path`: every request through rmcp),
//! on each transport of INSTRUCTIONS_TRANSPORTS (default `http,http-session,stdio,stdio-2026`):
//! stateless streamable HTTP on loopback (`--http`), streamable HTTP in a 2025-11-25 session
//! (`--http --sessions`, after `initialize`), stdio (after `initialize`) and stdio as a client
//! of 2026-07-28 (no `initialize`, each request's lifecycle in `_meta`; no `ping`, which
//! 2026-07-28 no longer has). For each kind of request,
//! INSTRUCTIONS_WARMUP requests (default 50), the counters zeroed (`callgrind_control -z`),
//! INSTRUCTIONS_REQUESTS requests (default 200; over HTTP INSTRUCTIONS_IN_FLIGHT at a time, each
//! on a keep-alive connection of its own, default 1), the counters dumped (`-d`):
//! the instructions of the dump over the requests. Kinds (INSTRUCTIONS_KINDS, default all):
//! `ping`; `call` (`tools/call` of `bench`, valid); `invalid` (the same call with three invalid
//! arguments, as the `load` driver's); `prompt` (`prompts/get`); `resource`
//! (`resources/read`); `listen` (a 2026-07-28 `subscriptions/listen` on a connection of its
//! own, read until acknowledged and dropped; stateless HTTP only); `round` (a 2026-07-28
//! `tools/call` of `confirm` answered `input_required`, then retried with the user's answer
//! and the `requestState`, as the `load` driver's: the two requests counted as one; stateless
//! HTTP and `stdio-2026` only). Only the server's own
//! instructions are counted,
//! not the kernel's (the same system calls in every server, `perf stat` shows). Linux only.
//! With INSTRUCTIONS_KEEP=1 the dumps stay (their directory is printed) for
//! `callgrind_annotate`: `{transport}.{server}.out.{n}`, one per kind in the order counted.
//!
//! With INSTRUCTIONS_CACHE=1 callgrind simulates the caches (`--cache-sim=yes`) and two more
//! tables give, per request, the misses of the first-level instruction cache (`I1mr`) and of
//! the first-level data cache (`D1mr` + `D1mw`): how much code and data a request touches
//! beyond what stays cached, which instructions alone do not show (with 16 requests in flight a
//! server whose code runs in more places spends more per instruction).
//!
//! With INSTRUCTIONS_FOOTPRINT=1 callgrind records where each instruction is (`--dump-instr=yes`)
//! and two more tables give the code a kind of request runs, over all the requests counted (each
//! runs the same code): the distinct 64-byte lines and 4 KiB pages its instructions sit in, the
//! server's own binary and its libraries. One request at a time, a server that slept between
//! requests fetches all of it again, lines and the pages' translations, for every request.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcp_fusion_drivers::artifacts;
use mcp_fusion_drivers::measure::{env_list, env_usize};
use mcp_fusion_drivers::plain::Documents;
use mcp_fusion_drivers::raw_http::Pool;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

type Error = Box<dyn std::error::Error>;

/// The servers: label, binary, arguments.
const SERVERS: [(&str, &str, &[&str]); 3] = [
    ("plain", "plain_server", &[]),
    ("ours", "bench_server", &[]),
    ("ours-nofast", "bench_server", &["--no-fast-path"]),
];

/// The transports: name, the servers' arguments for it.
const TRANSPORTS: [(&str, &[&str]); 4] = [
    ("http", &["--http"]),
    ("http-session", &["--http", "--sessions"]),
    ("stdio", &[]),
    ("stdio-2026", &[]),
];

const KINDS: [&str; 7] = [
    "ping", "call", "invalid", "prompt", "resource", "listen", "round",
];

/// The `_meta` of a 2026-07-28 request declaring `capabilities`.
fn lifecycle(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "instructions", "version": "1"}})
}

/// The method and params of a request of `kind`.
fn request(kind: &str) -> (&'static str, Value) {
    match kind {
        "ping" => ("ping", json!({})),
        "call" => (
            "tools/call",
            json!({"name": "bench", "arguments": {"action": "op07", "id": "item_42", "limit": 10}}),
        ),
        "invalid" => (
            "tools/call",
            json!({"name": "bench", "arguments": {"action": "op07", "id": 42, "limit": 500, "extra": true}}),
        ),
        "prompt" => (
            "prompts/get",
            json!({"name": "brief", "arguments": {"topic": "item_42"}}),
        ),
        "resource" => ("resources/read", json!({"uri": Documents::ITEM})),
        "round" => (
            "tools/call",
            json!({"name": "confirm", "arguments": {"action": "item", "id": "item_42"},
                   "_meta": lifecycle(json!({"elicitation": {"form": {}}}))}),
        ),
        _ => (
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}, "_meta": lifecycle(json!({}))}),
        ),
    }
}

/// A server under callgrind.
struct Counted {
    child: Child,
    client: Client,
    /// An HTTP server's stdout, kept open while it runs.
    _stdout: Option<BufReader<ChildStdout>>,
    pid: u32,
    /// The dumps are `{out}.1`, `{out}.2`, …
    out: String,
    dumps: usize,
}

/// How the driver asks a server.
enum Client {
    /// Stateless HTTP: plain requests, and `listen` with a 2026-07-28 client's headers
    /// (SEP-2243).
    Http(Arc<Pool>, Pool),
    /// HTTP in a session.
    Session(Arc<Pool>),
    /// Lines on stdin, answers on stdout; with each request's lifecycle in `_meta` when
    /// `true` (a client of 2026-07-28, which sends no `initialize`).
    Stdio(ChildStdin, BufReader<ChildStdout>, bool),
}

impl Counted {
    async fn start(
        binary: &Path,
        args: &[&str],
        transport: &str,
        out: &str,
        cache: bool,
        footprint: bool,
    ) -> Result<Counted, Error> {
        let mut child = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={out}"))
            .arg(format!("--cache-sim={}", if cache { "yes" } else { "no" }))
            .arg(format!(
                "--dump-instr={}",
                if footprint { "yes" } else { "no" }
            ))
            .arg(binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("valgrind could not start ({e}): apt-get install valgrind"))?;
        let pid = child.id().ok_or("the server has no pid")?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let (client, kept) = match transport {
            "stdio-2026" => (Client::Stdio(stdin, stdout, true), None),
            "stdio" => {
                let mut client = Client::Stdio(stdin, stdout, false);
                let initialize = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "instructions", "version": "1"}});
                client.ask(0, "initialize", &initialize).await?;
                client.notify("notifications/initialized").await?;
                (client, None)
            }
            _ => {
                let mut url = String::new();
                let read = stdout.read_line(&mut url);
                tokio::time::timeout(Duration::from_secs(60), read).await??;
                let url = url.trim().to_owned();
                if !url.starts_with("http://") {
                    return Err(format!("the server printed no URL: {url:?}").into());
                }
                let pool = Pool::new(&url).map_err(|e| e.to_string())?;
                let client = match transport {
                    "http-session" => {
                        let pool = Pool::with_version(&url, "2025-11-25");
                        let session = pool.map_err(|e| e.to_string())?.in_session("instructions");
                        let session = session.await;
                        Client::Session(Arc::new(session.map_err(|e| e.to_string())?))
                    }
                    _ => {
                        let current = Pool::with_version(&url, "2026-07-28");
                        Client::Http(Arc::new(pool), current.map_err(|e| e.to_string())?)
                    }
                };
                (client, Some(stdout))
            }
        };
        Ok(Counted {
            child,
            client,
            _stdout: kept,
            pid,
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

    /// The events counted since the counters were last zeroed.
    async fn dump(&mut self) -> Result<Totals, Error> {
        self.control("-d")?;
        self.dumps += 1;
        let path = format!("{}.{}", self.out, self.dumps);
        for _ in 0..100 {
            if let Ok(text) = std::fs::read_to_string(&path)
                && let Some(totals) = Totals::read(&text)
            {
                return totals;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("no dump at {path}").into())
    }
}

/// A dump's totals, by event (`Ir`: instructions; `I1mr`, `D1mr`, `D1mw`: the misses of the
/// simulated first-level caches).
struct Totals(Vec<(String, u64)>);

impl Totals {
    /// The totals of a dump's text, once it is whole (its `totals:` or `summary:` line), with
    /// `lines` and `pages`, the code it ran, when the dump has instructions' addresses.
    fn read(text: &str) -> Option<Result<Totals, Error>> {
        let line = |prefix: &str| text.lines().find_map(|l| l.strip_prefix(prefix));
        let counts = line("totals:").or(line("summary:"))?;
        let events = line("events:").unwrap_or("Ir").split_whitespace();
        let counts = counts.split_whitespace().map(str::parse::<u64>);
        let totals: Result<Vec<_>, _> = events
            .zip(counts)
            .map(|(event, count)| Ok((event.to_owned(), count?)))
            .collect();
        let positions = line("positions:").unwrap_or("line");
        let footprint = (positions.split_whitespace().next() == Some("instr"))
            .then(|| code_footprint(text, positions.split_whitespace().count()));
        Some(totals.map(|mut totals| {
            if let Some((lines, pages)) = footprint {
                totals.push(("lines".to_owned(), lines));
                totals.push(("pages".to_owned(), pages));
            }
            Totals(totals)
        }))
    }

    /// The count of `events` together (0 for an event not counted).
    fn of(&self, events: &[&str]) -> u64 {
        (self.0.iter())
            .filter(|(event, _)| events.contains(&event.as_str()))
            .map(|(_, count)| count)
            .sum()
    }
}

/// The distinct 64-byte lines and 4 KiB pages holding an instruction that ran, read from a
/// dump with instructions' addresses (`positions: instr …`, `columns` positions in all). Each
/// cost line begins with its instruction's address: absolute (`0x…`), relative to the last one
/// (`+n`, `-n`) or the same (`*`); the line after a `calls=` is the call's inclusive cost at
/// the calling instruction, which has a cost line of its own.
fn code_footprint(text: &str, columns: usize) -> (u64, u64) {
    let mut lines = std::collections::HashSet::new();
    let mut pages = std::collections::HashSet::new();
    let mut last: u64 = 0;
    let mut after_call = false;
    for line in text.lines() {
        let Some(first) = line.bytes().next() else {
            continue;
        };
        if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*')) {
            after_call = line.starts_with("calls=");
            continue;
        }
        let mut fields = line.split_whitespace();
        let Some(position) = fields.next() else {
            continue;
        };
        let address = if let Some(hex) = position.strip_prefix("0x") {
            u64::from_str_radix(hex, 16).ok()
        } else if let Some(n) = position.strip_prefix('+') {
            n.parse::<u64>().ok().map(|n| last.wrapping_add(n))
        } else if let Some(n) = position.strip_prefix('-') {
            n.parse::<u64>().ok().map(|n| last.wrapping_sub(n))
        } else if position == "*" {
            Some(last)
        } else {
            position.parse().ok()
        };
        let Some(address) = address else {
            continue;
        };
        last = address;
        // The other positions, then the events: `Ir` first.
        let ran = fields.nth(columns - 1).is_some_and(|ir| ir != "0");
        if !std::mem::take(&mut after_call) && ran {
            lines.insert(address >> 6);
            pages.insert(address >> 12);
        }
    }
    (lines.len() as u64, pages.len() as u64)
}

impl Client {
    /// Request `id` of `method` with `params`: its answer, checked to be a result.
    async fn ask(&mut self, id: u64, method: &str, params: &Value) -> Result<String, Error> {
        let mut params = params.clone();
        if let (Client::Stdio(_, _, true), Some(members)) = (&*self, params.as_object_mut()) {
            members
                .entry("_meta")
                .or_insert_with(|| lifecycle(json!({})));
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let body = body.to_string();
        let answer = match self {
            Client::Http(_, current) if method == "subscriptions/listen" => {
                let headers = format!("Mcp-Method: {method}\r\n");
                let acknowledged = "notifications/subscriptions/acknowledged";
                let stream = current.open_stream(body.as_bytes(), &headers, acknowledged);
                drop(stream.await.map_err(|e| e.to_string())?);
                return Ok(String::new());
            }
            Client::Http(pool, _) | Client::Session(pool) => {
                let answer = pool.post(body.as_bytes()).await;
                String::from_utf8(answer.map_err(|e| e.to_string())?)?
            }
            Client::Stdio(stdin, stdout, _) => exchange(stdin, stdout, id, &body).await?,
        };
        if !answer.contains(r#""result""#) {
            return Err(format!("{method} was not answered: {answer}").into());
        }
        Ok(answer)
    }

    /// `confirm`'s round, as request `id` and its retry `id + 1` (2026-07-28: stateless HTTP,
    /// stdio): the call `params`, answered `input_required`, then retried with the user's
    /// answer to each question and the `requestState` echoed.
    async fn round(&mut self, id: u64, params: &Value) -> Result<(), Error> {
        let asked = self.call(id, params).await?;
        let (Some(state), Some(questions)) = (
            asked["result"]["requestState"].as_str(),
            asked["result"]["inputRequests"].as_object(),
        ) else {
            return Err(format!("not input_required: {asked}").into());
        };
        let confirmed = json!({"action": "accept", "content": {"confirm": true}});
        let mut retry = params.clone();
        retry["inputResponses"] = (questions.keys())
            .map(|key| (key.clone(), confirmed.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into();
        retry["requestState"] = state.into();
        let answer = self.call(id + 1, &retry).await?;
        match answer.to_string().contains("item_42 confirmed: true") {
            true => Ok(()),
            false => Err(format!("the round was not answered: {answer}").into()),
        }
    }

    /// The JSON-RPC answer to `tools/call` `id` of `params` (2026-07-28: over stateless HTTP
    /// with the headers naming it), whatever it is.
    async fn call(&mut self, id: u64, params: &Value) -> Result<Value, Error> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let answer = match self {
            Client::Http(_, pool) => {
                let headers = "Mcp-Method: tools/call\r\nMcp-Name: confirm\r\n";
                let answer = pool.post_with(body.to_string().as_bytes(), headers).await;
                String::from_utf8(answer.map_err(|e| e.to_string())?)?
            }
            Client::Stdio(stdin, stdout, true) => {
                exchange(stdin, stdout, id, &body.to_string()).await?
            }
            _ => return Err("a round is a request of 2026-07-28".into()),
        };
        Ok(serde_json::from_str(
            mcp_fusion_drivers::raw_http::json_of(&answer),
        )?)
    }

    /// A notification (stdio).
    async fn notify(&mut self, method: &str) -> Result<(), Error> {
        if let Client::Stdio(stdin, _, _) = self {
            let line = json!({"jsonrpc": "2.0", "method": method}).to_string();
            stdin.write_all(format!("{line}\n").as_bytes()).await?;
        }
        Ok(())
    }
}

/// Writes `body`, the request `id`, as a line on a server's stdin; the line of its answer.
async fn exchange(
    stdin: &mut ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    id: u64,
    body: &str,
) -> Result<String, Error> {
    stdin.write_all(format!("{body}\n").as_bytes()).await?;
    let id = format!(r#""id":{id}"#);
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).await? == 0 {
            return Err("the server closed its stdout".into());
        }
        if line.contains(&id) {
            return Ok(line);
        }
    }
}

/// `count` requests of `kind`, one at a time, each checked to be answered.
async fn drive(
    client: &mut Client,
    kind: &str,
    count: usize,
    next: &mut u64,
    in_flight: usize,
) -> Result<(), Error> {
    let (method, params) = request(kind);
    if let (Client::Http(pool, _) | Client::Session(pool), true) = (
        &*client,
        in_flight > 1 && kind != "listen" && kind != "round",
    ) {
        // `in_flight` requests at a time, each on a connection of its own.
        let first = *next + 1;
        *next += count as u64;
        let mut tasks = tokio::task::JoinSet::new();
        for lane in 0..in_flight {
            let (pool, params) = (Arc::clone(pool), params.clone());
            tasks.spawn(async move {
                for id in (first + lane as u64..first + count as u64).step_by(in_flight) {
                    let body =
                        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                    let answer = pool.post(body.to_string().as_bytes()).await;
                    let answer = answer.map_err(|e| e.to_string())?;
                    if !answer.windows(8).any(|w| w == br#""result""#) {
                        return Err(format!(
                            "{method} was not answered: {}",
                            String::from_utf8_lossy(&answer)
                        ));
                    }
                }
                Ok(())
            });
        }
        while let Some(done) = tasks.join_next().await {
            done??;
        }
        return Ok(());
    }
    for _ in 0..count {
        *next += 1;
        if kind == "round" {
            client.round(*next, &params).await?;
            *next += 1;
            continue;
        }
        client.ask(*next, method, &params).await?;
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let requests = env_usize("INSTRUCTIONS_REQUESTS", 200)?.max(1);
    let warmup = env_usize("INSTRUCTIONS_WARMUP", 50)?;
    let in_flight = env_usize("INSTRUCTIONS_IN_FLIGHT", 1)?.max(1);
    let cache = env_usize("INSTRUCTIONS_CACHE", 0)? != 0;
    let footprint = env_usize("INSTRUCTIONS_FOOTPRINT", 0)? != 0;
    let wanted = env_list("INSTRUCTIONS_KINDS", &KINDS.join(","));
    let kinds: Vec<&str> = KINDS
        .into_iter()
        .filter(|k| wanted.iter().any(|w| w == k))
        .collect();
    let wanted = env_list(
        "INSTRUCTIONS_TRANSPORTS",
        "http,http-session,stdio,stdio-2026",
    );
    let transports: Vec<(&str, &[&str])> = TRANSPORTS
        .into_iter()
        .filter(|(t, _)| wanted.iter().any(|w| w == t))
        .collect();
    let dir = std::env::temp_dir().join(format!("mcp-fusion-instructions-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!(
        "instructions per request (callgrind), {requests} requests after {warmup} warm-up, \
         {in_flight} in flight over HTTP"
    );
    for (transport, transport_args) in transports {
        // `listen` is stateless HTTP's, `round` a 2026-07-28 client's; `ping` is gone from
        // 2026-07-28.
        let kinds: Vec<&str> = (kinds.iter().copied())
            .filter(|k| match *k {
                "listen" => transport == "http",
                "round" => matches!(transport, "http" | "stdio-2026"),
                "ping" => transport != "stdio-2026",
                _ => true,
            })
            .collect();
        let mut counted: Vec<(&str, Vec<Totals>)> = Vec::new();
        for (label, binary, args) in SERVERS {
            let binary = artifacts::driver(binary);
            let out = dir.join(format!("{transport}.{label}.out"));
            let out = out.to_str().ok_or("a temporary path that is not UTF-8")?;
            let args: Vec<&str> = transport_args.iter().chain(args).copied().collect();
            let mut server =
                Counted::start(&binary, &args, transport, out, cache, footprint).await?;
            let mut next = 0;
            let mut per_request = Vec::new();
            for &kind in &kinds {
                drive(&mut server.client, kind, warmup, &mut next, in_flight).await?;
                server.control("-z")?;
                drive(&mut server.client, kind, requests, &mut next, in_flight).await?;
                per_request.push(server.dump().await?);
            }
            server.child.kill().await?;
            counted.push((label, per_request));
        }
        // Each table: its name, its events, whether they are counted per request.
        let mut tables = vec![("instructions per request", &["Ir"][..], true)];
        if cache {
            tables.push(("I1 misses per request", &["I1mr"], true));
            tables.push(("D1 misses per request", &["D1mr", "D1mw"], true));
        }
        if footprint {
            tables.push(("64-byte lines of code run", &["lines"], false));
            tables.push(("4 KiB pages of code run", &["pages"], false));
        }
        for (name, events, per_request) in tables {
            let over = if per_request { requests as f64 } else { 1.0 };
            print!("\n{transport:12} {:10}", "kind");
            for (label, _) in &counted {
                print!(" {label:>12}");
            }
            println!("   ours/plain  nofast/plain   ({name})");
            for (i, kind) in kinds.iter().enumerate() {
                let of = |label: &str| {
                    let (_, totals) = counted.iter().find(|(l, _)| *l == label)?;
                    Some(totals[i].of(events) as f64 / over)
                };
                print!("{transport:12} {kind:10}");
                for (label, _) in &counted {
                    print!(" {:>12.0}", of(label).unwrap_or(f64::NAN));
                }
                let ratio = |label| of(label).zip(of("plain")).map_or(f64::NAN, |(a, b)| a / b);
                println!("   {:>10.2}  {:>12.2}", ratio("ours"), ratio("ours-nofast"));
            }
        }
    }
    if env_usize("INSTRUCTIONS_KEEP", 0)? == 0 {
        std::fs::remove_dir_all(&dir)?;
    } else {
        println!("\nthe dumps: {}", dir.display());
    }
    Ok(())
}
