//! mcp-fusion
#![warn(missing_docs)]

extern crate self as mcp_fusion;

mod envelope;
mod error;
pub mod router;
mod similar;
pub mod validate;

pub use envelope::{
    ChangeSeverity, ContractChange, DEFAULT_MAX_CHANGES, ParsedError, ParsedKind, RetryAfter, Text, ToolError,
    error, inject_contract_awareness, new_incident_id, parse,
};
pub use error::{ErrorCode, InvalidCode, Severity};
