//! Workload 5 baseline: the `bench` tool of workload 4 served by plain rmcp, without this
//! library (no routing tables, no schema validation, no envelopes).
//!
//! The handler is `mcp_fusion_drivers::plain::Plain`. No logging, a single-threaded runtime.
//! Driven by the `load` driver, which builds it.
//!
//! It serves on `rmcp::transport::stdio_pipes()`, as `Server::serve_stdio` of this library does
//! (`--pipes` is accepted and changes nothing), or with `--http` on rmcp's streamable HTTP
//! service, stateless and answering JSON (as this library's `--stateless` server), on hyper
//! at a free loopback port, whose URL it prints on stdout; with `--sessions`, rmcp's service
//! with sessions (its default: answers as event streams). It accepts 2026-07-28
//! `subscriptions/listen` streams of tool listing changes (rmcp's own `listen`: held until
//! cancelled).

use mcp_fusion::rmcp::ServiceExt;
use mcp_fusion_drivers::plain::Plain;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Plain::new();
    if std::env::args().any(|a| a == "--http") {
        return serve_http(server).await;
    }
    // The transport `Server::serve_stdio` uses, so the two servers differ only in the library.
    let running = server
        .serve(mcp_fusion::rmcp::transport::stdio_pipes())
        .await?;
    running.waiting().await?;
    Ok(())
}

/// rmcp's streamable HTTP service, stateless and answering JSON (or with sessions), on the
/// baseline's accept loop.
async fn serve_http(server: Plain) -> Result<(), Box<dyn std::error::Error>> {
    let sessions = std::env::args().any(|a| a == "--sessions");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}/mcp", listener.local_addr()?);
    Ok(mcp_fusion_drivers::accept::serve_rmcp(listener, server, sessions).await?)
}
