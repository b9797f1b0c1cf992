//! Reading envelopes back, as a host or a typed client does: [`parse_envelope`] reads an
//! envelope's text into a [`ParsedError`] (ERRORS.md §6), [`ParsedError::from_mirror`] reads
//! the machine-readable mirror every envelope carries in `_meta` under [`MIRROR_KEY`] (§9),
//! and [`FromEnvelope`] turns one into the caller's own error type. With feature `client`,
//! `Client` calls tools over rmcp's client and does all of this for each result.
//!
//! ## What is rmcp's and what is ours
//!
//! The typed client is rmcp's client underneath, and leaves to it what it does: the
//! `initialize` handshake and its session; `server/discover`, the version retried after a
//! -32022 refusal (a new id, a version both support) and each 2026-07-28 request's `_meta`
//! with the `MCP-Protocol-Version` header equal to it; the `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*` headers (Base64 where a value is unsafe in a header, none for null); the
//! gate on tools whose `x-mcp-header` annotations are invalid (dropped from `tools/list`,
//! so never called; rmcp 3.11 misses both the gate and the annotations of a `tools/list`
//! answered on an SSE stream whose end it handles before the answer); an SSE stream resumed after the server's `retry` delay with
//! `Last-Event-ID`. Schemas pass through as JSON objects, in their order: nothing here
//! rewrites one or follows a `$ref`, remote or not.
//!
//! Ours (feature `client`): `Era`, the lifecycle chosen by revision; `Answers`, the elicitation (the
//! schema's defaults applied to an accepted form, `with_defaults`), sampling and roots
//! handlers, each declaring its capability; the 2026-07-28 rounds (`input_required`,
//! SEP-2322) driven through those handlers by `Client`, `requestState` echoed exactly and
//! omitted when none came; the tool and action addressing, and every envelope read back.
//!
//! ```
//! use mcp_fusion::client::{ParsedKind, parse_envelope};
//! use mcp_fusion::{ErrorCode, ToolError};
//!
//! let text = ToolError::new(ErrorCode::NOT_FOUND, "No invoice inv_9.").render();
//! let parsed = parse_envelope(&text);
//! assert_eq!((parsed.kind, parsed.code.as_str()), (ParsedKind::ToolError, "NOT_FOUND"));
//! ```

#[cfg(feature = "client")]
mod answers;
#[cfg(feature = "client")]
mod batch;
#[cfg(feature = "client")]
mod batch_options;
#[cfg(feature = "client")]
mod connect;
#[cfg(feature = "client")]
mod connection;
#[cfg(feature = "client")]
mod era;
#[cfg(feature = "oauth-client")]
pub mod oauth;
#[cfg(feature = "client")]
mod rounds;
#[cfg(feature = "client")]
mod tasks;

#[cfg(feature = "client")]
pub use answers::Answers;
#[cfg(feature = "client")]
pub use batch_options::BatchOptions;
#[cfg(feature = "client")]
pub use connection::Connection;

#[cfg(feature = "client")]
pub use connect::{CallError, Client, ClientError, ToolCallError, warnings};
#[cfg(feature = "client")]
pub use era::Era;
#[cfg(feature = "client")]
pub use rounds::with_defaults;
#[cfg(feature = "client")]
pub use tasks::Started;

mod parse;
pub(crate) mod reverse;

pub use crate::envelope::MIRROR_KEY;
pub use parse::{IndexSet, ParsedError, ParsedField, ParsedKind, parse_envelope};
pub use reverse::FromEnvelope;
