//! The billing server: one grouped tool `billing`, on stdio.
//!
//! `cargo run --example billing` (an MCP client speaks to it on stdin/stdout; logs go to stderr).

#[path = "common/billing.rs"]
mod billing;

use mcp_fusion::server::{Audit, Server};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    server().serve_stdio().await?;
    Ok(())
}

fn server() -> Server {
    Server::new("billing-server", env!("CARGO_PKG_VERSION"))
        .instructions("Invoices of a small business. Call billing with an `action`.")
        .middleware(Audit)
        .tool(billing::Billing::seeded())
}
