//! Serving that holds over streamable HTTP, tried as a hostile client would: the billing server
//! as a child process on loopback, spoken to in raw HTTP/1.1 where a client library would not
//! misbehave, with the server's peak memory read from `/proc/PID/status` on Linux.

mod common;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::time::{Instant, timeout};

/// The billing server on streamable HTTP.
struct Billing {
    child: Child,
    addr: String,
    /// What it logged after its first line.
    log: tokio::task::JoinHandle<Vec<u8>>,
}

impl Billing {
    async fn start(args: &[&str]) -> Billing {
        let mut child = Command::new(common::billing_binary())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the billing server starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        timeout(Duration::from_secs(10), stderr.read_line(&mut first))
            .await
            .expect("the server says where it listens")
            .unwrap();
        let addr = first
            .trim()
            .strip_prefix("billing: streamable HTTP on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_owned();
        let log = tokio::spawn(async move {
            let mut log = Vec::new();
            let _ = stderr.read_to_end(&mut log).await;
            log
        });
        Billing { child, addr, log }
    }

    fn peak_mib(&self) -> u64 {
        let pid = self.child.id().expect("running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    }

    async fn post(&self, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        post(&self.addr, headers, body).await
    }

    async fn post_json(&self, headers: &[(&str, &str)], message: &Value) -> Reply {
        self.post(headers, message.to_string().as_bytes()).await
    }
}

/// One POST on a connection of its own: status, headers (lower case) and body.
async fn post(addr: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let _ = stream.write_all(body).await;
        read_reply(&mut stream).await
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of the body, plain or the first event of a stream.
    fn message(&self) -> Value {
        let text = match self.body.lines().find_map(|l| l.strip_prefix("data: ")) {
            Some(data) if self.header("content-type") == Some("text/event-stream") => data,
            _ => self.body.as_str(),
        };
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// A whole HTTP/1.1 response read until the server closes the connection.
async fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let reading = async {
        let mut buf = [0u8; 8192];
        // Until the server closes (a reset after the answer counts as closing).
        while let Ok(n @ 1..) = stream.read(&mut buf).await {
            raw.extend_from_slice(&buf[..n]);
        }
    };
    timeout(Duration::from_secs(10), reading)
        .await
        .expect("the response in time");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "http-serving", "version": "1"}}})
}

fn get_invoice(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "billing", "arguments": {"action": "get_invoice", "id": "inv_2026_0001"}}})
}

#[tokio::test]
async fn sessions_are_capped_and_the_refusal_names_the_cap() {
    let billing = Billing::start(&["--max-sessions", "2"]).await;
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let reply = billing.post_json(&[], &initialize()).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        sessions.push(reply.header("mcp-session-id").unwrap().to_owned());
    }
    let refused = billing.post_json(&[], &initialize()).await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("10"));
    let message = refused.message();
    assert_eq!(message["id"], 1);
    assert_eq!(message["error"]["code"], -32000);
    let text = message["error"]["message"].as_str().unwrap();
    assert!(text.contains("at most 2 sessions"), "{text}");

    // Ending a session makes room for another.
    let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\r\n",
        sessions[0]
    );
    stream.write_all(delete.as_bytes()).await.unwrap();
    let deleted = read_reply(&mut stream).await.status;
    assert!((200..300).contains(&deleted), "{deleted}");
    assert_eq!(billing.post_json(&[], &initialize()).await.status, 200);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn initialize_in_a_loop_cannot_grow_the_server() {
    let billing = Billing::start(&[]).await;
    let started = Instant::now();
    let mut opened = 0;
    while started.elapsed() < Duration::from_secs(2) {
        if billing.post_json(&[], &initialize()).await.status == 200 {
            opened += 1;
        }
    }
    assert_eq!(opened, 256, "the default cap");
    let peak = billing.peak_mib();
    assert!(peak < 64, "peak {peak} MiB");
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let billing = Billing::start(&["--stateless"]).await;
    let evil = billing
        .post_json(&[("Origin", "https://evil.example")], &get_invoice(1))
        .await;
    assert_eq!(evil.status, 403);
    for origin in [
        None,
        Some("http://localhost:5173"),
        Some("http://127.0.0.1"),
    ] {
        let headers: Vec<(&str, &str)> = origin.iter().map(|o| ("Origin", *o)).collect();
        let reply = billing.post_json(&headers, &get_invoice(2)).await;
        assert_eq!(reply.status, 200, "{origin:?}: {}", reply.body);
    }
}

#[tokio::test]
async fn malformed_bodies_get_a_json_rpc_error_without_positions() {
    let billing = Billing::start(&["--stateless"]).await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"x":{}{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let cases: [(&[u8], i64, Value); 5] = [
        (br#"{"jsonrpc":"2.0","id":1,"#, -32700, Value::Null),
        (b"not json at all", -32700, Value::Null),
        (b"", -32700, Value::Null),
        (b"[1,2]", -32600, Value::Null),
        (deep.as_bytes(), -32600, json!(5)),
    ];
    for (body, code, id) in cases {
        let reply = billing.post(&[], body).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let message = reply.message();
        assert_eq!(
            (&message["error"]["code"], &message["id"]),
            (&json!(code), &id)
        );
        assert!(!reply.body.contains("line 1"), "{}", reply.body);
    }
    // A lone surrogate is read as U+FFFD, as on stdio: the call is served.
    let lone = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"billing","arguments":{"action":"get_invoice","id":"\ud800"}}}"#;
    let reply = billing.post(&[], lone).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.message()["result"]["isError"], true);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn large_bodies_of_small_values_are_refused_or_parsed_two_at_a_time() {
    let billing = Billing::start(&["--stateless"]).await;
    let zeros = |bytes: usize| {
        let mut body = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"billing","arguments":{"action":"list_invoices","z":["#.to_vec();
        body.extend(std::iter::repeat_n(*b"0,", bytes.saturating_sub(200) / 2).flatten());
        body.extend_from_slice(b"0]}}}");
        body
    };
    let refused = billing.post(&[], &zeros(4 << 20)).await;
    assert_eq!(refused.status, 413);
    assert_eq!(refused.message()["error"]["code"], -32600);
    // Sixteen at once, each just within the limit: parsed two at a time.
    let body = zeros(1 << 20);
    let posts: Vec<_> = (0..16)
        .map(|_| {
            let (addr, body) = (billing.addr.clone(), body.clone());
            tokio::spawn(async move { post(&addr, &[], &body).await })
        })
        .collect();
    for posted in posts {
        let reply = posted.await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let peak = billing.peak_mib();
    assert!(peak < 400, "peak {peak} MiB for 16 bodies of 1 MiB");
}

#[tokio::test]
async fn slow_and_endless_bodies_are_cut_off() {
    let billing = Billing::start(&["--stateless", "--body-timeout", "0.5"]).await;
    // Headers, then half a body, then nothing.
    let mut slow = TcpStream::connect(&billing.addr).await.unwrap();
    slow.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .unwrap();
    let started = Instant::now();
    let reply = read_reply(&mut slow).await;
    assert_eq!(reply.status, 408);
    assert_eq!(reply.message()["error"]["code"], -32600);
    assert!(started.elapsed() < Duration::from_secs(3));
    // A chunked body that never ends, past the size limit: refused as soon as it is over.
    let mut endless = TcpStream::connect(&billing.addr).await.unwrap();
    endless
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        )
        .await
        .unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "0".repeat(64 * 1024));
    for _ in 0..17 {
        if endless.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    assert_eq!(read_reply(&mut endless).await.status, 413);
}

#[tokio::test]
async fn idle_and_slow_connections_are_closed_and_capped() {
    let args = [
        "--stateless",
        "--header-timeout",
        "0.5",
        "--idle-timeout",
        "1",
        "--max-connections",
        "20",
    ];
    let billing = Billing::start(&args).await;
    // Twenty connections that send half a request line and stop: the cap is reached.
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
        stream.write_all(b"POST /mcp HTT").await.unwrap();
        slow.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let refused = billing.post_json(&[], &get_invoice(1)).await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    // Past the header timeout they are closed, and a normal call is served again.
    tokio::time::sleep(Duration::from_millis(800)).await;
    for stream in &mut slow {
        let mut rest = Vec::new();
        let closed = timeout(Duration::from_secs(2), stream.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "a slow connection is still open");
    }
    let served = billing.post_json(&[], &get_invoice(2)).await;
    assert_eq!(served.status, 200, "{}", served.body);
}

/// TCP_NODELAY: with a session each answer is a stream of events written in small pieces;
/// without it a call on a kept-alive connection waited ~40 ms for the client's delayed ACK.
#[tokio::test]
async fn calls_in_a_session_are_not_held_by_nagle() {
    let billing = Billing::start(&[]).await;
    let session = billing.post_json(&[], &initialize()).await;
    let session = session.header("mcp-session-id").unwrap().to_owned();
    let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
    // The client's own side without Nagle too, so that only the server's is measured.
    stream.set_nodelay(true).unwrap();
    let keep_alive = |message: Value| {
        let body = message.to_string();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    stream
        .write_all(keep_alive(initialized).as_bytes())
        .await
        .unwrap();
    read_until(&mut stream, b"\r\n\r\n").await;
    let started = Instant::now();
    for id in 0..30 {
        stream
            .write_all(keep_alive(get_invoice(id)).as_bytes())
            .await
            .unwrap();
        // The stream of events of one call ends with the last chunk.
        read_until(&mut stream, b"\r\n0\r\n\r\n").await;
    }
    let each = started.elapsed() / 30;
    assert!(each < Duration::from_millis(15), "{each:?} per call");
}

/// Reads from `stream` until what was read ends with `end`.
async fn read_until(stream: &mut TcpStream, end: &[u8]) {
    let mut read = Vec::new();
    let mut buf = [0u8; 8192];
    while !read.ends_with(end) {
        let n = timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("in time")
            .unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buf[..n]);
    }
}

/// Request bodies are never logged whole: rmcp logs every notification it receives in full at
/// INFO, so the billing example keeps rmcp at WARN unless `RUST_LOG` says otherwise.
#[tokio::test]
async fn the_log_stays_small_whatever_the_bodies() {
    let mut billing = Billing::start(&[]).await;
    let session = billing.post_json(&[], &initialize()).await;
    let session = session.header("mcp-session-id").unwrap().to_owned();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let big = "x".repeat(900 * 1024);
    for _ in 0..5 {
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1, "message": big}});
        let reply = billing.post_json(&headers, &notification).await;
        assert_eq!(reply.status, 202, "{}", reply.body);
    }
    billing.child.kill().await.unwrap();
    let log = billing.log.await.unwrap();
    assert!(
        log.len() < 16 * 1024,
        "{} bytes of log for 5 notifications",
        log.len()
    );
}
