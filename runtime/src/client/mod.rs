//! Reading envelopes back, as a host or a typed client does: [`parse_envelope`] reads an
//! envelope's text into a [`ParsedError`] (ERRORS.md §6), [`ParsedError::from_mirror`] reads
//! the machine-readable mirror every envelope carries in `_meta` under [`MIRROR_KEY`] (§9),
//! and [`FromEnvelope`] turns one into the caller's own error type. With feature `client`,
//! `Client` calls tools over rmcp's client and does all of this for each result.
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
mod tasks;

#[cfg(feature = "client")]
pub use answers::{Answers, Connection};
#[cfg(feature = "client")]
pub use batch_options::BatchOptions;

#[cfg(feature = "client")]
pub use connect::{CallError, Client, ClientError, ToolCallError, warnings};
#[cfg(feature = "client")]
pub use tasks::Started;

mod parse;
pub(crate) mod reverse;

pub use crate::envelope::MIRROR_KEY;
pub use parse::{IndexSet, ParsedError, ParsedField, ParsedKind, parse_envelope};
pub use reverse::FromEnvelope;
