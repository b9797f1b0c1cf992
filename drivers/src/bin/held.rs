//! Memory of what clients hold: per session of streamable HTTP (2025-11-25, `initialize` and
//! `notifications/initialized`, then idle) and per `subscriptions/listen` stream of a stateless
//! server (2026-07-28, acknowledged, then held open), this library (`bench_server`) against
//! bare rmcp (`plain_server`) in one run. Linux only (it reads `/proc`).
//!
//! ```text
//! cargo build --release -p mcp-fusion-drivers --bins && target/release/held
//! HELD_COUNT=500 HELD_ROUNDS=5 target/release/held
//! ```
//!
//! Each round starts every server afresh (in a rotated order), reads its private memory
//! (`RssAnon` of `/proc/<pid>/status`) once it has answered a first request and rested
//! HELD_SETTLE_MS (default 300 ms), opens HELD_COUNT (default 200) sessions or streams, each
//! on a keep-alive connection of its own (the connections are the same for both servers),
//! rests again and reads it again: the growth divided by the count is the cost of one. The
//! table shows the medians of HELD_ROUNDS (default 3) rounds, and ours minus plain.

use std::process::Stdio;
use std::time::Duration;

use mcp_fusion_drivers::measure::{env_usize, status_kib};
use mcp_fusion_drivers::raw_http::Pool;
use serde_json::json;
use tokio::io::AsyncBufReadExt;

type Error = Box<dyn std::error::Error>;

/// A server (its index) and what it holds.
type Key = (usize, Held);
/// `RssAnon` at rest, and the growth per one held, in KiB.
type Reading = (f64, f64);

/// What is held: sessions, or listen streams.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    Sessions,
    Streams,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    if !std::path::Path::new("/proc/self/status").exists() {
        println!("held: reads /proc, which this system does not have");
        return Ok(());
    }
    let count = env_usize("HELD_COUNT", 200)?.max(1);
    let rounds = env_usize("HELD_ROUNDS", 3)?.max(1);
    let settle = Duration::from_millis(env_usize("HELD_SETTLE_MS", 300)? as u64);
    let servers = [("plain", "plain_server"), ("ours", "bench_server")];
    println!("held: {count} sessions or streams per server, {rounds} round(s)");
    let mut readings: Vec<(Key, Vec<Reading>)> = Vec::new();
    for round in 0..rounds {
        for held in [Held::Sessions, Held::Streams] {
            for k in 0..servers.len() {
                let at = (k + round) % servers.len();
                let reading = measure(servers[at].1, held, count, settle).await?;
                match readings.iter_mut().find(|(key, _)| *key == (at, held)) {
                    Some((_, list)) => list.push(reading),
                    None => readings.push(((at, held), vec![reading])),
                }
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    println!();
    println!(
        "{:<8} {:<10} {:>16} {:>14} {:>16}",
        "server", "held", "RssAnon rest MiB", "KiB per one", "ours - plain KiB"
    );
    for held in [Held::Sessions, Held::Streams] {
        let name = match held {
            Held::Sessions => "session",
            Held::Streams => "listen",
        };
        let median_of = |server: usize| {
            let list = readings
                .iter()
                .find(|(key, _)| *key == (server, held))
                .map(|(_, list)| list.clone())
                .unwrap_or_default();
            let mut rest: Vec<f64> = list.iter().map(|r| r.0).collect();
            let mut one: Vec<f64> = list.iter().map(|r| r.1).collect();
            (median(&mut rest), median(&mut one))
        };
        let plain = median_of(0).1;
        for (i, (label, _)) in servers.iter().enumerate() {
            let (rest, one) = median_of(i);
            let difference = if i == 0 {
                String::new()
            } else {
                format!("{:+.1}", one - plain)
            };
            println!(
                "{label:<8} {name:<10} {:>16.2} {one:>14.1} {difference:>16}",
                rest / 1024.0
            );
        }
    }
    println!();
    println!("target: ours - plain <= +16 KiB per session and per stream");
    Ok(())
}

/// Starts `binary`, reads it at rest, holds `count` sessions or streams, reads it again:
/// `RssAnon` at rest, and the growth per one held, in KiB.
async fn measure(
    binary: &str,
    held: Held,
    count: usize,
    settle: Duration,
) -> Result<(f64, f64), Error> {
    let path = mcp_fusion_drivers::artifacts::driver(binary);
    let mut command = tokio::process::Command::new(&path);
    command.arg("--http");
    if held == Held::Sessions {
        command.arg("--sessions");
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("the server has no pid")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut url = String::new();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut url)
        .await?;
    let url = url.trim().to_owned();
    let version = match held {
        Held::Sessions => "2025-11-25",
        Held::Streams => "2026-07-28",
    };
    // Every session or stream on a connection of its own; a first one, dropped, warms up.
    let mut kept = Vec::with_capacity(count);
    let mut pools = Vec::with_capacity(count);
    let warm = Pool::with_version(&url, version).map_err(|e| e.to_string())?;
    match held {
        Held::Sessions => drop(session(warm).await?),
        Held::Streams => drop(listen(&warm).await?),
    }
    tokio::time::sleep(settle).await;
    let rest = status_kib(pid, "RssAnon")? as f64;
    for _ in 0..count {
        let pool = Pool::with_version(&url, version).map_err(|e| e.to_string())?;
        match held {
            Held::Sessions => pools.push(session(pool).await?),
            Held::Streams => kept.push(listen(&pool).await?),
        }
    }
    tokio::time::sleep(settle).await;
    let after = status_kib(pid, "RssAnon")? as f64;
    Ok((rest, (after - rest) / count as f64))
}

/// A session of a 2025-11-25 client on a connection of its own, left idle: the pool, which
/// keeps the connection open.
async fn session(pool: Pool) -> Result<Pool, Error> {
    let pool = pool.in_session("held").await.map_err(|e| e.to_string())?;
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    pool.post(ping).await.map_err(|e| e.to_string())?;
    Ok(pool)
}

/// A `subscriptions/listen` stream of a 2026-07-28 client, acknowledged and held open.
async fn listen(pool: &Pool) -> Result<tokio::net::TcpStream, Error> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "held", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}});
    let headers = "Mcp-Method: subscriptions/listen\r\n";
    let acknowledged = "notifications/subscriptions/acknowledged";
    Ok(pool
        .open_stream(body.to_string().as_bytes(), headers, acknowledged)
        .await
        .map_err(|e| e.to_string())?)
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}
