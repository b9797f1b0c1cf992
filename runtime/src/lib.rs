//! Errors for Model Context Protocol servers, written for the language model that reads them.
//!
//! A failing tool call answers with one XML envelope the model can act on ([`ToolError`],
//! rendered as `<tool_error>`), bad arguments with every problem at once
//! ([`validate::ValidationError`], rendered as `<validation_error>`). The wire format is the
//! contract of `ERRORS.md`, reproduced byte for byte.
//!
//! ```
//! use mcp_fusion::{error, ErrorCode};
//! use mcp_fusion::rmcp::model::CallToolResult;
//!
//! let err = error(ErrorCode::RATE_LIMITED, "Too many exports at once.")
//!     .suggest("Wait, then export again.")
//!     .retry_after(30);
//! let result = CallToolResult::from(&err);
//! assert_eq!(result.is_error, Some(true));
//!
//! // A client reads it back.
//! let parsed = mcp_fusion::parse(&err.render());
//! assert_eq!(parsed.code, "RATE_LIMITED");
//! assert_eq!(parsed.retry_after, Some(30));
//! ```
//!
//! The pieces: [`error`] and [`ToolError`] (the envelope and its builder), [`ErrorCode`] and
//! [`Severity`], [`validate`] (schemas, problems, `<validation_error>`), [`router`] (the
//! discriminator), [`parse`] (the client side), [`inject_contract_awareness`] (what changed
//! since the contract was locked), and the `From` impls into `rmcp`'s `CallToolResult`.
#![warn(missing_docs)]

extern crate self as mcp_fusion;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod dispatch;
mod envelope;
mod error;
mod mcp;
pub mod router;
mod similar;
mod tool;
pub mod validate;

pub use dispatch::{Failure, IntoOutput, Response, dispatch};
pub use envelope::{
    ChangeSeverity, ContractChange, DEFAULT_MAX_CHANGES, ParsedError, ParsedKind, RetryAfter, Text,
    ToolError, error, inject_contract_awareness, new_incident_id, parse,
};
pub use error::{ErrorCode, InvalidCode, Severity};
pub use mcp::with_warning;
pub use mcp_fusion_macros::{ToolErrors, tool};
/// The official Rust MCP SDK this crate plugs into, re-exported so versions always match.
pub use rmcp;
pub use tool::{
    ActionDef, ActionRef, Annotations, BoxFuture, Concurrency, Context, Deprecation, RateLimit,
    Tool, ToolDef, ToolDefBuilder,
};

// The README's examples are compiled and run as doc tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
