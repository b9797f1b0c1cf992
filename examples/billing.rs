//! The billing server: one grouped tool `billing`, on stdio, or on streamable HTTP.
//!
//! `cargo run --example billing` (an MCP client speaks to it on stdin/stdout; logs go to
//! stderr), or `cargo run --example billing -- --http 127.0.0.1:8080 [--stateless]` (endpoint
//! `/mcp`).

#[path = "common/billing.rs"]
mod billing;

use mcp_fusion::server::{Audit, HttpOptions, Server};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--http") {
        None => server().serve_stdio().await?,
        Some(i) => {
            let addr = args.get(i + 1).map_or("127.0.0.1:8080", String::as_str);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "billing: streamable HTTP on http://{}/mcp",
                listener.local_addr()?
            );
            let stateless = args.iter().any(|a| a == "--stateless");
            server()
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
    Ok(())
}

fn server() -> Server {
    Server::new("billing-server", env!("CARGO_PKG_VERSION"))
        .instructions("Invoices of a small business. Call billing with an `action`.")
        .middleware(Audit)
        .tool(billing::Billing::seeded())
}
