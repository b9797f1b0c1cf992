//! The fast paths answer what rmcp's path answers. Stdio (`StdioOptions::fast_path`): the same
//! requests, sent one at a time to the billing server served twice in process (fast path on and
//! off), get byte-identical answers, once the lifecycle has begun and before, in sessions begun
//! with `initialize` and by a request carrying its 2026-07-28 lifecycle. Stateless HTTP
//! (`HttpOptions::fast_path`): the same bodies and headers get the same status, content type and
//! bytes.

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::ProtocolVersion;
use mcp_fusion::server::StdioOptions;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use crate::support::billing::Billing;

/// The billing server on an in-memory pipe, with or without the fast path.
struct Served {
    requests: WriteHalf<DuplexStream>,
    answers: BufReader<ReadHalf<DuplexStream>>,
}

impl Served {
    fn start(fast_path: bool) -> Served {
        let server = Server::builder("billing", "1").tool(Billing::seeded());
        Served::serving(server, fast_path)
    }

    /// `server` on an in-memory pipe, with or without the fast path.
    fn serving(server: mcp_fusion::server::ServerBuilder, fast_path: bool) -> Served {
        let server = server.build().expect("the server builds");
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        let mut options = StdioOptions::default();
        options.fast_path = fast_path;
        tokio::spawn(server.serve_io(read, write, options).into_future());
        let (answers, requests) = tokio::io::split(client);
        Served {
            requests,
            answers: BufReader::new(answers),
        }
    }

    /// Writes `line` and reads the one answer it gets.
    async fn ask(&mut self, line: &str) -> String {
        self.requests.write_all(line.as_bytes()).await.unwrap();
        self.requests.write_all(b"\n").await.unwrap();
        let mut answer = String::new();
        tokio::time::timeout(
            std::time::Duration::from_secs(30),
            self.answers.read_line(&mut answer),
        )
        .await
        .unwrap_or_else(|_| panic!("no answer to {line}"))
        .unwrap();
        answer
    }

    /// Writes `line` and reads up to its answer: the progress notifications before it, and it.
    async fn ask_with_progress(&mut self, line: &str) -> (Vec<String>, String) {
        let mut progress = Vec::new();
        let mut answer = self.ask(line).await;
        while answer.contains(r#""method":"notifications/progress""#) {
            progress.push(answer);
            answer = String::new();
            self.answers.read_line(&mut answer).await.unwrap();
        }
        (progress, answer)
    }

    async fn tell(&mut self, line: &str) {
        self.requests.write_all(line.as_bytes()).await.unwrap();
        self.requests.write_all(b"\n").await.unwrap();
    }
}

fn call(id: u32, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "billing", "arguments": arguments}})
    .to_string()
}

/// Requests whose answers do not depend on what ran before them (no creation, no payment).
fn requests() -> Vec<String> {
    let mut lines = vec![
        call(1, json!({"action": "list_invoices"})),
        call(2, json!({"action": "get_invoice", "id": "inv_2026_0001"})),
        call(3, json!({"action": "get_invoice", "id": "inv_2026_9999"})),
        call(4, json!({"action": "get_invoice", "id": 5})),
        call(5, json!({"action": "get_invoce", "id": "inv_2026_0001"})),
        call(6, json!({"id": "inv_2026_0001"})),
        call(7, json!({"action": 7})),
        call(
            8,
            json!({"action": "create_invoice", "customer_email": "not-an-email",
                       "amount_cents": -1, "currency": "EURO", "lines": [], "nmae": 1}),
        ),
        call(
            9,
            json!({"action": "list_invoices", "status": "<paid/>\u{1b}"}),
        ),
        call(10, json!({})),
        // Version 3 (ERRORS.md §11): the actions that take the fields sent, an abbreviation,
        // the same problem in several elements as one line (its mirror with `elements`), a
        // pattern's example, a string sent as its text.
        call(
            31,
            json!({"id": "inv_2026_0001", "reason": "Created by mistake"}),
        ),
        call(
            32,
            json!({"action": "delete_invoice", "id": "inv_2026_0001"}),
        ),
        call(33, json!({"action": "crt_inv"})),
        call(
            34,
            json!({"action": "create_invoice", "customer_email": "ada@example.com",
                   "amount_cents": 1, "currency": "EUR",
                   "lines": [{"description": "a", "quantity": 0}, {"description": "b", "quantity": 0},
                             {"description": "c", "quantity": 0}, {"description": "d", "qty": 1}]}),
        ),
        call(35, json!({"action": "get_invoice", "id": "INV-1"})),
        call(36, json!({"action": "export_invoices", "format": "csv"})),
    ];
    lines.extend(
        [
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"billing"}}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"billing","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"payments","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"billing","arguments":{"action":"list_invoices"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b"}}}"#,
            r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"billing","arguments":{"action":"list_invoices"},"_meta":{"traceparent":"0é-not-a-trace-context-at-all-but-long-enough-to-matter"}}}"#,
            r#"{"jsonrpc":"2.0","id":"sixteen","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":19,"method":"tools/list","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":20,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":21,"method":"ping","params":{"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"billing","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"billing","name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"billing","arguments":{"action":"list_invoices","n":1e400}}}"#,
            r#"{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"billing","arguments":{"action":"get_invoice","id":"\ud800"}}}"#,
            r#"{"jsonrpc":"2.0","id":27,"method":"resources/list"}"#,
            r#"{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"billing","arguments":{"action":"list_invoices"}},"extra":true}"#,
            r#"{"jsonrpc":"2.0","id":-9007199254740993,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#,
            // An action called as a tool (a JSON-RPC error saying how to call it).
            r#"{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"billing.get_invoice","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"billing_get_invoice","arguments":{}}}"#,
        ]
        .map(str::to_owned),
    );
    lines
}

/// The answers of the version 3 requests say what ERRORS.md §11 has them say (so that the
/// comparisons above are of those answers, not of refusals).
fn shows_version_3(request: &str, answer: &str) {
    let expected: &[&str] = match serde_json::from_str::<Value>(request)
        .ok()
        .map(|r| r["id"].clone())
    {
        Some(id) if id == 31 => {
            &["Actions that take every field you sent: billing.cancel_invoice."]
        }
        Some(id) if id == 32 => &["Actions that take every field you sent: billing.get_invoice, "],
        Some(id) if id == 33 => &[r#"Did you mean \"billing.create_invoice\"?"#],
        Some(id) if id == 34 => &[
            r#"<field name=\"lines[0-2].quantity\">"#,
            r#"{"path":"lines[0-2].quantity","elements":[0,1,2],"problem":"minimum""#,
            r#"did you mean \"quantity\"?"#,
        ],
        Some(id) if id == 35 => &["(e.g. 'inv_2026_0001')"],
        Some(id) if id == 36 => &[r#""text":"id,customer_email,amount_cents,currency,status\n"#],
        Some(id) if id == 37 || id == 38 => {
            &[r#"call the tool \"billing\" with {\"action\": \"get_invoice\"} in its arguments."#]
        }
        _ => &[],
    };
    for shown in expected {
        assert!(answer.contains(shown), "{shown} in {answer}");
    }
}

/// Results are shaped by the version the session negotiated (`resultType`, structured output),
/// as rmcp shapes them: a session of the oldest version this checks and of the newest that
/// `initialize` negotiates (2026-07-28 begins without it).
#[tokio::test(flavor = "current_thread")]
async fn fast_and_rmcp_paths_answer_alike() {
    for version in ["2025-06-18", "2025-11-25"] {
        answer_alike(version).await;
    }
}

async fn answer_alike(version: &str) {
    let mut fast = Served::start(true);
    let mut slow = Served::start(false);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "fast-path", "version": "1"}}})
    .to_string();
    // Before the lifecycle begins, everything is rmcp's.
    let ping = r#"{"jsonrpc":"2.0","id":"early","method":"ping"}"#;
    assert_eq!(fast.ask(ping).await, slow.ask(ping).await);
    let initialized = fast.ask(&initialize).await;
    assert_eq!(initialized, slow.ask(&initialize).await);
    assert!(initialized.contains(version), "{initialized}");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    fast.tell(initialized).await;
    slow.tell(initialized).await;
    for line in requests() {
        let (quick, plain) = (fast.ask(&line).await, slow.ask(&line).await);
        assert_eq!(quick, plain, "{version}: {line}");
        shows_version_3(&line, &quick);
        // The same request carrying its own 2026-07-28 lifecycle: read by it, not the session's.
        if let Some((inline, _, _)) = inline_2026(&line) {
            let line = inline.to_string();
            assert_eq!(
                fast.ask(&line).await,
                slow.ask(&line).await,
                "{version}: {line}"
            );
        }
    }

    // A call with a progress token: its notifications come before its answer, the first and
    // the last (always sent) alike on both paths; those between depend on timing.
    let export = json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "export_invoices", "format": "csv"},
                   "_meta": {"progressToken": "export-1"}}})
    .to_string();
    let (quick_progress, quick) = fast.ask_with_progress(&export).await;
    let (plain_progress, plain) = slow.ask_with_progress(&export).await;
    assert_eq!(quick, plain, "{version}: the export's answer");
    assert!(quick.contains(r#""id":40"#), "{quick}");
    for (quick, plain) in [
        (quick_progress.first(), plain_progress.first()),
        (quick_progress.last(), plain_progress.last()),
    ] {
        assert!(quick.is_some(), "{version}: progress over the fast path");
        assert_eq!(quick, plain, "{version}: progress");
    }
}

/// Stdio, 2026-07-28: a client that never sends `initialize` begins the session with its first
/// request carrying its lifecycle in `_meta` (one without capabilities is refused first, and
/// the session stays unbegun), then every request carries it. Both paths give the same answers
/// to every request, to its variants with another lifecycle (`other_lifecycles`), to it
/// without one (refused in such a session, even after an `initialize`), and to `ping` (gone
/// from 2026-07-28); a call's progress comes alike too.
#[tokio::test(flavor = "current_thread")]
async fn fast_and_rmcp_paths_answer_alike_on_stdio_at_2026_07_28() {
    let mut fast = Served::start(true);
    let mut slow = Served::start(false);
    let (opening, _, _) =
        inline_2026(r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#).expect("a request");
    let mut unready = opening.clone();
    unready["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    for line in [unready, opening].map(|line| line.to_string()) {
        assert_eq!(fast.ask(&line).await, slow.ask(&line).await, "{line}");
    }
    let mut answered = 0;
    for body in requests() {
        let Some((request, _, _)) = inline_2026(&body) else {
            assert_eq!(fast.ask(&body).await, slow.ask(&body).await, "{body}");
            continue;
        };
        let mut variants = vec![request.clone(), serde_json::from_str(&body).unwrap()];
        variants.extend(other_lifecycles(&request));
        for variant in variants.iter().map(Value::to_string) {
            let quick = fast.ask(&variant).await;
            assert_eq!(quick, slow.ask(&variant).await, "{variant}");
        }
        let quick = fast.ask(&request.to_string()).await;
        if quick.contains(r#""result""#) {
            shows_version_3(&body, &quick);
            answered += 1;
        }
    }
    // The well-formed ones were answered, not refused.
    assert!(answered >= 10, "{answered} answered");
    // An `initialize` now does not make it a session of plain requests: each still needs its
    // lifecycle.
    let initialize = json!({"jsonrpc": "2.0", "id": 41, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "fast-path", "version": "1"}}});
    let bare = r#"{"jsonrpc":"2.0","id":42,"method":"tools/list"}"#;
    for line in [&initialize.to_string(), bare] {
        assert_eq!(fast.ask(line).await, slow.ask(line).await, "{line}");
    }

    let export = r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"billing","arguments":{"action":"export_invoices","format":"csv"},"_meta":{"progressToken":"export-1"}}}"#;
    let export = inline_2026(export).expect("a request").0.to_string();
    let (quick_progress, quick) = fast.ask_with_progress(&export).await;
    let (plain_progress, plain) = slow.ask_with_progress(&export).await;
    assert_eq!(quick, plain, "the export's answer");
    for (quick, plain) in [
        (quick_progress.first(), plain_progress.first()),
        (quick_progress.last(), plain_progress.last()),
    ] {
        assert!(quick.is_some(), "progress over the fast path");
        assert_eq!(quick, plain, "progress");
    }
}

/// The billing server's stateless HTTP endpoint, with or without the fast path.
fn http_endpoint(fast_path: bool) -> mcp_fusion::server::HttpService {
    let server = Server::builder("billing", "1").tool(Billing::seeded());
    stateless_endpoint(server, fast_path)
}

/// `server`'s stateless HTTP endpoint, with or without the fast path.
fn stateless_endpoint(
    server: mcp_fusion::server::ServerBuilder,
    fast_path: bool,
) -> mcp_fusion::server::HttpService {
    let mut options = mcp_fusion::server::HttpOptions::default();
    options.stateless = true;
    options.fast_path = fast_path;
    let server = server.build().expect("the server builds");
    server.http_service(options)
}

/// Pings the session of `headers` until the lane answers (its event ids count from 2^63):
/// the session becomes the lane's once rmcp's session has told the server `initialized`
/// (after its 202), and rmcp answers until then.
async fn lane_answers(endpoint: &mcp_fusion::server::HttpService, headers: &[(&str, &str)]) {
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for _ in 0..1000 {
        let answered = post(endpoint, headers, ping).await;
        assert_eq!(answered.0, 200, "{answered:?}");
        if answered.2.contains("/9223372036854775") {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the lane never answered");
}

/// Status, content type and body of `body` POSTed with `headers`.
async fn post(
    endpoint: &mcp_fusion::server::HttpService,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Option<String>, String) {
    use tower::ServiceExt;
    let mut request = axum::http::Request::post("/mcp");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(axum::body::Body::from(body.to_owned()))
        .unwrap();
    let reply = endpoint.clone().oneshot(request).await.unwrap();
    let status = reply.status().as_u16();
    let content_type = reply
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = axum::body::to_bytes(axum::body::Body::new(reply.into_body()), usize::MAX)
        .await
        .unwrap();
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

/// Stateless HTTP: every request, with plain headers for each version the fast path takes and
/// with headers it leaves to rmcp, gets the same answer from both endpoints.
#[tokio::test(flavor = "current_thread")]
async fn fast_and_rmcp_paths_answer_alike_over_stateless_http() {
    let (fast, slow) = (http_endpoint(true), http_endpoint(false));
    let plain = |version: &'static str| {
        vec![
            ("host", "127.0.0.1:3000"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("mcp-protocol-version", version),
        ]
    };
    let mut variants = vec![
        plain("2025-06-18"),
        plain("2025-11-25"),
        plain("2025-03-26"),
    ];
    for (name, value) in [
        ("host", "evil.example"),
        ("origin", "http://localhost:5173"),
        ("origin", "https://evil.example"),
        ("accept", "application/json"),
        ("content-type", "text/plain"),
        ("mcp-protocol-version", "1999-01-01"),
    ] {
        let mut headers = plain("2025-06-18");
        headers.retain(|(n, _)| *n != name);
        headers.push((name, value));
        variants.push(headers);
    }
    let mut unversioned = plain("2025-06-18");
    unversioned.pop();
    variants.push(unversioned);
    for headers in &variants {
        for body in requests() {
            let quick = post(&fast, headers, &body).await;
            let plain = post(&slow, headers, &body).await;
            assert_eq!(quick, plain, "{headers:?}: {body}");
            if quick.0 == 200 {
                shows_version_3(&body, &quick.2);
            }
        }
    }
    // Answered at all: the calls ran.
    let listed = post(&fast, &variants[0], &requests()[0]).await;
    assert_eq!(listed.0, 200);
    assert!(listed.2.contains("inv_2026_0001"), "{}", listed.2);
}

/// A 2026-07-28 request as its client sends it: the lifecycle in `_meta` (merged into the
/// body's own `_meta`, if it has one) and the standard headers naming it. `None` for a body
/// that is not an object with an object of params.
fn inline_2026(body: &str) -> Option<(Value, String, Option<String>)> {
    let mut request: Value = serde_json::from_str(body).ok()?;
    let method = request.get("method")?.as_str()?.to_owned();
    let params = request
        .as_object_mut()?
        .entry("params")
        .or_insert(json!({}));
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let meta = params.as_object_mut()?.entry("_meta").or_insert(json!({}));
    let meta = meta.as_object_mut()?;
    meta.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        json!("2026-07-28"),
    );
    meta.insert(
        "io.modelcontextprotocol/clientCapabilities".into(),
        json!({}),
    );
    meta.insert(
        "io.modelcontextprotocol/clientInfo".into(),
        json!({"name": "fast-path", "version": "1"}),
    );
    Some((request, method, name))
}

/// `request` (made by `inline_2026`) with a lifecycle rmcp refuses or reads as another version:
/// one older, one unknown, none, capabilities missing or unreadable, an unreadable client.
fn other_lifecycles(request: &Value) -> impl Iterator<Item = Value> {
    [
        ("protocolVersion", Some(json!("2025-11-25"))),
        ("protocolVersion", Some(json!("2099-01-01"))),
        ("protocolVersion", None),
        ("clientCapabilities", None),
        ("clientCapabilities", Some(json!("none"))),
        ("clientInfo", Some(json!(5))),
    ]
    .into_iter()
    .map(|(key, value)| {
        let mut changed = request.clone();
        let meta = changed["params"]["_meta"].as_object_mut().unwrap();
        let key = format!("io.modelcontextprotocol/{key}");
        match value {
            Some(value) => meta.insert(key, value),
            None => meta.remove(&key),
        };
        changed
    })
}

/// Stateless HTTP, 2026-07-28: requests carrying their lifecycle and naming themselves in the
/// standard headers get the same answers from both endpoints, and so do those whose headers or
/// `_meta` rmcp refuses (one variant per refusal; HTTP 400 from both).
#[tokio::test(flavor = "current_thread")]
async fn fast_and_rmcp_paths_answer_alike_at_2026_07_28() {
    answer_alike_at_2026_07_28(http_endpoint(true), http_endpoint(false)).await;
}

/// A server with sessions (`serve_http`'s default), 2026-07-28: rmcp serves a request carrying
/// its lifecycle without a session, as a stateless server does, but answers it as an event
/// stream (its `json_response` is off with sessions); both paths give the same answers.
#[tokio::test(flavor = "current_thread")]
async fn fast_and_rmcp_paths_answer_alike_at_2026_07_28_with_sessions() {
    answer_alike_at_2026_07_28(session_endpoint(true), session_endpoint(false)).await;
}

async fn answer_alike_at_2026_07_28(
    fast: mcp_fusion::server::HttpService,
    slow: mcp_fusion::server::HttpService,
) {
    let base = [
        ("host", "127.0.0.1:3000"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
    ];
    let mut answered = 0;
    for body in requests() {
        let Some((request, method, name)) = inline_2026(&body) else {
            continue;
        };
        let good: Vec<(&str, String)> = base
            .iter()
            .map(|(n, v)| (*n, (*v).to_owned()))
            .chain([("mcp-method", method.clone())])
            .chain(name.clone().map(|n| ("mcp-name", n)))
            .collect();
        let mut variants: Vec<(Vec<(&str, String)>, Value)> = vec![(good.clone(), request.clone())];
        let replaced = |name: &'static str, value: Option<&str>| {
            let mut headers = good.clone();
            headers.retain(|(n, _)| *n != name);
            headers.extend(value.map(|v| (name, v.to_owned())));
            headers
        };
        variants.push((replaced("mcp-method", None), request.clone()));
        variants.push((replaced("mcp-method", Some("tools/list")), request.clone()));
        variants.push((replaced("mcp-name", Some("payments")), request.clone()));
        variants.push((
            replaced("mcp-name", Some("=?base64?YmlsbGluZw==?=")),
            request.clone(),
        ));
        variants.push((replaced("mcp-name", None), request.clone()));
        let mut twice = good.clone();
        twice.push(("mcp-method", method.clone()));
        variants.push((twice, request.clone()));
        let mut param = good.clone();
        param.push(("mcp-param-region", "eu".to_owned()));
        variants.push((param, request.clone()));
        variants.extend(other_lifecycles(&request).map(|changed| (good.clone(), changed)));
        for (headers, request) in &variants {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let body = request.to_string();
            let quick = post(&fast, &headers, &body).await;
            let plain = post(&slow, &headers, &body).await;
            assert_eq!(quick, plain, "{headers:?}: {body}");
            if quick.0 == 200 && quick.2.contains(r#""result""#) {
                shows_version_3(&body, &quick.2);
            }
        }
        let headers: Vec<(&str, &str)> = good.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = post(&fast, &headers, &request.to_string()).await;
        answered += usize::from(reply.0 == 200 && reply.2.contains(r#""result""#));
    }
    // The well-formed ones were answered, not refused.
    assert!(answered >= 10, "{answered} answered");
}

/// A handler that supports no version from 2026-07-28 on.
struct Before2026;

impl mcp_fusion::rmcp::ServerHandler for Before2026 {
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Owned(vec![
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
        ])
    }
}

/// A server whose handler does not support 2026-07-28: a request carrying that lifecycle is
/// refused alike on both paths, over stateless HTTP and over stdio (where it does not begin the
/// session), and a stdio session begun with `initialize` then serves alike, that request still
/// refused.
#[tokio::test(flavor = "current_thread")]
async fn a_version_the_handler_does_not_support_is_refused_on_both_paths() {
    let server = || {
        Server::builder("billing", "1")
            .tool(Billing::seeded())
            .handler(Before2026)
    };
    let (fast, slow) = (
        stateless_endpoint(server(), true),
        stateless_endpoint(server(), false),
    );
    let body = call(1, json!({"action": "list_invoices"}));
    let (request, method, name) = inline_2026(&body).expect("a request");
    let headers = [
        ("host", "127.0.0.1:3000"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", &method),
        ("mcp-name", name.as_deref().unwrap_or_default()),
    ];
    let quick = post(&fast, &headers, &request.to_string()).await;
    assert_eq!(quick, post(&slow, &headers, &request.to_string()).await);
    assert!(quick.2.contains("nsupported protocol version"), "{quick:?}");

    let mut fast = Served::serving(server(), true);
    let mut slow = Served::serving(server(), false);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "fast-path", "version": "1"}}});
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let inline = request.to_string();
    for line in [
        &inline,
        &initialize.to_string(),
        initialized,
        &body,
        &inline,
    ] {
        if line == initialized {
            fast.tell(line).await;
            slow.tell(line).await;
            continue;
        }
        let quick = fast.ask(line).await;
        assert_eq!(quick, slow.ask(line).await, "{line}");
        let refused = *line == inline;
        assert_eq!(
            quick.contains("nsupported protocol version"),
            refused,
            "{quick}"
        );
    }
}

/// The answers to a round of `notes.delete` and to the retries a state cannot carry on, as
/// `ask` gets them (what the transport says besides, and the JSON-RPC answer), each
/// `requestState` (sealed with a nonce of its own) blanked.
async fn a_round<T>(mut ask: impl AsyncFnMut(String) -> (T, Value)) -> Vec<(T, Value)> {
    let can = json!({"elicitation": {"form": {}}});
    let delete = json!({"action": "delete", "note": "a"});
    let answers = json!({"elicitation-1": {"action": "accept", "content": {"confirm": true}}});
    let elsewhere = json!({"elicitation-9": answers["elicitation-1"]});
    let mut replies = Vec::new();
    let mut send = async |body: Value| {
        let (besides, mut body) = ask(body.to_string()).await;
        let state = body["result"]["requestState"].take();
        let state = state.as_str().map(str::to_owned);
        replies.push((besides, body));
        state
    };
    let first = crate::client::call_2026(delete.clone(), None, can.clone());
    let state = send(first.clone()).await.expect("a state");
    let mut altered = state.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'A' { 'B' } else { 'A' });
    let other = json!({"action": "delete", "note": "b"});
    for (arguments, answers, state) in [
        (other, &answers, &state),
        (delete.clone(), &answers, &altered),
        (delete.clone(), &answers, &state),
        (delete.clone(), &answers, &state),
    ] {
        let retry = crate::client::call_2026(arguments, Some((answers, state)), can.clone());
        send(retry).await;
    }
    let state = send(first).await.expect("a state");
    let retry = crate::client::call_2026(delete, Some((&elsewhere, &state)), can);
    send(retry).await;
    replies
}

/// HTTP, 2026-07-28, on a stateless server and on one with sessions: a retried round
/// (`inputResponses` and `requestState`, which the lane takes) gets the answers rmcp's path
/// gives: done, refused for another call's arguments, for an altered state, when replayed, and
/// asked again for an answer under another key.
#[tokio::test(flavor = "current_thread")]
async fn a_retried_round_is_answered_alike_on_both_paths() {
    for stateless in [true, false] {
        a_round_alike_over_http(stateless).await;
    }
}

async fn a_round_alike_over_http(stateless: bool) {
    let endpoint = |fast_path: bool| {
        let server = Server::builder("notes", "1").tool(crate::client::Notes);
        let server = server.request_state_secret([7u8; 32]).build().unwrap();
        let mut options = mcp_fusion::server::HttpOptions::default();
        options.stateless = stateless;
        options.fast_path = fast_path;
        server.http_service(options)
    };
    let on = async |endpoint: mcp_fusion::server::HttpService| {
        let headers = [
            ("host", "127.0.0.1:3000"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "notes"),
        ];
        a_round(async |body| {
            let (status, content_type, body) = post(&endpoint, &headers, &body).await;
            // With sessions an answer of `200` is one event.
            let json = body.strip_prefix("data: ").map_or(&*body, str::trim_end);
            ((status, content_type), serde_json::from_str(json).unwrap())
        })
        .await
    };
    let quick = on(endpoint(true)).await;
    let plain = on(endpoint(false)).await;
    assert_eq!(quick, plain);
    shows_a_round(&quick);
}

/// What the answers of `a_round` say, in turn.
fn shows_a_round<T>(replies: &[(T, Value)]) {
    let said = |at: usize| replies[at].1.to_string();
    assert!(said(0).contains("input_required"), "{}", said(0));
    assert!(said(1).contains("made for another call"), "{}", said(1));
    assert!(said(2).contains("altered"), "{}", said(2));
    assert!(said(3).contains("Deleted a"), "{}", said(3));
    assert!(said(4).contains("used already"), "{}", said(4));
    assert!(said(6).contains("input_required"), "{}", said(6));
}

/// Stdio, 2026-07-28: the same round, its requests carrying their lifecycle, gets the same
/// answers on both paths.
#[tokio::test(flavor = "current_thread")]
async fn a_retried_round_is_answered_alike_on_stdio() {
    let on = async |fast_path: bool| {
        let server = Server::builder("notes", "1").tool(crate::client::Notes);
        let served = &mut Served::serving(server.request_state_secret([7u8; 32]), fast_path);
        a_round(async |line| ((), serde_json::from_str(&served.ask(&line).await).unwrap())).await
    };
    let quick = on(true).await;
    assert_eq!(quick, on(false).await);
    shows_a_round(&quick);
}

/// The `X-Tenant` header of the request a call came in, as middleware and rate-limit keys
/// read it (`http::request::Parts` in the call's extensions).
fn tenant(info: &mcp_fusion::middleware::CallInfo) -> Option<String> {
    let parts = info.extensions().get::<axum::http::request::Parts>()?;
    Some(parts.headers.get("x-tenant")?.to_str().ok()?.to_owned())
}

/// Middleware that records the tenant of each call.
struct Tenants(std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>);

impl mcp_fusion::middleware::Middleware for Tenants {
    fn handle<'a>(
        &'a self,
        info: &'a mcp_fusion::middleware::CallInfo,
        next: mcp_fusion::middleware::Next<'a>,
    ) -> mcp_fusion::tools::BoxFuture<
        'a,
        Result<mcp_fusion::rmcp::model::CallToolResult, mcp_fusion::tools::Failure>,
    > {
        self.0.lock().unwrap().push(tenant(info));
        next.run()
    }
}

/// Middleware and the rate-limit key see the request's head whichever path answers it: a
/// header check reads the same on both, and a budget keyed on a header is one budget, spent by
/// calls on either path.
#[tokio::test(flavor = "current_thread")]
async fn middleware_and_rate_limit_keys_read_the_same_head_on_both_paths() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = Server::builder("billing", "1")
        .tool(Billing::seeded())
        .middleware(Tenants(seen.clone()))
        .rate_limit(1, std::time::Duration::from_secs(600))
        .rate_limit_key(tenant)
        .build()
        .expect("the server builds");
    let endpoint = |fast_path: bool| {
        let mut options = mcp_fusion::server::HttpOptions::default();
        options.stateless = true;
        options.fast_path = fast_path;
        // One server, so one budget per key on both endpoints.
        server.http_service(options)
    };
    let (fast, slow) = (endpoint(true), endpoint(false));
    let list = call(1, json!({"action": "list_invoices"}));
    let mut outcomes = Vec::new();
    for (endpoint, tenant) in [
        (&fast, "acme"),
        (&slow, "acme"),
        (&slow, "beta"),
        (&fast, "beta"),
    ] {
        let headers = [
            ("host", "127.0.0.1:3000"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("mcp-protocol-version", "2025-06-18"),
            ("x-tenant", tenant),
        ];
        let (status, _, body) = post(endpoint, &headers, &list).await;
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        let code = match text.split_once("code=\"") {
            Some((_, rest)) => rest.split('"').next().unwrap(),
            None => "ok",
        };
        outcomes.push(format!("{tenant} {code}"));
    }
    // Each tenant's second call is refused, on whichever path it came.
    assert_eq!(
        outcomes,
        [
            "acme ok",
            "acme RATE_LIMITED",
            "beta ok",
            "beta RATE_LIMITED"
        ]
    );
    // The middleware saw each tenant on both paths (the refused calls never reached it).
    assert_eq!(
        *seen.lock().unwrap(),
        [Some("acme".to_owned()), Some("beta".to_owned())]
    );
}

/// The billing server's streamable HTTP endpoint with sessions, with or without the fast path.
fn session_endpoint(fast_path: bool) -> mcp_fusion::server::HttpService {
    let server = Server::builder("billing", "1")
        .tool(Billing::seeded())
        .build()
        .expect("the server builds");
    let mut options = mcp_fusion::server::HttpOptions::default();
    options.fast_path = fast_path;
    server.http_service(options)
}

/// The headers of a request in a session, as a client of 2025-11-25 sends them.
fn in_session(session: &str) -> Vec<(&'static str, String)> {
    vec![
        ("host", "127.0.0.1:3000".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("content-type", "application/json".to_owned()),
        ("mcp-protocol-version", "2025-11-25".to_owned()),
        ("mcp-session-id", session.to_owned()),
    ]
}

/// Opens a session of `version` whose client declares `capabilities`: its id.
async fn open_session(
    endpoint: &mcp_fusion::server::HttpService,
    version: &str,
    capabilities: Value,
) -> String {
    use tower::ServiceExt;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": "fast-path", "version": "1"}}});
    let request = axum::http::Request::post("/mcp")
        .header("host", "127.0.0.1:3000")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(initialize.to_string()))
        .unwrap();
    let reply = endpoint.clone().oneshot(request).await.unwrap();
    assert_eq!(reply.status(), 200);
    let session = reply.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let headers = in_session(&session);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    assert_eq!(post(endpoint, &headers, initialized).await.0, 202);
    session
}

/// The events' ids without the stream's number (`id: 1/N` → `id: 1/_`): rmcp numbers its
/// streams per session, the lane from 2^63.
fn without_stream_numbers(body: &str) -> String {
    body.lines()
        .map(|line| match line.strip_prefix("id: ") {
            Some(id) => format!("id: {}/_", id.split('/').next().unwrap_or("")),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Streamable HTTP with sessions: every request, in sessions of the oldest and the newest
/// version `initialize` negotiates, with the headers a client sends and with headers the lane
/// leaves to rmcp (an unknown session among them: 404 from both), gets the same status,
/// content type and events from both endpoints; the lane answered the plain ones itself (its
/// streams are numbered from 2^63), calls included only when the client cannot be asked
/// anything.
#[tokio::test(flavor = "current_thread")]
async fn fast_and_rmcp_paths_answer_alike_in_a_session() {
    let (fast, slow) = (session_endpoint(true), session_endpoint(false));
    for (version, capabilities) in [
        ("2025-11-25", json!({})),
        ("2025-03-26", json!({})),
        ("2025-11-25", json!({"elicitation": {}})),
    ] {
        let asks = capabilities != json!({});
        let sessions = [
            open_session(&fast, version, capabilities.clone()).await,
            open_session(&slow, version, capabilities).await,
        ];
        let variants: Vec<Vec<(&str, String)>> = {
            let plain = |session: &str| in_session(session);
            let mut variants = vec![plain("{session}")];
            for (name, value) in [
                ("mcp-protocol-version", "2025-06-18"),
                ("mcp-protocol-version", "1999-01-01"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-session-id", "no-such-session"),
                ("origin", "https://evil.example"),
                ("accept", "application/json"),
                ("content-type", "text/plain"),
                ("mcp-method", "tools/call"),
            ] {
                let mut headers = plain("{session}");
                headers.retain(|(n, _)| *n != name);
                headers.push((name, value.to_owned()));
                variants.push(headers);
            }
            let mut unversioned = plain("{session}");
            unversioned.retain(|(n, _)| *n != "mcp-protocol-version");
            variants.push(unversioned);
            variants
        };
        let (mut by_lane, mut calls_by_lane) = (0, 0);
        for variant in &variants {
            for body in requests() {
                let mut answers = Vec::new();
                for (endpoint, session) in [(&fast, &sessions[0]), (&slow, &sessions[1])] {
                    let headers: Vec<(&str, String)> = (variant.iter())
                        .map(|(n, v)| (*n, v.replace("{session}", session)))
                        .collect();
                    let headers: Vec<(&str, &str)> =
                        headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
                    answers.push(post(endpoint, &headers, &body).await);
                }
                let [quick, plain] = <[_; 2]>::try_from(answers).unwrap();
                if quick.2.contains("/9223372036854775") {
                    by_lane += 1;
                    calls_by_lane += usize::from(body.contains("tools/call"));
                }
                let quick = (quick.0, quick.1, without_stream_numbers(&quick.2));
                let plain = (plain.0, plain.1, without_stream_numbers(&plain.2));
                assert_eq!(quick, plain, "{version} {variant:?}: {body}");
            }
        }
        // The lane answered: pings and listings always, calls when nothing can ask the client.
        let plain_requests = requests()
            .iter()
            .filter(|r| r.contains(r#""method":"ping""#) || r.contains("tools/list"))
            .count();
        assert!(
            by_lane >= plain_requests,
            "{version}: {by_lane} by the lane"
        );
        assert_eq!(
            calls_by_lane > 0,
            !asks,
            "{version}: {calls_by_lane} calls by the lane"
        );
    }
}

/// A session rmcp closed (DELETE) is no longer the lane's: its requests are answered 404, as
/// rmcp answers them.
#[tokio::test(flavor = "current_thread")]
async fn a_closed_session_is_rmcps_to_refuse() {
    use tower::ServiceExt;
    let fast = session_endpoint(true);
    let session = open_session(&fast, "2025-11-25", json!({})).await;
    let headers = in_session(&session);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    lane_answers(&fast, &headers).await;
    let mut delete = axum::http::Request::delete("/mcp");
    for (name, value) in &headers {
        delete = delete.header(*name, *value);
    }
    let deleted = (fast.clone())
        .oneshot(delete.body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_eq!(post(&fast, &headers, ping).await.0, 404);
}

/// A call that runs until it is cancelled, and says when it begins and when work it spawned
/// sees its cancellation.
struct Waits {
    told: tokio::sync::mpsc::UnboundedSender<&'static str>,
}

/// Calls that wait for their cancellation.
#[mcp_fusion::tool]
impl Waits {
    /// Spawns work that says when the call is cancelled, then waits.
    async fn wait(&self, f: mcp_fusion::Context) -> Result<&'static str, mcp_fusion::ToolError> {
        let (token, told) = (f.cancellation(), self.told.clone());
        tokio::spawn(async move {
            token.cancelled().await;
            let _ = told.send("cancelled");
        });
        let _ = self.told.send("began");
        std::future::pending().await
    }
}

/// A call the lane answers in a session is cancelled by the session's `notifications/cancelled`
/// naming it, as rmcp cancels its own: the handler sees it, and the call's stream ends.
#[tokio::test(flavor = "current_thread")]
async fn the_sessions_cancellation_reaches_a_call_of_the_lane() {
    let (told, mut tells) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::builder("waits", "1")
        .tool(Waits { told })
        .build()
        .expect("the server builds");
    let mut options = mcp_fusion::server::HttpOptions::default();
    options.fast_path = true;
    let endpoint = server.http_service(options);
    let session = open_session(&endpoint, "2025-11-25", json!({})).await;
    let headers = in_session(&session);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    lane_answers(&endpoint, &headers).await;
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"waits","arguments":{"action":"wait"}}}"#;
    let calling = {
        let (endpoint, headers) = (endpoint.clone(), headers.clone());
        let headers: Vec<(String, String)> = (headers.iter())
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        tokio::spawn(async move {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            post(&endpoint, &headers, call).await
        })
    };
    let patience = std::time::Duration::from_secs(30);
    let began = tokio::time::timeout(patience, tells.recv()).await;
    if began != Ok(Some("began")) {
        panic!("the call did not begin: {:?}", calling.await);
    }
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
    assert_eq!(post(&endpoint, &headers, cancel).await.0, 202);
    let cancelled = tokio::time::timeout(patience, tells.recv()).await;
    assert_eq!(cancelled, Ok(Some("cancelled")));
    let (status, _, body) = tokio::time::timeout(std::time::Duration::from_secs(30), calling)
        .await
        .expect("the call's stream ends")
        .unwrap();
    assert_eq!(status, 200);
    assert!(
        body.contains("retry:") && !body.contains(r#""id":7"#),
        "{body}"
    );
}

/// A session whose client only sends what the lane answers lives on: rmcp's session, which
/// ends a session it hears nothing of for its keep-alive, is told the client is there. On the
/// paused clock, five keep-alives pass.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_session_the_lane_serves_outlives_its_keep_alive() {
    let server = Server::builder("billing", "1")
        .tool(Billing::seeded())
        .build()
        .expect("the server builds");
    let mut options = mcp_fusion::server::HttpOptions::default();
    let keep_alive = std::time::Duration::from_secs(8);
    options.session_keep_alive = keep_alive;
    let endpoint = server.http_service(options);
    let session = open_session(&endpoint, "2025-11-25", json!({})).await;
    let headers = in_session(&session);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    lane_answers(&endpoint, &headers).await;
    for step in 0..20 {
        tokio::time::sleep(keep_alive / 4).await;
        let answered = post(&endpoint, &headers, ping).await;
        assert_eq!(answered.0, 200, "after {step} quarters: {answered:?}");
        assert!(answered.2.contains("/9223372036854775"), "{answered:?}");
    }
}
