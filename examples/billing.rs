//! The billing server: one grouped tool `billing`, on stdio, or on streamable HTTP.
//!
//! `cargo run --example billing` (an MCP client speaks to it on stdin/stdout; logs go to
//! stderr), or `cargo run --example billing -- --http 127.0.0.1:8080 [--stateless]` (endpoint
//! `/mcp`).
//!
//! Limits an operator sets: `--rate-limit MAX/SECONDS` (per customer: calls naming the same
//! `customer_email` share a budget, the others share one; `--rate-limit-keys N` customers
//! tracked at most), `--no-audit` (no audit middleware);
//! on stdio, `--max-line-bytes N`, `--max-pending-answers N` and `--drain SECONDS`
//! (`StdioOptions`); on HTTP, `--max-body-bytes N`, `--max-parsing N`, `--max-connections N`,
//! `--max-sessions N`, `--header-timeout S`, `--body-timeout S`, `--idle-timeout S` and
//! `--session-keep-alive S` (`HttpOptions`; seconds may have decimals).
//!
//! With `--redis redis://127.0.0.1:6379` every limit it declares (`export_invoices`: 2 calls
//! at once; `create_invoice`: 10 calls per minute; `--rate-limit`) is kept in Redis and shared
//! by every replica started with the same URL and `--redis-prefix P` (default `billing`):
//! several replicas behind a load balancer, with `--http ADDR --stateless`. When Redis cannot
//! answer within `--redis-timeout S` (0.25 by default) calls are refused with SERVER_BUSY, or
//! served with `--fail-open`. `--lease-margin S` (5 by default) is how much longer than the
//! action's deadline a concurrency lease outlives a replica that died holding it.
//!
//! `--flat` lists each action as an MCP tool of its own (`billing_get_invoice`, ...), with its
//! title and output schema; successful results then carry `structuredContent`.
//!
//! Logs go to stderr at `info`, with rmcp's own at `warn`; `RUST_LOG` chooses otherwise
//! (`RUST_LOG=debug`, `RUST_LOG=info,rmcp=info`).
//!
//! Its contract is locked in `examples/mcp-fusion.lock`. `--lock PATH` serves with a lockfile,
//! so validation errors tell the model what changed since; `--contract-diff PATH` prints what
//! changed and exits; `--contract-write PATH` writes the lockfile.

#[path = "common/billing.rs"]
mod billing;

use std::process::ExitCode;
use std::time::Duration;

use mcp_fusion::Exposition;
use mcp_fusion::contract::Contract;
use mcp_fusion::middleware::Audit;
use mcp_fusion::server::limits::{FailPolicy, RedisStore};
use mcp_fusion::server::{HttpOptions, Server, StdioOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).map(String::as_str)
    };
    let number = |flag: &str| -> Result<Option<u64>, String> {
        value(flag)
            .map(|v| {
                v.parse()
                    .map_err(|_| format!("{flag} takes a number, not {v:?}"))
            })
            .transpose()
    };
    let seconds = |flag: &str| -> Result<Option<Duration>, String> {
        value(flag)
            .map(|v| {
                let s: f64 = v.parse().map_err(|_| format!("{flag} takes seconds"))?;
                Duration::try_from_secs_f64(s).map_err(|e| format!("{flag}: {e}"))
            })
            .transpose()
    };
    let mut server = Server::new("billing-server", env!("CARGO_PKG_VERSION"))
        .instructions("Invoices of a small business. Call billing with an `action`.");
    if let Some(limit) = value("--rate-limit") {
        let (max, seconds) = limit
            .split_once('/')
            .and_then(|(max, s)| Some((max.parse().ok()?, s.parse().ok()?)))
            .ok_or("--rate-limit takes MAX/SECONDS, such as 120/60")?;
        server = server
            .rate_limit(max, Duration::from_secs(seconds))
            .rate_limit_key(|call| {
                let customer = call.arguments().get("customer_email")?.as_str()?;
                Some(customer.to_owned())
            });
    }
    if let Some(url) = value("--redis") {
        let policy = match args.iter().any(|a| a == "--fail-open") {
            true => FailPolicy::Open,
            false => FailPolicy::Closed,
        };
        let mut store = RedisStore::new(url, policy)?
            .prefix(value("--redis-prefix").unwrap_or("billing"))
            .timeout(seconds("--redis-timeout")?.unwrap_or(Duration::from_millis(250)));
        if let Some(margin) = seconds("--lease-margin")? {
            store = store.leases(margin, Duration::from_secs(30));
        }
        server = server.limit_store(store);
    }
    if let Some(max) = number("--rate-limit-keys")? {
        server = server.max_rate_limit_keys(max as usize);
    }
    if !args.iter().any(|a| a == "--no-audit") {
        server = server.middleware(Audit);
    }
    if args.iter().any(|a| a == "--flat") {
        server = server.exposition(Exposition::Flat);
    }
    let mut server = server.tool(billing::Billing::seeded());
    if let Some(status) = mcp_fusion::contract::command(&server, args.iter().cloned()) {
        return Ok(status);
    }
    if let Some(lockfile) = value("--lock") {
        server = server.contract_lock(Contract::read(lockfile)?);
    }
    let http = args.iter().any(|a| a == "--http");
    match http.then(|| value("--http").unwrap_or("127.0.0.1:8080")) {
        None => {
            let defaults = StdioOptions::default();
            let options = StdioOptions {
                max_line_bytes: number("--max-line-bytes")?
                    .map_or(defaults.max_line_bytes, |n| n as usize),
                max_pending_answers: number("--max-pending-answers")?
                    .map_or(defaults.max_pending_answers, |n| n as usize),
                drain: number("--drain")?.map(Duration::from_secs),
            };
            server.serve_stdio_with(options).await?
        }
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "billing: streamable HTTP on http://{}/mcp",
                listener.local_addr()?
            );
            let d = HttpOptions::default();
            let options = HttpOptions {
                stateless: args.iter().any(|a| a == "--stateless"),
                max_body_bytes: number("--max-body-bytes")?
                    .map_or(d.max_body_bytes, |n| n as usize),
                max_parsing: number("--max-parsing")?.map_or(d.max_parsing, |n| n as usize),
                max_connections: number("--max-connections")?
                    .map_or(d.max_connections, |n| n as usize),
                max_sessions: number("--max-sessions")?.map_or(d.max_sessions, |n| n as usize),
                header_read_timeout: seconds("--header-timeout")?.unwrap_or(d.header_read_timeout),
                body_read_timeout: seconds("--body-timeout")?.unwrap_or(d.body_read_timeout),
                idle_timeout: seconds("--idle-timeout")?.unwrap_or(d.idle_timeout),
                session_keep_alive: seconds("--session-keep-alive")?
                    .unwrap_or(d.session_keep_alive),
                ..d
            };
            server.serve_http(listener, options).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
