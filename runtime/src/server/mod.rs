//! Serving: build a [`Server`](crate::Server) with [`ServerBuilder`], then serve it on stdio
//! (a client starts it as a child process), on streamable HTTP (it owns a listener), or as an
//! [`HttpService`] inside an application of your own. Every transport serves the same server,
//! with the same tools, limits and envelopes.
//!
//! # On stdio
//!
//! Feature `stdio` (on by default). A client such as Claude Desktop starts the program and
//! speaks newline-delimited JSON-RPC on its stdin/stdout; serving ends when it closes stdin
//! (the calls in flight are answered first, within [`StdioOptions::drain`]). Log to stderr:
//! stdout is the protocol's.
//!
//! ```no_run
//! use mcp_fusion::server::StdioOptions;
//!
//! # async fn run(server: mcp_fusion::Server) -> Result<(), mcp_fusion::server::ServeError> {
//! server.serve_stdio(StdioOptions::default()).await
//! # }
//! ```
//!
//! [`Server::serve_io`](crate::Server::serve_io) serves the same protocol on any pair of byte
//! streams (a socket, an in-memory pipe in tests).
//!
//! # On streamable HTTP
//!
//! Feature `http` (on by default); your program needs tokio's `net` feature for the listener
//! (and `signal` for `tokio::signal::ctrl_c`). [`Server::serve_http`](crate::Server::serve_http)
//! owns the listener and its connections ([`HttpOptions::connections`]) and answers at
//! [`HttpOptions::path`] (`/mcp`). Bind to loopback unless you mean otherwise: the `Host`
//! header must name one of [`HttpOptions::allowed_hosts`] (`localhost`, `127.0.0.1`, `::1`),
//! and a browser's `Origin` one of [`HttpOptions::allowed_origins`] (none), or the request is
//! refused 403 before its body is read (DNS rebinding).
//!
//! ```no_run
//! use mcp_fusion::server::HttpOptions;
//!
//! # async fn run(server: mcp_fusion::Server) -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve_http(listener, HttpOptions::default()).await?;
//! # Ok(()) }
//! ```
//!
//! # In an axum application
//!
//! [`Server::http_service`](crate::Server::http_service) is the same endpoint as a tower
//! service, for axum 0.8's `Router::nest_service` beside your own routes and layers: every
//! limit on requests still holds; the connections are your HTTP server's.
//!
//! ```no_run
//! # async fn run(server: mcp_fusion::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_fusion::server::HttpOptions;
//!
//! let mcp = server.http_service(HttpOptions::default());
//! let app = axum::Router::new()
//!     .route("/health", axum::routing::get(|| async { "ok" }))
//!     .nest_service("/mcp", mcp.clone());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let stop = async move {
//!     tokio::signal::ctrl_c().await.unwrap_or(());
//!     // New requests get 503; those in flight finish within 10 s; sessions close.
//!     mcp.drain(std::time::Duration::from_secs(10)).await;
//! };
//! axum::serve(listener, app).with_graceful_shutdown(stop).await?;
//! # Ok(()) }
//! ```
//!
//! # Graceful shutdown
//!
//! [`Serve::with_graceful_shutdown`] stops on a signal (Ctrl-C, SIGTERM, your application's
//! own): new requests are refused (HTTP 503 with `Retry-After`; on stdio a call gets
//! SERVER_BUSY), the requests in flight finish within the drain period, then serving returns.
//!
//! ```no_run
//! use mcp_fusion::server::HttpOptions;
//!
//! # async fn run(server: mcp_fusion::Server) -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let stop = async { tokio::signal::ctrl_c().await.unwrap_or(()) };
//! server
//!     .serve_http(listener, HttpOptions::default())
//!     .with_graceful_shutdown(stop)
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # More
//!
//! - Limits: per tool and action ([`ToolSettings`], `#[tool(concurrency(..))]`,
//!   `#[action(timeout = "..", rate_limit = "..")]`), keyed by [`RateLimitKey`], shared
//!   between replicas with the stores of [`limits`].
//! - Your own rmcp `ServerHandler` for prompts, resources and completion beside the tools:
//!   [`ServerBuilder::handler`].
//! - Upstream MCP servers mounted under namespaces: `server::gateway` (feature `gateway`).
//! - OAuth for HTTP: `oauth` (feature `oauth`), set in `HttpOptions::oauth`.
//! - What a handler gets while it runs (progress, cancellation, asking the client):
//!   [`Context`](crate::Context).

// The files, in the order a request meets them (for contributors):
//
// - `stdio/`, `http/`: the transports. Each reads requests within its limits and hands the
//   core a request with its facts (`request`); `http/` is one endpoint whose steps end in rmcp's
//   streamable HTTP service, under an accept loop of its own.
// - `incoming`: reading a message as rmcp would (what rmcp would drop is answered).
// - `lane/`: the fast lane, one piece behind the transports' `fast_path` switches: the plain
//   requests a transport answers itself, the rules of rmcp those answers mirror, and the
//   lane of each transport (`lane/stdio.rs`, `lane/http/`).
// - `dispatch`: every MCP method to the tool pipeline, a source, or the user's handler (`user`).
// - `call`, `admission`, `progress`, `span`: the one call pipeline.
// - `core`, `registry`, `source`: the server itself, its tools, the sources beside them.
// - `builder`, `build`: describing and building a server; `serve`: serving in progress.
// - `limits/`, `oauth/`, `gateway/`, `otel`: the limit stores, OAuth, the gateway (a source of
//   tools), OpenTelemetry.

#[cfg(feature = "gateway")]
pub mod gateway;
pub mod limits;
#[cfg(feature = "oauth")]
pub mod oauth;
pub mod tasks;

mod admission;
mod build;
mod builder;
mod call;
mod changes;
mod client;
pub(crate) mod core;
mod dispatch;
#[cfg(feature = "http")]
mod http;
mod incoming;
#[cfg(any(feature = "stdio", feature = "http"))]
mod lane;
mod log_message;
mod methods;
#[cfg(feature = "otel")]
mod otel;
mod progress;
mod reach;
mod registry;
mod request;
mod rounds;
mod serve;
mod source;
mod span;
#[cfg(feature = "stdio")]
mod stdio;
mod task_calls;
mod task_methods;
mod task_run;
mod user;

pub use admission::RateLimitKey;
pub use build::BuildError;
pub use builder::{ServerBuilder, ToolSettings};
pub use changes::Changes;
#[cfg(feature = "http")]
pub use http::{ConnectionOptions, HttpOptions, HttpService};
pub use serve::{Serve, ServeError};
#[cfg(feature = "stdio")]
pub use stdio::StdioOptions;
