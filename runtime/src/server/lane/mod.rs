//! The fast lane: the plain requests a transport answers itself, as rmcp's path would answer
//! them, byte for byte, only cheaper. One piece, behind the transports' switches
//! (`StdioOptions::fast_path`, `HttpOptions::fast_path`): deleting this folder and the call
//! sites marked "fast lane" (`server/stdio/mod.rs` builds a `StdioLane`, which
//! `server/stdio/transport.rs` hands each line; `server/http/service.rs` builds a `Lane`,
//! one step of its endpoint), with the few hooks named below, removes it. The differential tests
//! (`tests/it/fast_path.rs`: the same requests through both paths) hold its rules.
//!
//! - `read`: a plain `tools/call`, `tools/list` or `ping` read from its bytes into a few
//!   borrowed fields (anything else is rmcp's).
//! - `rules`: what the lane mirrors of rmcp (result shaping, HTTP acceptance), each rule with
//!   where rmcp keeps it.
//! - `answer`: a plain request run by the server's one call pipeline, answered with one
//!   serialisation.
//! - `stdio`: the lane of a stdio session, called by the stdio transport for each line.
//! - `http/`: the step of the HTTP endpoint answering, stateless and in sessions.
//! - `state`: what the server holds for the lane (its `tools/list` answers, its sessions).
//!
//! Outside, the server keeps what the lane needs of it: the body step reads a plain request
//! once for both paths (`server/http/body.rs`, with the lane's `parse_inline`), a call's
//! progress may go straight to stdio's lines (`ProgressSink::Lines` in `server/request.rs`,
//! written in `server/progress.rs`), the server holds the lane's `tools/list` answers and the
//! sessions it may answer in (`state`, one field of `server/core.rs`), told as a session's
//! client says `initialized` (`server/dispatch.rs`).

mod answer;
#[cfg(feature = "http")]
mod http;
mod read;
mod rules;
mod state;
#[cfg(feature = "stdio")]
mod stdio;

#[cfg(feature = "http")]
pub(crate) use http::Lane;
#[cfg(feature = "http")]
pub(crate) use read::PlainRequest;
#[cfg(feature = "stdio")]
pub(crate) use read::progress_line;
#[cfg(feature = "http")]
pub(crate) use read::{METHODS as PLAIN_METHODS, glance, parse_inline};
pub(crate) use state::LaneState;
#[cfg(feature = "stdio")]
pub(crate) use stdio::{StdioLane, Taken};
