//! The cost of a proxied call: the billing example called directly on stdio, and through the
//! `gateway` example that mounts it (a child process of the gateway), in one run. Sequential
//! calls and 16 in flight, for a success (`get_invoice`) and a validation error; calls/s,
//! p50/p99 and the server CPU per call (the gateway's and its upstream's together). Linux only.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin gateway_load [-- --calls 4000 --rounds 3]
//! ```
//!
//! `MCP_FUSION_BILLING=path` and `MCP_FUSION_GATEWAY=path` run other builds of the two examples.

use std::time::{Duration, Instant};

use mcp_fusion_drivers::artifacts;
use mcp_fusion_drivers::measure::{cpu_ns, percentile_ms};
use mcp_fusion_drivers::raw_stdio::{Billing, Error};
use serde_json::{Value, json};

fn flag(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(default)
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// CPU time of a process and its children, in ns.
fn cpu_tree(pid: u32) -> u64 {
    let own = cpu_ns(pid).unwrap_or(0);
    own + children(pid)
        .into_iter()
        .map(|child| cpu_ns(child).unwrap_or(0))
        .sum::<u64>()
}

/// The answer to request `id`, past notifications.
async fn answer(server: &mut Billing, id: u64) -> Result<Value, Error> {
    loop {
        let line = server
            .receive(Duration::from_secs(30))
            .await
            .ok_or("no answer within 30 s")?;
        if line["id"] == id {
            return Ok(line);
        }
    }
}

struct Row {
    calls_per_s: f64,
    p50: f64,
    p99: f64,
    cpu_us: f64,
}

/// `calls` calls of `tool` with `arguments`, `inflight` at a time; the first id `first`.
async fn run(
    server: &mut Billing,
    tool: &str,
    arguments: &Value,
    calls: usize,
    inflight: usize,
    first: u64,
) -> Result<Row, Error> {
    let pid = server.child.id().ok_or("the server exited")?;
    let cpu_before = cpu_tree(pid);
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(calls);
    let mut sent_at = std::collections::HashMap::new();
    let mut next = first;
    let end = first + calls as u64;
    let mut pending = 0;
    while next < end || pending > 0 {
        while pending < inflight && next < end {
            let message = json!({"jsonrpc": "2.0", "id": next, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}});
            server.send(&message).await?;
            sent_at.insert(next, Instant::now());
            next += 1;
            pending += 1;
        }
        let line = server
            .receive(Duration::from_secs(30))
            .await
            .ok_or("no answer within 30 s")?;
        let Some(id) = line["id"].as_u64() else {
            continue;
        };
        if let Some(at) = sent_at.remove(&id) {
            latencies.push(at.elapsed());
            pending -= 1;
        }
    }
    let elapsed = started.elapsed();
    let cpu = cpu_tree(pid) - cpu_before;
    latencies.sort();
    Ok(Row {
        calls_per_s: calls as f64 / elapsed.as_secs_f64(),
        p50: percentile_ms(&latencies, 0.5) * 1000.0,
        p99: percentile_ms(&latencies, 0.99) * 1000.0,
        cpu_us: cpu as f64 / calls as f64 / 1000.0,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let calls = flag("--calls", 4000);
    let rounds = flag("--rounds", 3);
    let billing = artifacts::billing();
    let gateway = match std::env::var_os("MCP_FUSION_GATEWAY") {
        Some(path) => path.into(),
        None => artifacts::example("gateway"),
    };
    let mut direct = Billing::start(&billing, &["--no-audit"]).await?;
    let books = format!("books={} --no-audit", billing.display());
    let mut through = Billing::start(&gateway, &["--upstream", &books]).await?;
    // The gateway lists the upstream's tools once it is connected.
    let mut id = 1_000_000;
    loop {
        through
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
            .await?;
        let listed = answer(&mut through, id).await?;
        if listed.to_string().contains("books_billing") {
            break;
        }
        id += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ok = json!({"action": "get_invoice", "id": "inv_2026_0001"});
    let invalid = json!({"action": "get_invoice", "id": 7});
    println!("| call | mode | server | calls/s | p50 µs | p99 µs | CPU µs/call |");
    println!("|---|---|---|---|---|---|---|");
    let mut first = 0;
    for (kind, arguments) in [("ok", &ok), ("invalid", &invalid)] {
        for (mode, inflight) in [("seq", 1), ("conc16", 16)] {
            let mut rows: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
            // Warm-up, then rounds alternating the two servers.
            for (server, tool) in [(&mut direct, "billing"), (&mut through, "books_billing")] {
                run(server, tool, arguments, calls / 4, inflight, first).await?;
                first += calls as u64;
            }
            for _ in 0..rounds {
                rows[0].push(run(&mut direct, "billing", arguments, calls, inflight, first).await?);
                first += calls as u64;
                let row = run(
                    &mut through,
                    "books_billing",
                    arguments,
                    calls,
                    inflight,
                    first,
                );
                rows[1].push(row.await?);
                first += calls as u64;
            }
            for (server, rows) in ["direct", "gateway"].iter().zip(&mut rows) {
                let median = |pick: fn(&Row) -> f64, rows: &[Row]| {
                    let mut values: Vec<f64> = rows.iter().map(pick).collect();
                    values.sort_by(f64::total_cmp);
                    values[values.len() / 2]
                };
                println!(
                    "| {kind} | {mode} | {server} | {:.0} | {:.1} | {:.1} | {:.1} |",
                    median(|r| r.calls_per_s, rows),
                    median(|r| r.p50, rows),
                    median(|r| r.p99, rows),
                    median(|r| r.cpu_us, rows),
                );
            }
        }
    }
    Ok(())
}
