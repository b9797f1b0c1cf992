//! HTTP load: the billing server on streamable HTTP (loopback), several typed clients with a
//! few calls in flight each, first stateless, then with sessions.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin http_load
//! HTTP_CLIENTS=4 HTTP_CALLS=5000 HTTP_MODES=sessions cargo run --release -p mcp-fusion-drivers --bin http_load
//! ```
//!
//! The server is the `billing` example, built by Cargo with this driver's profile
//! ([`mcp_fusion_drivers::artifacts`]), or the build `HTTP_SERVER` names. Each mode starts a fresh server, `billing --http
//! 127.0.0.1:0` (with `--stateless` for the stateless mode), and reads its address from the
//! line it prints on stderr. HTTP_CLIENTS clients connect with `Client::connect_http` (each its
//! own HTTP connection pool and, with sessions, its own session) and make one warm-up call;
//! then HTTP_INFLIGHT workers per client pull call indices from one shared counter until
//! HTTP_CALLS calls were made. Call `i` is chosen by [`plan`]: mostly `list_invoices` and
//! `get_invoice` of a seeded invoice, one call in ten invalid (VALIDATION_ERROR,
//! UNKNOWN_ACTION) or for a missing invoice (NOT_FOUND). Nothing is created or changed.
//!
//! Each index must get exactly one answer, of the kind its plan says, echoing this call where
//! the answer can (the invoice ID, the missing ID, the invalid value); a call unanswered after
//! 30 s counts as lost. The server's audit log (stderr) is counted as a server-side account of
//! the calls that reached a handler. Any lost, duplicate or unexpected outcome makes the driver
//! exit non-zero.
//!
//! Reported per mode as Markdown: calls/s, client-side latency p50/p90/p99, answers by kind,
//! server CPU per call (`/proc/<pid>/stat` utime+stime in clock ticks, and the threads'
//! `schedstat` run time), this driver's CPU per call (utime+stime) and the server's peak RSS
//! (`VmHWM`). Linux only.
//!
//! Environment: HTTP_CLIENTS (default 8), HTTP_CALLS (default 20000), HTTP_INFLIGHT (default 4),
//! HTTP_MODES (default `stateless,sessions`), HTTP_PLAN (`get_invoice`: every call reads a seeded
//! invoice), HTTP_SERVER (another build of the billing server, to compare).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_fusion::client::{Client, Connection};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr};
use tokio::task::JoinHandle;

use mcp_fusion_drivers::measure::{
    clip, clock_ticks, cpu_ns, cpu_ticks, env_list, env_usize, or_dash, percentile_ms,
    problem_groups, status_kib,
};
use mcp_fusion_drivers::mix::{self, Kind, Planned, Record};

type Error = Box<dyn std::error::Error>;

/// Call `i` of a mode. In every 20 calls: 9 lists, 8 reads of a seeded invoice, 1 missing
/// invoice, 1 invalid argument, 1 unknown action.
fn plan(i: usize) -> Planned {
    // HTTP_PLAN=get_invoice: every call reads a seeded invoice.
    static ONLY_GET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let only_get = *ONLY_GET.get_or_init(|| env_list("HTTP_PLAN", "mix") == ["get_invoice"]);
    let slot = if only_get { 9 } else { i % 20 };
    const SUCCESS: &[Kind] = &[Kind::Success];
    match slot {
        0..=8 => {
            let filter = match (i / 20) % 4 {
                0 => json!({}),
                1 => json!({"status": "open"}),
                2 => json!({"limit": 2}),
                _ => json!({"customer_email": "grace@example.com"}),
            };
            Planned::new("billing.list_invoices", filter, SUCCESS)
        }
        9..=16 => {
            // The seed holds inv_2026_0001 to inv_2026_0005.
            let id = format!("inv_2026_{:04}", i % 5 + 1);
            Planned::new("billing.get_invoice", json!({ "id": id }), SUCCESS)
                .echoing(format!(r#""id":"{id}""#))
        }
        17 => {
            // A well-formed ID unique to this call, which no invoice has.
            let id = format!("inv_9{:03}_{:04}", (i / 10_000) % 1_000, i % 10_000);
            Planned::new(
                "billing.get_invoice",
                json!({ "id": id }),
                &[Kind::NotFound],
            )
            .echoing(format!(">{id}<"))
        }
        18 => {
            let id = format!("bad-{i}");
            let expect = &[Kind::ValidationError];
            Planned::new("billing.get_invoice", json!({ "id": id }), expect)
                .echoing(format!("You sent: '{id}'"))
        }
        _ => {
            let action = format!("archive_{i}");
            Planned::new(
                format!("billing.{action}"),
                json!({}),
                &[Kind::UnknownAction],
            )
            .echoing(format!(r#""{action}""#))
        }
    }
}

/// A worker: takes the next index until there are none left, one call at a time.
async fn worker(client: Client, next: Arc<AtomicUsize>, calls: usize) -> Vec<Record> {
    let mut records = Vec::new();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= calls {
            return records;
        }
        records.push(mix::call(&client, index, plan(index)).await);
    }
}

/// What the server wrote on stderr after its address.
#[derive(Default)]
struct ServerLog {
    /// Audit lines by result (`ok`, `NOT_FOUND`, ...).
    audit: BTreeMap<String, usize>,
    /// Every other line.
    other: usize,
    /// The first few warnings and errors.
    alarms: Vec<String>,
}

async fn read_log(mut lines: Lines<BufReader<ChildStderr>>) -> ServerLog {
    let mut log = ServerLog::default();
    while let Ok(Some(line)) = lines.next_line().await {
        let result = line
            .contains("mcp_fusion::audit")
            .then(|| line.split_once("result=\"")?.1.split_once('"'))
            .flatten();
        match result {
            Some((result, _)) => *log.audit.entry(result.to_owned()).or_insert(0) += 1,
            None => {
                log.other += 1;
                if (line.contains(" WARN ") || line.contains(" ERROR ")) && log.alarms.len() < 5 {
                    log.alarms.push(line);
                }
            }
        }
    }
    log
}

/// The billing server on streamable HTTP, as a child process.
struct HttpServer {
    child: Child,
    pid: u32,
    url: String,
    log: JoinHandle<ServerLog>,
}

impl HttpServer {
    /// Starts `billing --http 127.0.0.1:0` and reads the address it prints on stderr.
    async fn start(path: &Path, stateless: bool) -> Result<Self, Error> {
        let mut command = tokio::process::Command::new(path);
        command.args(["--http", "127.0.0.1:0"]);
        if stateless {
            command.arg("--stateless");
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id().ok_or("the server has no pid")?;
        let stderr = child
            .stderr
            .take()
            .ok_or("the server's stderr was not captured")?;
        let mut lines = BufReader::new(stderr).lines();
        let address = async {
            while let Some(line) = lines.next_line().await? {
                if let Some((_, url)) = line.split_once("streamable HTTP on ") {
                    return Ok(url.trim().to_owned());
                }
            }
            Err::<String, Error>("the server exited before printing its address".into())
        };
        let url = tokio::time::timeout(Duration::from_secs(10), address)
            .await
            .map_err(|_| "the server printed no address within 10 s")??;
        // Keep reading, or the server blocks once the pipe is full.
        let log = tokio::spawn(read_log(lines));
        Ok(HttpServer {
            child,
            pid,
            url,
            log,
        })
    }

    /// Kills the server and returns what it logged.
    async fn stop(mut self) -> Result<ServerLog, Error> {
        self.child.kill().await?;
        Ok(tokio::time::timeout(Duration::from_secs(10), self.log)
            .await
            .map_err(|_| "the server's stderr did not close")??)
    }
}

/// One mode's run.
struct Measured {
    mode: &'static str,
    protocol: String,
    calls: usize,
    clients: usize,
    in_flight: usize,
    wall: Duration,
    records: Vec<Record>,
    cpu_ticks: Option<u64>,
    cpu_ns: Option<u64>,
    driver_ticks: u64,
    peak_rss_kib: Option<u64>,
    log: ServerLog,
}

struct Settings {
    clients: usize,
    calls: usize,
    in_flight: usize,
}

/// Starts a server in `mode`, connects the clients, and makes the calls.
async fn measure(path: &Path, mode: &'static str, settings: &Settings) -> Result<Measured, Error> {
    let server = HttpServer::start(path, mode == "stateless").await?;
    eprintln!("{mode}: billing pid {}, {}", server.pid, server.url);
    let mut clients: Vec<(Client, Connection)> = Vec::with_capacity(settings.clients);
    for _ in 0..settings.clients {
        let (client, connection) = Client::connect_http(&server.url).await?;
        let client = client;
        // Warm-up, and a check that the connection works before timing anything.
        let result = client.call_raw("billing.list_invoices", json!({})).await?;
        if result.is_error == Some(true) {
            return Err(format!("{mode}: the warm-up call failed: {result:?}").into());
        }
        clients.push((client, connection));
    }
    let protocol = clients[0]
        .1
        .peer()
        .peer_info()
        .map_or("?".into(), |info| info.protocol_version.to_string());

    let (ticks_before, ns_before) = (cpu_ticks(server.pid)?, cpu_ns(server.pid)?);
    let own_before = cpu_ticks(std::process::id())?;
    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for (client, _) in &clients {
        for _ in 0..settings.in_flight {
            workers.spawn(worker(client.clone(), next.clone(), settings.calls));
        }
    }
    let mut records = Vec::with_capacity(settings.calls);
    while let Some(joined) = workers.join_next().await {
        records.extend(joined?);
    }
    let wall = started.elapsed();
    let driver_ticks = cpu_ticks(std::process::id())?.saturating_sub(own_before);
    // Read leniently: a server that died must not hide the report of what happened.
    let cpu_ticks = cpu_ticks(server.pid)
        .ok()
        .map(|t| t.saturating_sub(ticks_before));
    let cpu_ns = cpu_ns(server.pid)
        .ok()
        .map(|ns| ns.saturating_sub(ns_before));
    let peak_rss_kib = status_kib(server.pid, "VmHWM").ok();

    for (_, connection) in clients {
        connection.cancel().await?;
    }
    let log = server.stop().await?;
    Ok(Measured {
        mode,
        protocol,
        calls: settings.calls,
        clients: settings.clients,
        in_flight: settings.in_flight,
        wall,
        records,
        cpu_ticks,
        cpu_ns,
        driver_ticks,
        peak_rss_kib,
        log,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let settings = Settings {
        clients: env_usize("HTTP_CLIENTS", 8)?.max(1),
        calls: env_usize("HTTP_CALLS", 20_000)?,
        in_flight: env_usize("HTTP_INFLIGHT", 4)?.max(1),
    };
    let wanted = env_list("HTTP_MODES", "stateless,sessions");
    let modes: Vec<&'static str> = ["stateless", "sessions"]
        .into_iter()
        .filter(|mode| wanted.iter().any(|w| w == mode))
        .collect();
    if modes.is_empty() {
        return Err("HTTP_MODES names none of stateless, sessions".into());
    }
    let path = match std::env::var_os("HTTP_SERVER") {
        Some(path) => std::path::PathBuf::from(path),
        None => mcp_fusion_drivers::artifacts::billing(),
    };

    let mut measured = Vec::new();
    for mode in modes {
        measured.push(measure(&path, mode, &settings).await?);
    }
    let failures = report(&measured, clock_ticks());
    if failures > 0 {
        return Err(format!("{failures} call(s) lost, answered twice or unexpected").into());
    }
    Ok(())
}

// ---- the report ----

/// How the calls of a mode were answered.
struct Accounting {
    once: usize,
    lost: usize,
    twice: usize,
    unexpected: usize,
    audit_agrees: bool,
}

impl Measured {
    fn count(&self, kind: Option<Kind>) -> usize {
        self.records.iter().filter(|r| r.kind == kind).count()
    }

    fn accounting(&self) -> Accounting {
        let mut answers = vec![0u8; self.calls];
        let mut foreign = 0;
        for record in &self.records {
            match answers.get_mut(record.index) {
                Some(count) => *count = count.saturating_add(1),
                None => foreign += 1,
            }
        }
        let audited = |result: &str| self.log.audit.get(result).copied().unwrap_or(0);
        // Each client's warm-up call is audited too.
        let audit_agrees = audited("ok") == self.count(Some(Kind::Success)) + self.clients
            && audited("NOT_FOUND") == self.count(Some(Kind::NotFound))
            && self.log.audit.keys().all(|k| k == "ok" || k == "NOT_FOUND");
        Accounting {
            once: answers.iter().filter(|&&n| n == 1).count(),
            lost: answers.iter().filter(|&&n| n == 0).count(),
            twice: answers.iter().filter(|&&n| n > 1).count() + foreign,
            unexpected: self.records.iter().filter(|r| r.problem.is_some()).count(),
            audit_agrees,
        }
    }
}

/// Prints the Markdown tables; returns the number of failed calls (plus one per mode whose
/// server audit disagrees with the client's account).
fn report(measured: &[Measured], ticks_per_s: u64) -> usize {
    let Some(first) = measured.first() else {
        return 0;
    };
    println!(
        "## streamable HTTP on loopback: {} calls per mode, {} clients × {} in flight\n",
        first.calls, first.clients, first.in_flight
    );
    println!(
        "| mode | protocol | calls/s | p50 ms | p90 ms | p99 ms | server CPU µs/call | (sched) | driver CPU µs/call | peak RSS MiB |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for m in measured {
        let mut latencies: Vec<Duration> = m.records.iter().map(|r| r.latency).collect();
        latencies.sort_unstable();
        let per_call = |us: f64| format!("{:.1}", us / m.calls.max(1) as f64);
        println!(
            "| {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} |",
            m.mode,
            m.protocol,
            m.calls as f64 / m.wall.as_secs_f64(),
            percentile_ms(&latencies, 0.50),
            percentile_ms(&latencies, 0.90),
            percentile_ms(&latencies, 0.99),
            or_dash(
                m.cpu_ticks
                    .map(|t| per_call(t as f64 * 1e6 / ticks_per_s as f64))
            ),
            or_dash(m.cpu_ns.map(|ns| per_call(ns as f64 / 1e3))),
            per_call(m.driver_ticks as f64 * 1e6 / ticks_per_s as f64),
            or_dash(
                m.peak_rss_kib
                    .map(|kib| format!("{:.2}", kib as f64 / 1024.0))
            ),
        );
    }
    println!();

    print!("| mode |");
    for kind in Kind::ALL {
        print!(" {} |", kind.name());
    }
    println!(" other / no answer | unexpected | answered once | lost | twice | audit |");
    println!(
        "|---|{}---:|---:|---:|---:|---:|---|",
        "---:|".repeat(Kind::ALL.len())
    );
    let mut failures = 0;
    for m in measured {
        let account = m.accounting();
        print!("| {} |", m.mode);
        for kind in Kind::ALL {
            print!(" {} |", m.count(Some(kind)));
        }
        println!(
            " {} | {} | {} | {} | {} | {} |",
            m.count(None),
            account.unexpected,
            account.once,
            account.lost,
            account.twice,
            if account.audit_agrees {
                "agrees"
            } else {
                "DISAGREES"
            }
        );
        failures +=
            account.lost + account.twice + account.unexpected + usize::from(!account.audit_agrees);
    }
    println!();
    for m in measured {
        println!(
            "{}: wall {:.2} s; server audit {:?}; {} other server log line(s)",
            m.mode,
            m.wall.as_secs_f64(),
            m.log.audit,
            m.log.other
        );
        for alarm in &m.log.alarms {
            println!("  server: {alarm}");
        }
        for (count, index, problem) in problem_groups(
            m.records
                .iter()
                .filter_map(|r| Some((r.index, r.problem.as_deref()?))),
        )
        .into_iter()
        .take(5)
        {
            println!("  {count} × like call {index}: {}", clip(problem, 300));
        }
    }
    failures
}
