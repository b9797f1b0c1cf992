//! What several modules share. The binaries they start and the raw clients are
//! `mcp_fusion_drivers`' ([`mcp_fusion_drivers::artifacts`]).

/// The billing tool of the examples, served in process.
#[path = "../../examples/common/billing.rs"]
#[allow(dead_code)] // The examples use all of it, the tests part.
pub(crate) mod billing;

/// A tool of a hand-built definition whose every action answers an empty success: for tests of
/// what a server does with a definition (registration checks, contract notes), not of handlers.
pub(crate) struct Defined(pub mcp_fusion::tools::ToolDef);

impl mcp_fusion::Tool for Defined {
    fn definition(&self) -> &mcp_fusion::tools::ToolDef {
        &self.0
    }

    fn invoke(
        &self,
        _: usize,
        _: serde_json::Value,
        _: mcp_fusion::Context,
    ) -> mcp_fusion::tools::BoxFuture<
        '_,
        Result<mcp_fusion::rmcp::model::CallToolResult, mcp_fusion::tools::Failure>,
    > {
        Box::pin(async { Ok(mcp_fusion::rmcp::model::CallToolResult::success(vec![])) })
    }
}

/// How long [`eventually`] polls before it fails: it turns a hang into a failure and claims no
/// speed (real time, so a loaded machine does not fail a test that would pass).
pub(crate) const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Polls `check` until it gives `Some`, and gives that; fails naming `what` once [`PATIENCE`]
/// has passed. The first polls only yield to the runtime (enough for what runs in process);
/// later ones wait 10 ms between polls, for a condition a child process or the network makes
/// true. On a paused tokio clock, those waits advance the clock (only when every task waits).
pub(crate) async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let started = std::time::Instant::now();
    let mut polls = 0u32;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        polls += 1;
        assert!(
            started.elapsed() < PATIENCE,
            "waited {PATIENCE:?} ({polls} polls) for {what}, in vain"
        );
        if polls < 100 {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

/// A POST to `/mcp` at `addr` whose reply is streamed: sent, then read until `marker` has come
/// (`notifications/progress`: the call is running). The stream, and what was read of it.
pub(crate) async fn post_streaming_until(
    addr: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
    marker: &str,
) -> (tokio::net::TcpStream, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.to_string();
    let mut request = mcp_fusion_drivers::raw_http::post_head(headers, body.len());
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    while !String::from_utf8_lossy(&read).contains(marker) {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut chunk))
            .await
            .unwrap_or_else(|_| panic!("waited {PATIENCE:?} for {marker}"))
            .unwrap();
        assert!(
            n > 0,
            "closed before {marker}: {}",
            String::from_utf8_lossy(&read)
        );
        read.extend_from_slice(&chunk[..n]);
    }
    (stream, read)
}

/// The rest of a reply [`post_streaming_until`] began, read until the server closes it: the
/// whole reply as text.
pub(crate) async fn rest_of_reply(mut stream: tokio::net::TcpStream, mut read: Vec<u8>) -> String {
    use tokio::io::AsyncReadExt;
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut read))
        .await
        .expect("the reply ends")
        .unwrap();
    String::from_utf8_lossy(&read).into_owned()
}

/// The latest score in the sorted set `key` of `node` (a lease's expiry, in the store's
/// slots), as `ZRANGE .. WITHSCORES` reads it; 0 for an empty set.
pub(crate) fn latest_score(node: &mcp_fusion_drivers::redis_server::RedisServer, key: &str) -> f64 {
    let reply =
        mcp_fusion_drivers::redis_server::query(node, &["ZRANGE", key, "0", "-1", "WITHSCORES"])
            .unwrap_or_else(|e| panic!("ZRANGE {key}: {e}"));
    reply
        .split(',')
        .skip(1)
        .step_by(2)
        .map(|score| score.parse::<f64>().unwrap_or_else(|_| panic!("{reply}")))
        .fold(0.0, f64::max)
}

/// What a 2026-07-28 request carries in its `_meta` instead of an `initialize`: its version, no
/// client capabilities, and the client's name.
pub(crate) fn lifecycle_2026(client: &str) -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
    })
}

/// POSTs `message` to an endpoint served in process, with the headers a 2026-07-28 client sends
/// (`Mcp-Method`, and `Mcp-Name` when the params name something); the response, its body unread.
pub(crate) async fn post_2026(
    endpoint: &mcp_fusion::server::HttpService,
    message: &serde_json::Value,
) -> axum::http::Response<axum::body::Body> {
    use tower::ServiceExt;
    let method = message["method"].as_str().unwrap();
    let mut request = axum::http::Request::post("/mcp")
        .header("host", "127.0.0.1:3000")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = message["params"]["name"].as_str() {
        request = request.header("mcp-name", name);
    }
    let request = request
        .body(axum::body::Body::from(message.to_string()))
        .unwrap();
    let reply = endpoint.clone().oneshot(request).await.unwrap();
    reply.map(axum::body::Body::new)
}

/// Log lines written while a test runs, through a `tracing` subscriber: the test's own
/// ([`Lines::capture`]) or a process-wide one a module installs.
#[derive(Clone, Default)]
pub(crate) struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    /// What this thread logs (a current-thread runtime) until the guard is dropped, without
    /// times, so that two lines of the same spans read alike up to their message.
    pub(crate) fn capture(&self) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .without_time()
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    /// What was logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
