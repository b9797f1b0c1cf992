//! Serving that holds over streamable HTTP, tried as a hostile client would: the billing server
//! as a child process on loopback, spoken to in raw HTTP/1.1 where a client library would not
//! misbehave, with the server's peak memory read from `/proc/PID/status` on Linux.

use std::time::Duration;

use mcp_fusion::client::Client;
use mcp_fusion_drivers::raw_http;

use raw_http::{Billing, get_invoice, initialize, post, read_reply, zeros};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};

async fn start(args: &[&str]) -> Billing {
    Billing::start(&mcp_fusion_drivers::artifacts::billing(), args)
        .await
        .expect("the billing server starts")
}

#[tokio::test]
async fn sessions_are_capped_and_the_refusal_names_the_cap() {
    let billing = start(&["--max-sessions", "2"]).await;
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
    // An `initialize` whose body names another method first (nested in its params) is counted
    // too: a POST outside any session is read exactly, not glanced at.
    let hidden = br#"{"params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"x":{"method":"prompts/get"}}},"clientInfo":{"name":"c","version":"1"}},"jsonrpc":"2.0","id":1,"method":"initialize"}"#;
    let refused = billing.post(&[], hidden).await;
    assert_eq!(refused.status, 503, "{}", refused.body);

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
    let opened = billing.post(&[], hidden).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert!(opened.header("mcp-session-id").is_some());
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn initialize_in_a_loop_cannot_grow_the_server() {
    let billing = start(&[]).await;
    let mut opened = 0;
    for _ in 0..300 {
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
    let billing = start(&["--stateless"]).await;
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

/// A forbidden `Host` or `Origin` is refused 403 whatever the body: before the body is read,
/// not told about a body that is no JSON-RPC message (400) or too large (413). In process, on
/// the service an application mounts, stateful and stateless.
#[tokio::test]
async fn a_forbidden_host_or_origin_is_refused_before_the_body_is_read() {
    use tower::ServiceExt;
    let server = mcp_fusion::Server::builder("t", "1").build().unwrap();
    for stateless in [false, true] {
        let mut options = mcp_fusion::server::HttpOptions::default();
        options.stateless = stateless;
        options.max_body_bytes = 1024;
        let service = server.http_service(options);
        let initialize = initialize().to_string();
        let big = "0".repeat(4096);
        for (host, origin) in [
            ("evil.example", None),
            ("127.0.0.1:3000", Some("https://evil.example")),
        ] {
            for body in ["{}", "not json", &initialize, &big] {
                let mut request = axum::http::Request::post("/mcp")
                    .header("host", host)
                    .header("accept", "application/json, text/event-stream")
                    .header("content-type", "application/json");
                if let Some(origin) = origin {
                    request = request.header("origin", origin);
                }
                let request = request
                    .body(axum::body::Body::from(body.to_owned()))
                    .unwrap();
                let reply = service.clone().oneshot(request).await.unwrap();
                let case = format!(
                    "stateless {stateless}, {host} {origin:?}, body {}",
                    &body[..body.len().min(20)]
                );
                assert_eq!(reply.status(), 403, "{case}");
            }
        }
        // The same bodies from an allowed host are read and told what is wrong with them.
        let request = axum::http::Request::post("/mcp")
            .header("host", "127.0.0.1:3000")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(axum::body::Body::from("{}"))
            .unwrap();
        let reply = service.clone().oneshot(request).await.unwrap();
        assert_eq!(reply.status(), 400, "stateless {stateless}");
    }
}

#[tokio::test]
async fn malformed_bodies_get_a_json_rpc_error_without_positions() {
    let billing = start(&["--stateless"]).await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"x":{}{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    // Requests of the table a stateless server leaves to rmcp's parse, refused by rmcp: then
    // read whole, and answered in the same words.
    let cut = br#"{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"#;
    let huge =
        br#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"x","n":1e400}}"#;
    let cases: [(&[u8], i64, Value); 7] = [
        (br#"{"jsonrpc":"2.0","id":1,"#, -32700, Value::Null),
        (b"not json at all", -32700, Value::Null),
        (b"", -32700, Value::Null),
        (b"[1,2]", -32600, Value::Null),
        (deep.as_bytes(), -32600, json!(5)),
        (cut, -32700, Value::Null),
        (huge, -32600, json!(7)),
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
    let billing = start(&["--stateless"]).await;
    let refused = billing.post(&[], &zeros(4 << 20)).await;
    assert_eq!(refused.status, 413);
    assert_eq!(refused.message()["error"]["code"], -32600);
    // Sixteen at once, each just within the limit: parsed two at a time. One that waits longer
    // than `parse_wait` for its turn (on a busy machine) is refused 503 with `Retry-After`,
    // and sent again, as a client does.
    let body = zeros(1 << 20);
    let posts: Vec<_> = (0..16)
        .map(|_| {
            let (addr, body) = (billing.addr.clone(), body.clone());
            tokio::spawn(async move {
                for _ in 0..16 {
                    let reply = post(&addr, &[], &body).await;
                    if reply.status != 503 {
                        return reply;
                    }
                    assert_eq!(reply.header("retry-after"), Some("1"), "{reply:?}");
                }
                panic!("refused 16 times in a row")
            })
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
    let billing = start(&["--stateless", "--body-timeout", "0.5"]).await;
    // Headers, then half a body, then nothing.
    let mut slow = TcpStream::connect(&billing.addr).await.unwrap();
    slow.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .unwrap();
    let reply = read_reply(&mut slow).await;
    assert_eq!(reply.status, 408);
    assert_eq!(reply.message()["error"]["code"], -32600);
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

/// A head sent a byte at a time keeps its connection from ever being idle; it is cut off at the
/// header time all the same, as is a keep-alive connection left unused after its answer.
#[tokio::test]
async fn a_head_sent_a_byte_at_a_time_is_cut_off_at_the_header_time() {
    let args = [
        "--stateless",
        "--header-timeout",
        "0.5",
        "--idle-timeout",
        "600",
    ];
    let billing = start(&args).await;
    let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ")
        .await
        .unwrap();
    let (mut read, mut write) = stream.split();
    let trickle = async {
        // A byte every 50 ms, for as long as the server reads them.
        while write.write_all(b"a").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        std::future::pending::<()>().await;
    };
    let mut rest = Vec::new();
    let closed = tokio::select! {
        closed = timeout(crate::support::PATIENCE, read.read_to_end(&mut rest)) => closed,
        () = trickle => unreachable!("the trickle never ends"),
    };
    assert!(
        closed.is_ok(),
        "a head sent a byte at a time is still being read"
    );

    // A request answered, then nothing: the connection closes at the header time.
    let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
    let body = get_invoice(1).to_string();
    let head = raw_http::post_head(&[], body.len()).replace("Connection: close\r\n", "");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answered = Vec::new();
    let closed = timeout(crate::support::PATIENCE, stream.read_to_end(&mut answered)).await;
    assert!(
        closed.is_ok(),
        "a keep-alive connection left unused is still open"
    );
    let answered = String::from_utf8_lossy(&answered);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(!answered.contains("connection: close"), "{answered}");
}

#[tokio::test]
async fn idle_and_slow_connections_are_closed_and_capped() {
    let args = [
        "--stateless",
        "--header-timeout",
        "0.5",
        "--idle-timeout",
        "1",
        "--body-timeout",
        "3",
        "--max-connections",
        "20",
    ];
    let billing = start(&args).await;
    // Twenty connections whose requests are in progress (a body that does not come): the cap
    // is reached and none of them is idle, so a new connection is refused.
    let mut busy = Vec::new();
    for _ in 0..20 {
        let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
        let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                    Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{";
        stream.write_all(head.as_bytes()).await.unwrap();
        busy.push(stream);
    }
    // Real clock, no event: a connection counts as busy once the server has read its head, and
    // nothing outside shows that but a request, which would take the place of a connection not
    // yet read (idle until then). 100 ms for the server to read twenty heads.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let refused = billing.post_json(&[], &get_invoice(1)).await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    drop(busy);
    // Their places given back: a request is served again.
    let mut id = 10;
    crate::support::eventually("a place given back", async || {
        id += 1;
        (billing.post_json(&[], &get_invoice(id)).await.status == 200).then_some(())
    })
    .await;

    // Twenty connections that send half a request line and stop are idle: a new connection
    // takes the place of one of them, and past the header timeout all are closed.
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
        stream.write_all(b"POST /mcp HTT").await.unwrap();
        slow.push(stream);
    }
    // Real clock, no event, as above: 100 ms for the server to take the twenty connections.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let served = billing.post_json(&[], &get_invoice(2)).await;
    assert_eq!(served.status, 200, "{}", served.body);
    // Each closed by the server, at the header timeout (0.5 s); PATIENCE only turns a
    // connection never closed into a failure.
    for stream in &mut slow {
        let mut rest = Vec::new();
        let closed = timeout(crate::support::PATIENCE, stream.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "a slow connection is still open");
    }
    let served = billing.post_json(&[], &get_invoice(3)).await;
    assert_eq!(served.status, 200, "{}", served.body);
}

/// Request bodies are never logged whole: rmcp logs every notification it receives in full at
/// INFO, so the billing example keeps rmcp at WARN unless `RUST_LOG` says otherwise.
#[tokio::test]
async fn the_log_stays_small_whatever_the_bodies() {
    let mut billing = start(&[]).await;
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

/// A connection that moves no byte for `idle_timeout` while none of its requests is being
/// handled is closed: here a stream of events with nothing to say (a live one carries a
/// keep-alive every 15 s, well within the default 60 s).
#[tokio::test]
async fn an_idle_stream_is_closed() {
    let billing = start(&["--idle-timeout", "1"]).await;
    let session = billing.open_session().await.expect("a session");
    let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    let started = Instant::now();
    let reply = read_reply(&mut stream).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    // Not before its idle timeout (how soon after is the machine's business).
    let after = started.elapsed();
    assert!(
        after >= Duration::from_millis(900),
        "closed after {after:?}"
    );
}

/// A client that writes its whole request before it reads (most simple clients) reads the
/// refusal of a body over the limit: the server answers 413 at once, then reads and drops what
/// the client still sends before it closes (a lingering close), so the client gets no reset.
#[tokio::test]
async fn a_client_writing_a_body_over_the_limit_reads_the_refusal() {
    let billing = start(&["--stateless"]).await;
    for declared in [4usize << 20, 100_000_000] {
        let mut stream = TcpStream::connect(&billing.addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {declared}\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let chunk = vec![b' '; 1 << 20];
        let mut written = 0;
        while written < declared {
            let n = chunk.len().min(declared - written);
            stream
                .write_all(&chunk[..n])
                .await
                .unwrap_or_else(|e| panic!("writing byte {written} of {declared} failed: {e}"));
            written += n;
        }
        let reply = read_reply(&mut stream).await;
        assert_eq!(reply.status, 413, "{declared} bytes: {reply:?}");
        assert_eq!(reply.message()["error"]["code"], -32600);
    }
}

/// Requests of one session with the id of one in flight: each is refused, naming the rule,
/// whether the fast lane takes it (`400`) or rmcp (the refusal as the one event of its stream),
/// and the first is still answered (rmcp routes answers by id, so the first would be lost).
#[tokio::test]
async fn the_same_id_twice_in_a_session_gets_two_answers() {
    let billing = start(&[]).await;
    let session = billing.open_session().await.expect("a session");
    let headers = raw_http::session_headers(&session);
    let slow = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "export_invoices", "format": "csv"},
                   "_meta": {"progressToken": "export"}}});
    let fast = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "list_invoices"}}});
    // In flight once its first progress is streamed (five parts of 40 ms).
    let (stream, streamed) = crate::support::post_streaming_until(
        &billing.addr,
        &headers,
        &slow,
        "notifications/progress",
    )
    .await;
    let first = tokio::spawn(crate::support::rest_of_reply(stream, streamed));
    // The same call, taken by the lane (`400`); asking for progress, taken by rmcp (`200`, the
    // refusal on its stream).
    let mut with_progress = fast.clone();
    with_progress["params"]["_meta"] = json!({"progressToken": "again"});
    for (second, status) in [(&fast, 400), (&with_progress, 200)] {
        let second = billing.post_json(&headers, second).await;
        assert_eq!(second.status, status, "{second:?}");
        let refused = second.message();
        assert_eq!(
            (&refused["id"], &refused["error"]["code"]),
            (&json!(7), &json!(-32600)),
            "{refused}"
        );
        let text = refused["error"]["message"].as_str().unwrap();
        assert!(
            text.contains("already used by a request in flight"),
            "{text}"
        );
    }
    let first = timeout(Duration::from_secs(10), first)
        .await
        .unwrap()
        .unwrap();
    // The export's stream: its progress, then its answer, under the same id, a success.
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(first.contains(r#""id":7,"result""#), "{first}");
    assert!(first.contains(r#""isError":false"#), "{first}");
    // Answered: the id may be used again.
    let again = billing.post_json(&headers, &fast).await.message();
    assert_eq!(again["result"]["isError"], false, "{again}");
}

/// With every connection held by idle sockets, a new client takes the place of the idlest one:
/// a real MCP client (rmcp's, over HTTP) still lists and calls tools.
#[tokio::test]
async fn idle_connections_at_the_cap_make_room_for_a_working_client() {
    let billing = start(&["--max-connections", "256"]).await;
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(&billing.addr).await.unwrap());
    }
    let url = format!("http://{}/mcp", billing.addr);
    let (client, _connection) = timeout(Duration::from_secs(5), Client::connect_http(&url))
        .await
        .expect("connected in time")
        .expect("connected");
    let tools = client.list_tools().await.expect("tools listed");
    assert_eq!(tools.len(), 1);
    let listed = client
        .call("billing.list_invoices", json!({}))
        .await
        .expect("called");
    assert_eq!(listed.is_error, Some(false));
    drop(idle);
}

/// A hundred calls whose trace context would once panic the server, then an ordinary call: all
/// answered.
#[tokio::test]
async fn hostile_trace_contexts_are_answered() {
    let billing = start(&["--stateless"]).await;
    let traceparent = format!("0é{}", "a".repeat(52));
    for id in 0..100 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "billing", "arguments": {"action": "list_invoices"},
                "_meta": {"traceparent": traceparent}}});
        let reply = billing.post_json(&[], &call).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.message()["result"]["isError"], false);
    }
    let reply = billing.post_json(&[], &get_invoice(100)).await;
    assert_eq!(reply.message()["id"], 100);
}
