//! The stdio server tried as a hostile or careless client would, at length: the long variants
//! of `tests/it/stdio_serving.rs`, one row each, with the server's peak memory (`VmHWM`).
//! Linux only.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin stdio_limits [-- --server PATH] [--seconds 5]
//! ```
//!
//! The server is the `billing` example, built by Cargo with this driver's profile, unless `--server` names another
//! build of it (an older commit's, to compare). Rows that need the billing server's limit
//! flags (`--rate-limit`, `--rate-limit-keys`) report what a build without them does.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_fusion_drivers::raw_stdio::{
    self as raw, Billing, Error, call, cancel, outcome, too_deep, zeros,
};
use serde_json::json;
use tokio::io::AsyncWriteExt;

/// How each answer reads in the table: its id and outcome.
fn answers(all: &[serde_json::Value]) -> String {
    let shown: Vec<String> = all
        .iter()
        .map(|a| format!("{} {}", a["id"], outcome(a)))
        .collect();
    if shown.is_empty() {
        "none".into()
    } else {
        shown.join(", ")
    }
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
        None => mcp_fusion_drivers::artifacts::billing(),
    };
    let seconds = Duration::from_secs(value("--seconds").map_or(Ok(5), |s| s.parse())?);
    let quiet = Duration::from_secs(2);
    println!("server: {}\n", server.display());
    println!("| row | measured |\n|---|---|");

    let mut billing = Billing::start(&server, &[]).await?;
    for id in 1..=10 {
        billing.send_line(&too_deep(id)).await?;
    }
    billing.stdin = None;
    let answered = billing.receive_all(quiet).await.len();
    println!("| guard answers, stdin closed right after | {answered} of 10 answered |");

    let mut billing = Billing::start(&server, &[]).await?;
    let export = |id: u64| call(id, "export_invoices", json!({"format": "csv"}));
    billing.send(&export(1)).await?;
    billing.stdin = None;
    let all = billing.receive_all(Duration::from_secs(10)).await;
    println!(
        "| export_invoices in flight, stdin closed | {} |",
        answers(&all)
    );

    for read in [false, true] {
        let mut billing = Billing::start(&server, &[]).await?;
        let lines = billing.flood(b"[]", seconds, read).await;
        let stdout = if read { "read" } else { "not read" };
        println!(
            "| `[]` flood for {seconds:?}, stdout {stdout} | {lines} lines written, peak {:.0} MiB |",
            billing.peak_mib()
        );
    }

    let mut billing = Billing::start(&server, &[]).await?;
    let list = call(1, "list_invoices", json!({"limit": 100})).to_string();
    let calls = billing.flood(list.as_bytes(), seconds, false).await;
    println!(
        "| list_invoices for {seconds:?}, stdout never read | {calls} calls written, peak {:.0} MiB |",
        billing.peak_mib()
    );

    for mib in [1, 16] {
        let mut billing = Billing::start(&server, &[]).await?;
        let before = billing.peak_mib();
        billing.send_line(&zeros(1, mib << 20)).await?;
        let answer = billing.receive(Duration::from_secs(60)).await;
        let shown = answer.as_ref().map_or("no answer".into(), outcome);
        println!(
            "| one {mib} MiB line of `[0,0,…]` | {shown}; peak {before:.0} → {:.0} MiB |",
            billing.peak_mib()
        );
    }

    let limited = ["--rate-limit", "2/3600", "--no-audit"];
    let mut billing = Billing::start(&server, &limited).await?;
    let customers = ["alice", "alice", "bob", "carol", "alice"];
    let outcomes = billing.list_as(&customers).await?;
    let shown: Vec<String> = customers
        .iter()
        .zip(&outcomes)
        .map(|(c, o)| format!("{c} {o}"))
        .collect();
    println!(
        "| per-caller limit 2/h, no middleware | {} |",
        shown.join(", ")
    );

    let keyed = ["--rate-limit", "10/3600", "--no-audit"];
    let mut billing = Billing::start(&server, &keyed).await?;
    let rss = billing.status_mib("VmRSS");
    let total = 300_000;
    let mut stdin = billing.stdin.take().ok_or("stdin")?;
    let writing = async move {
        for from in (0..total).step_by(1000) {
            if stdin
                .write_all(&raw::distinct_callers(from, 1000))
                .await
                .is_err()
            {
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
        "| {total} distinct callers, limit 10/h each | RSS {rss:.0} → {:.0} MiB (peak {:.0}) in {:.1} s |",
        billing.status_mib("VmRSS"),
        billing.peak_mib(),
        started.elapsed().as_secs_f64()
    );

    let mut billing = Billing::start(&server, &[]).await?;
    for id in 1..=4 {
        billing.send(&export(id)).await?;
    }
    for id in 1..=4 {
        billing.send(&cancel(id)).await?;
    }
    for id in 5..=6 {
        billing.send(&export(id)).await?;
    }
    let all = billing.receive_all(quiet).await;
    println!(
        "| 4 exports cancelled, then 2 more | answers: {} |",
        answers(&all)
    );

    let mut billing = Billing::start(&server, &[]).await?;
    billing.send(&export(7)).await?;
    billing.send(&call(7, "list_invoices", json!({}))).await?;
    let all = billing.receive_all(quiet).await;
    println!(
        "| id 7: a slow then a fast call in flight | answers: {} |",
        answers(&all)
    );

    let mut billing = Billing::spawn(&server, &[])?;
    billing
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await?;
    billing
        .send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let running = matches!(billing.child.try_wait(), Ok(None));
    let served = running && billing.initialize().await.is_ok();
    let shown = if served {
        "ignored; initialize then served"
    } else {
        "the server exited"
    };
    println!("| a notification and a response before initialize | {shown} |");
    Ok(())
}
