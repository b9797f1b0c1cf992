//! The billing server: one grouped tool `billing`, on stdio, or on streamable HTTP.
//!
//! `cargo run --example billing` (an MCP client speaks to it on stdin/stdout; logs go to
//! stderr), or `cargo run --example billing -- --http 127.0.0.1:8080 [--stateless]` (endpoint
//! `/mcp`).
//!
//! Its contract is locked in `examples/mcp-fusion.lock`. `--lock PATH` serves with a lockfile,
//! so validation errors tell the model what changed since; `--contract-diff PATH` prints what
//! changed and exits; `--contract-write PATH` writes the lockfile.

#[path = "common/billing.rs"]
mod billing;

use std::process::ExitCode;

use mcp_fusion::contract::Contract;
use mcp_fusion::middleware::Audit;
use mcp_fusion::server::{HttpOptions, Server};

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
    let mut server = server();
    if let Some(status) = mcp_fusion::contract::command(&server, args.iter().cloned()) {
        return Ok(status);
    }
    if let Some(lockfile) = value("--lock") {
        server = server.contract_lock(Contract::read(lockfile)?);
    }
    let http = args.iter().any(|a| a == "--http");
    match http.then(|| value("--http").unwrap_or("127.0.0.1:8080")) {
        None => server.serve_stdio().await?,
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

fn server() -> Server {
    Server::new("billing-server", env!("CARGO_PKG_VERSION"))
        .instructions("Invoices of a small business. Call billing with an `action`.")
        .middleware(Audit)
        .tool(billing::Billing::seeded())
}
