//! Faults over a real MCP transport: handler errors and panics that carry secrets (connection
//! strings, tokens), a failing middleware, a handler past its deadline, a keyed rate limit. No
//! cause text reaches the model unless the server exposes causes; the log gets the incident and
//! the whole cause chain; the rate limiter never echoes its key; the server keeps serving.

use std::sync::OnceLock;

use mcp_fusion::Server;
use mcp_fusion::client::{Client, Connection};
use mcp_fusion::client::{ParsedError, parse_envelope};
use mcp_fusion::middleware::{Audit, CallInfo, Middleware, Next};
use mcp_fusion::rmcp::ServiceExt;
use mcp_fusion::rmcp::model::CallToolResult;
use mcp_fusion::tools::{BoxFuture, Failure};
use mcp_fusion::{ToolError, tool};
use serde_json::{Value, json};

use crate::support::Lines;

const PASSWORD: &str = "hunter2-Secr3t";
const DSN: &str = "postgres://billing:hunter2-Secr3t@db.internal:5432/prod";
const TOKEN: &str = "sk_live_51HxSECRETtoken";
const API_KEY: &str = "key_live_PRIVATE_9f8e";

/// An error whose secret sits in its source, two levels down.
#[derive(Debug)]
struct QueryFailed(std::io::Error);

impl std::fmt::Display for QueryFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("query failed")
    }
}

impl std::error::Error for QueryFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

struct Vault;

/// Actions that fail in every way an action can.
#[tool]
impl Vault {
    /// Fails with a connection string in its cause chain.
    async fn query(&self) -> Result<u32, QueryFailed> {
        Err(QueryFailed(std::io::Error::other(format!(
            "connection refused: {DSN}"
        ))))
    }

    /// Panics with a token in the message.
    async fn charge(&self) -> Result<u32, ToolError> {
        panic!("payment gateway rejected Bearer {TOKEN}")
    }

    /// Holds a secret while it waits past its deadline.
    #[action(timeout = "20ms")]
    async fn stall(&self) -> Result<String, ToolError> {
        let secret = format!("password={PASSWORD}");
        std::future::pending::<()>().await;
        Ok(secret)
    }

    /// Reaches the handler only through the failing middleware.
    async fn guarded(&self) -> Result<&'static str, ToolError> {
        Ok("unreachable")
    }

    /// Answers.
    async fn ping(&self) -> Result<&'static str, ToolError> {
        Ok("pong")
    }
}

struct Meter;

/// Two calls an hour per caller.
#[tool(rate_limit(max = 2, window = "1h"))]
impl Meter {
    /// Reads the meter.
    async fn read(&self, _args: Keyed) -> Result<u32, ToolError> {
        Ok(7)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Keyed {
    /// The caller's key; the rate limit is kept per key.
    #[allow(dead_code)]
    api_key: Option<String>,
}

/// Middleware that fails with a secret on `vault.guarded`.
struct Leaky;

impl Middleware for Leaky {
    fn handle<'a>(
        &'a self,
        info: &'a CallInfo,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<CallToolResult, Failure>> {
        Box::pin(async move {
            if info.action() == "vault.guarded" {
                let cause = format!("session store unreachable with token {TOKEN}");
                return Err(Failure::Internal(cause.into()));
            }
            next.run().await
        })
    }
}

fn server(expose: bool) -> Server {
    Server::builder("vault-server", "1")
        .expose_causes(expose)
        .rate_limit_key(|info| {
            info.arguments()
                .get("api_key")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .middleware(Audit)
        .middleware(Leaky)
        .tool(Vault)
        .tool(Meter)
        .build()
        .unwrap()
}

/// What `tracing` writes, for every test of this file: one global subscriber, since a
/// per-thread one misses events whose callsite another test's thread registered first. Tests
/// find their own lines by incident id.
fn log() -> &'static Lines {
    static LOG: OnceLock<Lines> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Lines::default();
        let writer = log.clone();
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .init();
        log
    })
}

async fn connect(expose: bool) -> (Client, Connection) {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = server(expose);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (client, connection) = Client::connect(client_end).await.expect("connects");
    (client, connection)
}

/// Every text block of a result, joined.
fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_no_secret(text: &str) {
    for secret in [
        PASSWORD,
        DSN,
        TOKEN,
        API_KEY,
        "hunter2",
        "sk_live",
        "postgres://",
    ] {
        assert!(!text.contains(secret), "{secret} reached the model: {text}");
    }
}

fn incident(parsed: &ParsedError) -> &str {
    parsed
        .details
        .iter()
        .find(|(key, _)| key == "incident")
        .map(|(_, value)| value.as_str())
        .expect("an incident id")
}

#[tokio::test(flavor = "current_thread")]
async fn secrets_stay_in_the_log() {
    let log = log();
    let (client, _connection) = connect(false).await;

    for (action, logged) in [
        (
            "vault.query",
            format!("query failed: connection refused: {DSN}"),
        ),
        (
            "vault.charge",
            format!("panic: payment gateway rejected Bearer {TOKEN}"),
        ),
        (
            "vault.guarded",
            format!("session store unreachable with token {TOKEN}"),
        ),
    ] {
        let result = client.call_raw(action, json!({})).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        let text = text(&result);
        assert_no_secret(&text);
        let parsed = parse_envelope(&text);
        assert_eq!(parsed.code, "INTERNAL_ERROR", "{text}");
        assert_eq!(
            parsed.message,
            format!("The action \"{action}\" failed unexpectedly.")
        );
        assert_eq!(parsed.details.len(), 1, "only the incident: {text}");
        // The log ties the incident to the whole cause chain.
        let id = incident(&parsed);
        let line = log
            .text()
            .lines()
            .find(|line| line.contains(id))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no log line for {id}:\n{}", log.text()));
        assert!(line.contains(&logged), "{line}");
    }

    let late = client.call_raw("vault.stall", json!({})).await.unwrap();
    let late = text(&late);
    assert_no_secret(&late);
    assert_eq!(parse_envelope(&late).code, "TIMEOUT", "{late}");

    // Served after all of it.
    let pong = client.call_raw("vault.ping", json!({})).await.unwrap();
    assert_eq!(text(&pong), "pong");
}

#[tokio::test(flavor = "current_thread")]
async fn the_rate_limiter_never_echoes_its_key() {
    let (client, _connection) = connect(false).await;
    let read = || client.call_raw("meter.read", json!({"api_key": API_KEY}));
    // The meter's budget is 2 calls an hour per key; the first two of this key pass.
    for _ in 0..2 {
        assert_eq!(read().await.unwrap().is_error, Some(false));
    }
    let limited = text(&read().await.unwrap());
    assert_eq!(parse_envelope(&limited).code, "RATE_LIMITED", "{limited}");
    assert_no_secret(&limited);
    // Another key still has its budget.
    let other = client
        .call_raw("meter.read", json!({"api_key": "key_other"}))
        .await
        .unwrap();
    assert_eq!(other.is_error, Some(false));
}

#[tokio::test(flavor = "current_thread")]
async fn exposed_causes_are_for_local_development_only() {
    let (client, _connection) = connect(true).await;
    let result = client.call_raw("vault.query", json!({})).await.unwrap();
    let parsed = parse_envelope(&text(&result));
    assert_eq!(
        parsed.details.last(),
        Some(&(
            "cause".to_owned(),
            format!("query failed: connection refused: {DSN}")
        ))
    );
}
