//! Serving an MCP server on the official Rust MCP SDK (rmcp): this crate's tools (`tools/list`
//! shows each with its schema and annotations; `tools/call` runs the pipeline of ERRORS.md §4),
//! the tools of the upstreams a gateway mounts, and your own rmcp `ServerHandler` for the rest
//! (prompts, resources, completion, logging), through one hardened front on stdio and
//! streamable HTTP.
//!
//! The files, in the order a request meets them:
//!
//! - `stdio/`, `http/`: the transports. Each reads requests within its limits and hands the
//!   core a request with its facts (`request`); `http/` is a stack of tower layers over rmcp's
//!   streamable HTTP service, under an accept loop of its own.
//! - `incoming`, `plain`, `rmcp_rules`: reading a message as rmcp would, the plain requests a
//!   transport answers itself, and the rules of rmcp those answers mirror.
//! - `dispatch`: every MCP method to the tool pipeline, a source, or the user's handler (`user`).
//! - `call`, `admission`, `progress`, `span`: the one call pipeline.
//! - `core`, `registry`, `source`: the server itself, its tools, the sources beside them.
//! - `builder`, `build`: describing and building a server; `serve`: serving in progress.
//! - `limits/`, `oauth/`, `gateway/`, `otel`: the limit stores, OAuth, the gateway (a source of
//!   tools), OpenTelemetry.

#[cfg(feature = "gateway")]
pub mod gateway;
pub mod limits;
#[cfg(feature = "oauth")]
pub mod oauth;

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
mod log_message;
mod methods;
#[cfg(feature = "otel")]
mod otel;
#[cfg(any(feature = "stdio", feature = "http"))]
mod plain;
mod progress;
mod reach;
mod registry;
mod request;
mod rmcp_rules;
mod rounds;
mod serve;
mod source;
mod span;
#[cfg(feature = "stdio")]
mod stdio;
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
