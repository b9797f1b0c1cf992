//! Soak test: the billing server over stdio, 100,000 mixed calls with 16 always in flight,
//! every call accounted for and the server's memory watched.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin soak   # SOAK_CALLS=10000 for a shorter run
//! ```
//!
//! The server is the `billing` example, built by Cargo with this driver's profile
//! ([`mcp_fusion_drivers::artifacts`]). It runs as a child process driven by the typed client; a
//! fixed pool of 16 workers pulls call indices from a shared counter, so exactly 16 calls are in
//! flight until the last ones drain. Call `i` is chosen by [`plan`]: a deterministic mix of
//! valid reads (`list_invoices`, `get_invoice` of a seeded invoice), invalid arguments
//! (VALIDATION_ERROR), unknown actions (UNKNOWN_ACTION), missing invoices (NOT_FOUND) and, one
//! call in 200, the slow `export_invoices` (200 ms, 2 running and 2 queued at most, so mostly
//! SERVER_BUSY under this load). Nothing is created or changed: the server's data stays the
//! same size, so memory growth would be the library's, not the example's.
//!
//! Each index must get exactly one answer, of a kind its plan allows, and where the answer
//! echoes something of the call (the invoice ID, the missing ID, the invalid value, the unknown
//! action), it must echo this call's: an answer given to the wrong request is caught. The
//! server's audit log (stderr) is counted as a second, server-side account of the calls that
//! reached a handler. A call unanswered after 30 s counts as lost. Any lost, duplicate or
//! unexpected outcome makes the driver exit non-zero.
//!
//! Reported as Markdown: calls/s, client-side latency p50/p99 (overall and per kind), CPU per
//! call of the server and of this driver (`/proc/<pid>/stat` utime+stime), the server's RSS
//! (`VmRSS` and `VmHWM` sampled every second, `VmRSS` at each tenth of the calls) and its
//! growth from the first tenth to the end. Linux only.
//!
//! Environment: SOAK_CALLS (default 100000).

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_fusion::client::{Client, Connection};
use mcp_fusion::rmcp::transport::TokioChildProcess;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

const IN_FLIGHT: usize = 16;

use mcp_fusion_drivers::measure::{
    clip, clock_ticks, cpu_ticks, env_usize, or_dash, percentile_ms, problem_groups, status_kib,
};
use mcp_fusion_drivers::mix::{self, Kind, Planned, Record};

type Error = Box<dyn std::error::Error>;

/// Call `i` of the run. In every 20 calls: 8 lists, 5 reads of a seeded invoice, 2 missing
/// invoices, 3 invalid arguments, 2 unknown actions; call 199 of every 200 is an export instead.
fn plan(i: usize) -> Planned {
    const SUCCESS: &[Kind] = &[Kind::Success];
    if i % 200 == 199 {
        let format = if i % 400 == 199 { "csv" } else { "json" };
        return Planned::new(
            "billing.export_invoices",
            json!({ "format": format }),
            &[Kind::Success, Kind::ServerBusy],
        );
    }
    match i % 20 {
        0..=7 => {
            let filter = match (i / 20) % 4 {
                0 => json!({}),
                1 => json!({"status": "open"}),
                2 => json!({"limit": 2}),
                _ => json!({"customer_email": "ada@example.com"}),
            };
            Planned::new("billing.list_invoices", filter, SUCCESS)
        }
        8..=12 => {
            // The seed holds inv_2026_0001 to inv_2026_0005.
            let id = format!("inv_2026_{:04}", i % 5 + 1);
            Planned::new("billing.get_invoice", json!({ "id": id }), SUCCESS)
                .echoing(format!(r#""id":"{id}""#))
        }
        13 | 14 => {
            // A well-formed ID unique to this call, which no invoice has.
            let id = format!("inv_9{:03}_{:04}", (i / 10_000) % 1_000, i % 10_000);
            Planned::new(
                "billing.get_invoice",
                json!({ "id": id }),
                &[Kind::NotFound],
            )
            .echoing(format!(">{id}<"))
        }
        15 => {
            let id = format!("bad-{i}");
            Planned::new(
                "billing.get_invoice",
                json!({ "id": id }),
                &[Kind::ValidationError],
            )
            .echoing(format!("You sent: '{id}'"))
        }
        16 => {
            let limit = 1_000 + i;
            Planned::new(
                "billing.list_invoices",
                json!({"status": "late", "limit": limit}),
                &[Kind::ValidationError],
            )
            .echoing(format!("You sent: {limit}."))
        }
        17 => {
            // Every problem at once; rejected before the handler, so nothing is created.
            let email = format!("ada-{i}.example.com");
            let arguments = json!({
                "customer_email": email,
                "amount_cents": 0,
                "currency": "JPY",
                "lines": [{"description": "", "quantity": 0}],
                "note": "rush"
            });
            Planned::new(
                "billing.create_invoice",
                arguments,
                &[Kind::ValidationError],
            )
            .echoing(format!("You sent: '{email}'"))
        }
        18 => Planned::new(
            "billing.get_invoise",
            json!({"id": "inv_2026_0001"}),
            &[Kind::UnknownAction],
        ),
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

/// Answers so far, and the server's VmRSS (KiB) each time another tenth of them came (`None`
/// when it could not be read).
struct Progress {
    pid: u32,
    calls: usize,
    answered: AtomicUsize,
    tenths: Mutex<Vec<Option<u64>>>,
}

impl Progress {
    fn new(pid: u32, calls: usize) -> Self {
        Progress {
            pid,
            calls,
            answered: AtomicUsize::new(0),
            tenths: Mutex::new(Vec::with_capacity(10)),
        }
    }

    fn answered(&self) {
        let n = self.answered.fetch_add(1, Ordering::Relaxed) + 1;
        let step = (self.calls / 10).max(1);
        if n.is_multiple_of(step) && n / step <= 10 {
            let rss = status_kib(self.pid, "VmRSS").ok();
            self.tenths_mut().push(rss);
        }
    }

    fn done(&self) -> bool {
        self.answered.load(Ordering::Relaxed) >= self.calls
    }

    fn tenths_mut(&self) -> std::sync::MutexGuard<'_, Vec<Option<u64>>> {
        self.tenths.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A worker: takes the next index until there are none left, one call at a time.
async fn worker(
    client: Client,
    next: Arc<AtomicUsize>,
    calls: usize,
    progress: Arc<Progress>,
) -> Vec<Record> {
    let mut records = Vec::new();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= calls {
            return records;
        }
        records.push(mix::call(&client, index, plan(index)).await);
        progress.answered();
    }
}

/// The server's memory at one moment, in KiB.
#[derive(Clone, Copy)]
struct Sample {
    rss: u64,
    hwm: u64,
}

/// Samples the server's VmRSS and VmHWM every second until every call is answered.
async fn sample_memory(progress: Arc<Progress>) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    while !progress.done() {
        tick.tick().await;
        let read = |field| status_kib(progress.pid, field);
        if let (Ok(rss), Ok(hwm)) = (read("VmRSS"), read("VmHWM")) {
            samples.push(Sample { rss, hwm });
        }
    }
    samples
}

/// Counts the server's audit lines (`result="ok"`, `result="NOT_FOUND"`, ...) until stderr
/// closes, and keeps the first few warnings and errors.
async fn read_audit(stderr: ChildStderr) -> (BTreeMap<String, usize>, Vec<String>) {
    let mut results = BTreeMap::new();
    let mut alarms = Vec::new();
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.contains("mcp_fusion::audit") {
            if let Some(result) = line
                .split_once("result=\"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(result, _)| result)
            {
                *results.entry(result.to_owned()).or_insert(0) += 1;
            }
        } else if (line.contains(" WARN ") || line.contains(" ERROR ")) && alarms.len() < 5 {
            alarms.push(line);
        }
    }
    (results, alarms)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let calls = env_usize("SOAK_CALLS", 100_000)?.max(1);
    let (client, connection, pid, stderr) = start().await?;
    let audit = tokio::spawn(read_audit(stderr));
    eprintln!("soak: billing pid {pid}, {calls} calls, {IN_FLIGHT} in flight");

    let progress = Arc::new(Progress::new(pid, calls));
    let sampler = tokio::spawn(sample_memory(progress.clone()));
    let (ticks_before, own_before) = (cpu_ticks(pid)?, cpu_ticks(std::process::id())?);
    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..IN_FLIGHT {
        workers.spawn(worker(
            client.clone(),
            next.clone(),
            calls,
            progress.clone(),
        ));
    }
    let mut records = Vec::with_capacity(calls);
    while let Some(joined) = workers.join_next().await {
        records.extend(joined?);
    }
    let wall = started.elapsed();
    // Read leniently: a server that died must not hide the report of what happened.
    let server_ticks = cpu_ticks(pid).ok().map(|t| t.saturating_sub(ticks_before));
    let own_ticks = cpu_ticks(std::process::id())?.saturating_sub(own_before);
    let end_rss = status_kib(pid, "VmRSS").ok();
    let hwm = status_kib(pid, "VmHWM").unwrap_or(0);
    // The server sees its stdin close and exits, closing its stderr.
    connection.cancel().await?;
    let (audit, alarms) = tokio::time::timeout(Duration::from_secs(10), audit)
        .await
        .map_err(|_| "the server's stderr did not close")??;

    let samples = sampler.await?;
    let tenths = progress.tenths_mut().clone();
    let ticks_per_s = clock_ticks();
    let us_per_call = |ticks: u64| ticks as f64 * 1e6 / ticks_per_s as f64 / calls as f64;
    let report = Report {
        calls,
        wall,
        records,
        server_cpu_us: server_ticks.map(us_per_call),
        driver_cpu_us: us_per_call(own_ticks),
        peak_rss_kib: samples.iter().map(|s| s.hwm).fold(hwm, u64::max),
        end_rss_kib: end_rss,
        tenths,
        samples,
        audit,
    };
    let failures = report.print();
    for alarm in &alarms {
        eprintln!("server: {alarm}");
    }
    if failures > 0 {
        return Err(format!("{failures} call(s) lost, answered twice or unexpected").into());
    }
    Ok(())
}

/// Spawns the billing server with its stderr captured, and connects the typed client.
async fn start() -> Result<(Client, Connection, u32, ChildStderr), Error> {
    let path = mcp_fusion_drivers::artifacts::billing();
    // The builder (rather than `Client::spawn`) gives the child's pid and its stderr.
    let (transport, stderr) = TokioChildProcess::builder(tokio::process::Command::new(&path))
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = transport.id().ok_or("the server has no pid")?;
    let stderr = stderr.ok_or("the server's stderr was not captured")?;
    let (client, connection) = Client::connect(transport).await?;
    Ok((client, connection, pid, stderr))
}

// ---- the report ----

struct Report {
    calls: usize,
    wall: Duration,
    records: Vec<Record>,
    /// CPU per call (utime+stime), in µs: the server's, and this driver's.
    server_cpu_us: Option<f64>,
    driver_cpu_us: f64,
    peak_rss_kib: u64,
    end_rss_kib: Option<u64>,
    /// VmRSS (KiB) at each tenth of the answers.
    tenths: Vec<Option<u64>>,
    /// VmRSS and VmHWM every second.
    samples: Vec<Sample>,
    /// The server's audit lines by result.
    audit: BTreeMap<String, usize>,
}

impl Report {
    /// Prints the Markdown report; returns the number of failed calls (lost, answered twice,
    /// unexpected) plus one if the server's audit disagrees with the client's account.
    fn print(&self) -> usize {
        let mut answers = vec![0u8; self.calls];
        let mut foreign = 0;
        for record in &self.records {
            match answers.get_mut(record.index) {
                Some(count) => *count = count.saturating_add(1),
                None => foreign += 1,
            }
        }
        let lost = answers.iter().filter(|&&n| n == 0).count();
        let twice = answers.iter().filter(|&&n| n > 1).count() + foreign;
        let unexpected = self.records.iter().filter(|r| r.problem.is_some()).count();

        let mut all: Vec<Duration> = self.records.iter().map(|r| r.latency).collect();
        all.sort_unstable();
        let first_tenth = self.tenths.first().copied().flatten();

        println!(
            "## soak: {} calls, {IN_FLIGHT} in flight, stdio\n",
            self.calls
        );
        println!(
            "| calls/s | p50 ms | p99 ms | server CPU µs/call | driver CPU µs/call | peak RSS MiB | RSS at 10% MiB | RSS at end MiB | growth |"
        );
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let growth = first_tenth.zip(self.end_rss_kib).map(|(first, end)| {
            let growth = end as i64 - first as i64;
            format!(
                "{growth:+} KiB ({:+.1}%)",
                growth as f64 * 100.0 / first as f64
            )
        });
        println!(
            "| {:.0} | {:.2} | {:.2} | {} | {:.1} | {:.2} | {} | {} | {} |",
            self.calls as f64 / self.wall.as_secs_f64(),
            percentile_ms(&all, 0.50),
            percentile_ms(&all, 0.99),
            or_dash(self.server_cpu_us.map(|us| format!("{us:.1}"))),
            self.driver_cpu_us,
            mib(self.peak_rss_kib),
            or_dash(first_tenth.map(|kib| format!("{:.2}", mib(kib)))),
            or_dash(self.end_rss_kib.map(|kib| format!("{:.2}", mib(kib)))),
            or_dash(growth),
        );
        println!();
        println!(
            "wall {:.1} s; VmRSS MiB at each tenth of the calls: {}",
            self.wall.as_secs_f64(),
            comma_list(
                self.tenths
                    .iter()
                    .map(|kib| or_dash(kib.map(|kib| format!("{:.2}", mib(kib)))))
            )
        );
        // At most 20 of the per-second samples, evenly spaced.
        let stride = self.samples.len().div_ceil(20).max(1);
        println!(
            "VmRSS/VmHWM MiB, every {stride} s of {} samples: {}",
            self.samples.len(),
            comma_list(self.samples.iter().step_by(stride).map(|s| format!(
                "{:.2}/{:.2}",
                mib(s.rss),
                mib(s.hwm)
            )))
        );
        println!();

        println!("| kind | calls | share | p50 ms | p99 ms | unexpected |");
        println!("|---|---:|---:|---:|---:|---:|");
        let kinds = Kind::ALL.iter().map(|&k| (k.name(), Some(k)));
        for (name, kind) in kinds.chain([("other / no answer", None)]) {
            let mut latencies: Vec<Duration> = self
                .records
                .iter()
                .filter(|r| r.kind == kind)
                .map(|r| r.latency)
                .collect();
            if kind.is_none() && latencies.is_empty() {
                continue;
            }
            latencies.sort_unstable();
            let wrong = self
                .records
                .iter()
                .filter(|r| r.kind == kind && r.problem.is_some())
                .count();
            println!(
                "| {name} | {} | {:.2}% | {:.2} | {:.2} | {wrong} |",
                latencies.len(),
                latencies.len() as f64 * 100.0 / self.calls as f64,
                percentile_ms(&latencies, 0.50),
                percentile_ms(&latencies, 0.99),
            );
        }
        println!();

        let count = |kind: Kind| self.records.iter().filter(|r| r.kind == Some(kind)).count();
        let audited = |result: &str| self.audit.get(result).copied().unwrap_or(0);
        let audit_agrees = audited("ok") == count(Kind::Success)
            && audited("NOT_FOUND") == count(Kind::NotFound)
            && self.audit.len() <= 2;
        println!(
            "accounting: {} of {} indices answered exactly once; lost {lost}, answered twice \
             {twice}, unexpected {}",
            answers.iter().filter(|&&n| n == 1).count(),
            self.calls,
            unexpected
        );
        println!(
            "server audit log: {:?} (client: success {}, NOT_FOUND {}){}",
            self.audit,
            count(Kind::Success),
            count(Kind::NotFound),
            if audit_agrees { "" } else { " — DISAGREES" }
        );
        for (count, index, problem) in problem_groups(
            self.records
                .iter()
                .filter_map(|r| Some((r.index, r.problem.as_deref()?))),
        )
        .into_iter()
        .take(5)
        {
            println!("{count} × like call {index}: {}", clip(problem, 300));
        }
        lost + twice + unexpected + usize::from(!audit_agrees)
    }
}

fn comma_list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
