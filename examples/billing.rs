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
//! (`StdioOptions`).
//!
//! Its contract is locked in `examples/mcp-fusion.lock`. `--lock PATH` serves with a lockfile,
//! so validation errors tell the model what changed since; `--contract-diff PATH` prints what
//! changed and exits; `--contract-write PATH` writes the lockfile.

#[path = "common/billing.rs"]
mod billing;

use std::process::ExitCode;
use std::time::Duration;

use mcp_fusion::contract::Contract;
use mcp_fusion::middleware::Audit;
use mcp_fusion::server::{HttpOptions, Server, StdioOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
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
    if let Some(max) = number("--rate-limit-keys")? {
        server = server.max_rate_limit_keys(max as usize);
    }
    if !args.iter().any(|a| a == "--no-audit") {
        server = server.middleware(Audit);
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
            let stateless = args.iter().any(|a| a == "--stateless");
            server
                .serve_http(
                    listener,
                    HttpOptions {
                        stateless,
                        ..HttpOptions::default()
                    },
                )
                .await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
