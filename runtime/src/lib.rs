//! mcp-fusion
#![warn(missing_docs)]

extern crate self as mcp_fusion;

mod envelope;
mod error;
mod mcp;
pub mod router;
mod similar;
pub mod validate;

pub use envelope::{
    ChangeSeverity, ContractChange, DEFAULT_MAX_CHANGES, ParsedError, ParsedKind, RetryAfter, Text,
    ToolError, error, inject_contract_awareness, new_incident_id, parse,
};
pub use error::{ErrorCode, InvalidCode, Severity};
pub use mcp::with_warning;
/// The official Rust MCP SDK this crate plugs into, re-exported so versions always match.
pub use rmcp;
