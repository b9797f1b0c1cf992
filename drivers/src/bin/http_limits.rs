//! The streamable HTTP server tried as a hostile client would, at length: the long variants of
//! `tests/it/http_serving.rs`, one row each, with the server's peak memory (`VmHWM`). Linux only.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin http_limits [-- --server PATH]
//! ```
//!
//! The server is the `billing` example, built by Cargo with this driver's profile, unless `--server` names another
//! build of it (an older commit's, to compare); every row uses its default limits.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_fusion_drivers::raw_http::{
    self, Billing, Error, get_invoice, initialize, read_response, session_headers, zeros,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Opens `n` connections that send `prefix` and then nothing (those refused at once are
/// dropped); returns those still open.
async fn hold(addr: &str, n: usize, prefix: &[u8]) -> Vec<TcpStream> {
    let mut held = Vec::new();
    let mut waited = 0;
    for _ in 0..n {
        // A server that stopped accepting leaves connects waiting once its backlog is full:
        // after 20 of those, it holds all it can.
        let connect = tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr));
        match connect.await {
            Ok(Ok(mut stream)) => {
                if stream.write_all(prefix).await.is_ok() {
                    held.push(stream);
                }
            }
            _ => waited += 1,
        }
        if waited == 20 {
            break;
        }
    }
    held
}

/// How many of `streams` the server has closed (a read returns at once with 0 or an error).
async fn closed(streams: &mut [TcpStream]) -> usize {
    let mut count = 0;
    for stream in streams {
        let mut buf = [0u8; 4096];
        loop {
            match tokio::time::timeout(Duration::from_millis(2), stream.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => {
                    count += 1;
                    break;
                }
                Ok(Ok(_)) => continue,
                Err(_) => break,
            }
        }
    }
    count
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let server: PathBuf = match args.iter().position(|a| a == "--server") {
        Some(at) => args.get(at + 1).ok_or("--server PATH")?.into(),
        None => mcp_fusion_drivers::artifacts::billing(),
    };
    println!("server: {}\n", server.display());
    println!("| row | measured |\n|---|---|");

    // Sessions: initialize in a loop for 7 s, then DELETE every one opened.
    let billing = Billing::start(&server, &[]).await?;
    let started = Instant::now();
    let (mut opened, mut refused, mut sessions) = (0, 0, Vec::new());
    while started.elapsed() < Duration::from_secs(7) {
        let reply = billing.post_json(&[], &initialize()).await;
        match reply.header("mcp-session-id") {
            Some(id) => {
                opened += 1;
                sessions.push(id.to_owned());
            }
            None => refused += 1,
        }
    }
    let peak = billing.peak_mib();
    for id in &sessions {
        let mut stream = TcpStream::connect(&billing.addr).await?;
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {id}\r\n\
             MCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(delete.as_bytes()).await?;
        raw_http::read_reply(&mut stream).await;
    }
    println!(
        "| `initialize` in a loop for 7 s | {opened} sessions, {refused} refused; peak {peak} MiB, RSS {} MiB after DELETE of all |",
        billing.status_mib("VmRSS")
    );

    // Bodies that never end: 64 connections, 4 MiB each, chunked, no last chunk.
    let billing = Billing::start(&server, &["--stateless"]).await?;
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
        Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "0".repeat(64 * 1024));
    let mut endless = hold(&billing.addr, 64, head).await;
    for stream in &mut endless {
        for _ in 0..64 {
            let sent = tokio::time::timeout(
                Duration::from_millis(200),
                stream.write_all(chunk.as_bytes()),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                break;
            }
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cut = closed(&mut endless).await;
    println!(
        "| 64 chunked bodies of 4 MiB that never end | peak {} MiB; {cut} of 64 connections closed by the server after 2 s |",
        billing.peak_mib()
    );
    drop(endless);

    // Slowloris: the server limited to 512 open files, 3,000 connections sending half a
    // request line, then a normal call.
    let limited = server.display().to_string();
    let billing = {
        let wrapper = std::env::temp_dir().join("billing-512-files.sh");
        std::fs::write(
            &wrapper,
            format!("#!/bin/sh\nulimit -n 512 && exec {limited} \"$@\"\n"),
        )?;
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )?;
        Billing::start(&wrapper, &["--stateless"]).await?
    };
    let slow = hold(&billing.addr, 3000, b"POST /mcp HTT").await;
    let started = Instant::now();
    let mut served_after = None;
    let mut answers = std::collections::BTreeMap::<u16, usize>::new();
    while started.elapsed() < Duration::from_secs(40) {
        let call = tokio::time::timeout(
            Duration::from_secs(2),
            billing.post_json(&[], &get_invoice(1)),
        )
        .await;
        let status = call.map_or(0, |reply| reply.status);
        *answers.entry(status).or_default() += 1;
        if status == 200 {
            served_after = Some(started.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let served = served_after.map_or("not within 40 s".to_owned(), |t| {
        format!("{:.1} s", t.as_secs_f64())
    });
    println!(
        "| 3,000 half request lines, server limited to 512 files | a normal call served after {served}; answers until then: {answers:?} (0 = no answer in 2 s) |"
    );
    drop(slow);

    // Large bodies of small values.
    let billing = Billing::start(&server, &["--stateless"]).await?;
    let before = billing.peak_mib();
    let reply = billing.post(&[], &zeros(4 << 20)).await;
    println!(
        "| one 4 MiB body of `[0,0,…]` | HTTP {}; peak {before} → {} MiB |",
        reply.status,
        billing.peak_mib()
    );
    let body = zeros(1 << 20);
    let posts: Vec<_> = (0..16)
        .map(|_| {
            let (addr, body) = (billing.addr.clone(), body.clone());
            tokio::spawn(async move { raw_http::post(&addr, &[], &body).await.status })
        })
        .collect();
    let mut statuses = Vec::new();
    for posted in posts {
        statuses.push(posted.await?);
    }
    println!(
        "| 16 bodies of 1 MiB of `[0,0,…]` at once | statuses {statuses:?}; peak {} MiB |",
        billing.peak_mib()
    );

    // Origin, and a body that is not JSON-RPC.
    let evil = billing
        .post_json(&[("Origin", "https://evil.example")], &get_invoice(1))
        .await;
    println!("| `Origin: https://evil.example` | HTTP {} |", evil.status);
    let broken = billing.post(&[], br#"{"jsonrpc":"2.0","id":1,"#).await;
    println!(
        "| a body that is not JSON | HTTP {} `{}` {} |",
        broken.status,
        broken.header("content-type").unwrap_or("-"),
        broken.body.trim()
    );

    // The log: 40 notifications of 900 KiB in a session.
    let mut billing = Billing::start(&server, &[]).await?;
    let session = billing.open_session().await.ok_or("no session")?;
    let big = "x".repeat(900 * 1024);
    for _ in 0..40 {
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1, "message": big}});
        billing
            .post_json(&session_headers(&session), &notification)
            .await;
    }
    billing.child.kill().await?;
    let log = billing.log.await?;
    println!(
        "| 40 notifications of 900 KiB, default log level | {} bytes of log |",
        log.len()
    );

    // Sequential calls in a session on one kept-alive connection (the client without Nagle):
    // the fast lane answers a plain call in one body; through rmcp's path (a call asking for
    // progress) each answer is a stream of events written in small pieces, so without
    // TCP_NODELAY on the server a call would wait ~40 ms for the client's delayed ACK (25
    // calls/s at most).
    let billing = Billing::start(&server, &[]).await?;
    let session = billing.open_session().await.ok_or("no session")?;
    let mut stream = TcpStream::connect(&billing.addr).await?;
    stream.set_nodelay(true)?;
    let calls = 200;
    for (path, progress) in [("the fast lane", false), ("rmcp's path", true)] {
        let started = Instant::now();
        for id in 0..calls {
            let mut call = get_invoice(id);
            if progress {
                call["params"]["_meta"] = json!({"progressToken": id});
            }
            let body = call.to_string();
            let request = format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
                 MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(request.as_bytes()).await?;
            let reply = read_response(&mut stream).await?;
            let answer = reply.messages().pop().unwrap_or_default();
            if reply.status != 200 || answer["id"] != id {
                return Err(format!("call {id} through {path}: {reply:?}").into());
            }
        }
        println!(
            "| {calls} sequential `get_invoice` in a session, one connection, {path} | {:.0} calls/s |",
            f64::from(calls as u32) / started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
