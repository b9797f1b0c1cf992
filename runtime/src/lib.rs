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
//! let parsed = mcp_fusion::parse_envelope(&err.render());
//! assert_eq!(parsed.code, "RATE_LIMITED");
//! assert_eq!(parsed.retry_after, Some(30));
//! ```
//!
//! # Tools: `#[tool]`
//!
//! On an impl block, every async method is an action, selected by the `action` field; on an
//! async fn, the fn is a tool of one action. Each action takes one argument struct
//! (`Deserialize + JsonSchema`; constraints through schemars attributes), and optionally the
//! call's [`Context`]. The arguments are validated against the schema the tool advertises
//! before they are decoded, and every failure becomes its envelope.
//!
//! ```
//! use mcp_fusion::{tool, Context, ErrorCode, Tool, ToolError};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct GetInvoice {
//!     #[schemars(regex(pattern = r"^inv_[0-9]{4}_[0-9]{4}$"))]
//!     id: String,
//! }
//!
//! struct Billing;
//!
//! /// Invoices.
//! #[tool(concurrency(max_active = 2, max_queued = 2))]
//! impl Billing {
//!     /// Lists invoices.
//!     #[action(read_only)]
//!     async fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
//!         Ok(vec!["inv_2026_0001".into()])
//!     }
//!
//!     /// Gets one invoice.
//!     #[action(read_only, timeout = "5s")]
//!     async fn get_invoice(&self, args: GetInvoice, f: Context) -> Result<String, ToolError> {
//!         Err(f.error(ErrorCode::NOT_FOUND, "No invoice with that ID")
//!             .actions([Billing::ACTIONS.list_invoices])
//!             .detail("requestedId", args.id))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let call = serde_json::json!({"action": "get_invoice", "id": "inv_2026_0009"});
//! let result = Billing.call(call.as_object().cloned()).await;
//! assert_eq!(result.is_error, Some(true));
//! assert_eq!(Billing.definition().actions()[1].qualified(), "billing.get_invoice");
//! # });
//! ```
//!
//! Options of `#[tool(..)]`: `name = ".."` (default: the type in snake case, or the fn's
//! name), `description = ".."` (default: the doc comments), `discriminator = ".."` (default
//! `action`), `concurrency(max_active = N, max_queued = M)`, `rate_limit(max = N, window =
//! "1m")`, `crate = path`. Options of `#[action(..)]` (or of `#[tool(..)]` on a fn):
//! `name = ".."`, `read_only`, `destructive`, `idempotent`, `open_world`, `deprecated` or
//! `deprecated = "note"`, `replacement = other_action`, `timeout = "5s"`,
//! `concurrency(max_active = N, max_queued = M)`; and, on a method's `#[action(..)]`,
//! `rate_limit(max = N, window = "1m")` for that action alone, beside the tool's.
//!
//! `#[tool]` also generates `{Type}Actions` and `{Type}::ACTIONS`, one [`ActionRef`] per
//! action, so `.actions(..)` names actions with compile-time checking; a fn tool becomes the
//! unit struct `{Fn}Tool` (`get_weather` → `GetWeatherTool`).
//!
//! An action returns `Result<T, E>`: `T` is serialized to JSON (or is a [`Response`]); `E` is
//! a [`ToolError`] or a `#[derive(ToolErrors)]` enum, sent intact, or any other error, sent as
//! INTERNAL_ERROR with an incident id (the cause goes to the log, not to the model). A panic
//! is answered the same way, and the tool keeps serving.
//!
//! # Domain errors: `#[derive(ToolErrors)]`
//!
//! ```
//! use mcp_fusion::{ToolError, ToolErrors};
//!
//! #[derive(Debug, ToolErrors)]
//! enum PaymentError {
//!     #[tool_error(NOT_FOUND, "No card ending in {last4}", recovery = "Ask the user for another card",
//!                  details(cardLast4 = last4))]
//!     UnknownCard { last4: String },
//!     #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "The card was declined: {0}")]
//!     Declined(String),
//!     #[tool_error(RATE_LIMITED, "Too many attempts", retry_after = 30)]
//!     TooManyAttempts,
//! }
//!
//! let err = ToolError::from(PaymentError::Declined("insufficient funds".into()));
//! assert_eq!(err.code().as_str(), "PAYMENT_DECLINED");
//! assert_eq!(err.message(), "The card was declined: insufficient funds");
//! assert_eq!(PaymentError::TooManyAttempts.to_string(), "Too many attempts");
//! ```
//!
//! Per variant: the code first (a canonical name, or `code = "CUSTOM_CODE"`), then the message
//! (`{field}`, `{0}` interpolate; `{{` is a brace), then `recovery = ".."` (interpolated too),
//! `actions(Tool::action, ..)`, `details(key = field, ..)`, `severity = warning|error|critical`,
//! `retry_after = 30` or `retry_after = field`. On the enum: `#[tool_error(skip_display)]` when
//! it has its own `Display` and `Error`, `#[tool_error(crate = path)]`.
//!
//! # The pieces
//!
//! - The envelope: [`error`] and [`ToolError`] (the builder), [`ErrorCode`], [`Severity`];
//!   [`validate`] (schemas, problems, `<validation_error>`); [`parse_envelope`] (reading one
//!   back).
//! - Tools: [`Tool`] (a definition and a way to run each action; `#[tool]` implements it, or
//!   write it by hand), [`ToolDef`] and [`ActionDef`], [`Context`]; [`router`] (the
//!   discriminator).
//! - Serving: [`server::Server`] on rmcp (stdio with feature `stdio`, streamable HTTP with
//!   `http`; both on by default), which runs its policy (rate limit, concurrency,
//!   [`middleware`], deadline, panic catching) around every tool.
//! - Calling: `client::Client` (feature `client`), which turns envelopes back into Rust errors.
//! - Change: [`contract`] (the lockfile, classified diffs) and [`inject_contract_awareness`]
//!   (what changed, told to the model).
#![warn(missing_docs)]

extern crate self as mcp_fusion;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod call_result;
#[cfg(feature = "client")]
pub mod client;
mod closest;
pub mod contract;
mod envelope;
mod error;
pub mod middleware;
pub mod router;
pub mod server;
mod tool;
pub mod validate;

pub use call_result::with_warning;
pub use envelope::{
    ChangeSeverity, ContractChange, DEFAULT_MAX_CHANGES, ParsedError, ParsedKind, RetryAfter, Text,
    ToolError, error, inject_contract_awareness, parse_envelope,
};
pub use error::{ErrorCode, InvalidCode, Severity};
/// Maps a domain error enum to codes, messages and recovery hints; see the
/// [crate docs](crate#domain-errors-derivetoolerrors).
pub use mcp_fusion_macros::ToolErrors;
/// Makes a tool of an impl block (one action per async method) or of an async fn; see the
/// [crate docs](crate#tools-tool).
pub use mcp_fusion_macros::tool;
/// The official Rust MCP SDK this crate plugs into, re-exported so versions always match.
pub use rmcp;
pub use tool::{
    ActionDef, ActionRef, Annotations, BoxFuture, Concurrency, Context, Deprecation, Exposition,
    Failure, IntoOutput, RateLimit, Response, Tool, ToolDef, ToolDefBuilder,
};

// The README's examples are compiled and run as doc tests, with the features they use (the
// workspace's tests enable them all).
#[doc = include_str!("../../README.md")]
#[cfg(all(doctest, feature = "stdio", feature = "http", feature = "redis"))]
pub struct ReadmeDoctests;
