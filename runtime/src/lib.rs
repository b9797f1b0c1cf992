#![doc = include_str!("../README.md")]
//!
//! # The envelope
//!
//! A failing call is a [`ToolError`], rendered as `<tool_error>`; bad arguments are a
//! [`validate::ValidationError`], rendered as `<validation_error>`. The wire format is the
//! contract of `ERRORS.md` (version 3), reproduced byte for byte.
//!
//! ```
//! use mcp_fusion::{ErrorCode, ToolError};
//! use mcp_fusion::rmcp::model::CallToolResult;
//!
//! let err = ToolError::new(ErrorCode::RATE_LIMITED, "Too many exports at once.")
//!     .suggest("Wait, then export again.")
//!     .retry_after(30);
//! let result = CallToolResult::from(&err);
//! assert_eq!(result.is_error, Some(true));
//!
//! // A client reads it back.
//! let parsed = mcp_fusion::client::parse_envelope(&err.render());
//! assert_eq!(parsed.code, "RATE_LIMITED");
//! assert_eq!(parsed.retry_after, Some(30));
//! ```
//!
//! # Tools: `#[tool]`
//!
//! On an impl block, every async method is an action, selected by the `action` field; on an
//! async fn, the fn is a tool of one action. Each action takes one argument struct
//! (`Deserialize + JsonSchema`; constraints through schemars attributes, rules over several
//! fields through `#[schemars(extend("allOf" = [..], "if" = {..}, ...))]`), and optionally the
//! call's [`Context`]. The arguments are validated against the schema the tool advertises,
//! every keyword of it, before they are decoded, and every failure becomes its envelope.
//!
//! ```
//! use mcp_fusion::{Context, ErrorCode, Tool, ToolError, tool};
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
//! assert!(result.is_error());
//! assert_eq!(Billing.definition().actions()[1].qualified(), "billing.get_invoice");
//! # });
//! ```
//!
//! Every attribute, with one example each (on an impl block, tool options go on `#[tool(..)]`
//! and action options on each method's `#[action(..)]`; on a fn, both go on `#[tool(..)]`; a
//! bare `#[action]` is the defaults):
//!
//! | attribute | on | example | what it does |
//! |---|---|---|---|
//! | `name` | tool, action | `#[tool(name = "billing")]` | the name (default: the type in snake case, the fn's or method's name) |
//! | `description` | tool | `#[tool(description = "Invoices.")]` | the description (default: the doc comments) |
//! | `title` | tool, action | `#[action(title = "Pay an invoice")]` | the name a host shows people (MCP `title`; an action's is its tool's in flat exposition) |
//! | `output_schema` | tool, action | `#[action(output_schema)]` | the success type's JSON Schema is the `outputSchema` of a flat action (or a one-action tool), whose results then carry `structuredContent`; on an impl block, every action |
//! | `discriminator` | impl block | `#[tool(discriminator = "op")]` | the field that chooses the action (default `action`) |
//! | `exposition` | impl block | `#[tool(exposition = "flat")]` | one MCP tool per action, `{tool}_{action}` (default `"grouped"`; see [`Exposition`](tools::Exposition)) |
//! | `concurrency` | tool, action | `#[action(concurrency(max_active = 2, max_queued = 2))]` | calls running at once, and waiting in line (SERVER_BUSY past it) |
//! | `rate_limit` | tool, action | `#[tool(rate_limit(max = 120, window = "1m"))]` | calls per window (RATE_LIMITED past it); an action's beside its tool's |
//! | `scopes` | tool, action | `#[action(scopes("invoices:write", "invoices:admin"))]` | OAuth scopes a caller's token must grant (checked over streamable HTTP with an OAuth resource server; on stdio scopes do not apply); an action's add to its tool's |
//! | `open_arguments` | tool, action | `#[action(open_arguments)]` | accept (and ignore) undeclared fields; by default they are reported |
//! | `read_only` | action | `#[action(read_only)]` | changes nothing (MCP hint) |
//! | `destructive` | action | `#[action(destructive)]` | may destroy data (MCP hint; not with `read_only`) |
//! | `idempotent` | action | `#[action(idempotent)]` | repeating it changes nothing more (MCP hint) |
//! | `open_world` | action | `#[action(open_world)]` | reaches outside systems (MCP hint) |
//! | `deprecated` | action | `#[action(deprecated = "Use cancel_invoice.")]` | still runs, with a DEPRECATED warning (the note replaces its message) |
//! | `replacement` | action | `#[action(deprecated, replacement = cancel_invoice)]` | the action to call instead (another action of the tool) |
//! | `timeout` | action | `#[action(timeout = "5s")]` | the handler's deadline (`"500ms"`, `"5s"`, `"2m"`, `"1h"`): TIMEOUT past it |
//! | `heartbeat` | action | `#[action(heartbeat = "5s")]` | progress every 5 s while the handler reports none, to a client that asked for progress |
//! | `ask_user` | action | `#[action(ask_user(confirm))]` | optional fields of the arguments only the user can give (a confirmation, a choice among their own accounts): left out of the listed schema, refused when the model sends it, asked of the user through elicitation, and the call refused when the client cannot ask (see [Asking the user](crate#asking-the-user-deriveelicitform)); each an optional field a form can show, as serde names it (`ask_user("confirmDelete")` when renamed), checked when the server is built ([`ActionDefBuilder::user_field`](tools::ActionDefBuilder::user_field)) |
//! | `header` | action | `#[action(header(region = "Region"))]` | fields of the arguments mirrored in HTTP headers (2026-07-28, SEP-2243): listed with `"x-mcp-header"`, sent by clients as `Mcp-Param-Region` too, and over streamable HTTP a call whose header is missing, differs from the body or is bad Base64 is refused (HTTP 400, JSON-RPC -32020); each a field of one type among string, integer and boolean, as serde names it, checked when the server is built ([`ActionDefBuilder::header`](tools::ActionDefBuilder::header)) |
//! | `crate` | tool | `#[tool(crate = ::my_sdk::mcp_fusion)]` | where this crate is, when re-exported |
//!
//! A handler takes `&self` (or nothing), then its arguments struct and optionally `f:
//! Context`, in either order.
//!
//! `#[tool]` also generates `{Type}Actions` and `{Type}::ACTIONS`, one [`ActionRef`](tools::ActionRef) per
//! action, so `.actions(..)` names actions with compile-time checking; a fn tool becomes the
//! unit struct `{Fn}Tool` (`get_weather` → `GetWeatherTool`).
//!
//! An action returns `Result<T, E>`: `T` is serialized to JSON, a string sent as its text (or
//! is a [`Response`](tools::Response)); `E` is
//! a [`ToolError`] or a `#[derive(ToolErrors)]` enum, sent intact, or any other error that is
//! `Send + Sync + 'static` (`String`, `Box<dyn Error + Send + Sync>`, `anyhow::Error`): the
//! model then sees INTERNAL_ERROR, `The action "billing.get_invoice" failed unexpectedly.` with
//! an incident id and the advice not to retry blindly, and the error's text goes to the server's
//! log under that id, never to the model. A panic is answered the same way, and the tool keeps
//! serving. A `String` error therefore tells the model nothing it can act on: give it a code
//! with [`ToolError::new`] or a `ToolErrors` enum instead.
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
//!     #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "The card was declined: {0}",
//!                  recovery = "Ask the user for another card")]
//!     Declined(String),
//!     #[tool_error(RATE_LIMITED, "Too many attempts: wait, then try once more", retry_after = 30, no_recovery)]
//!     TooManyAttempts,
//! }
//!
//! let err = ToolError::from(PaymentError::Declined("insufficient funds".into()));
//! assert_eq!(err.code().as_str(), "PAYMENT_DECLINED");
//! assert_eq!(err.message(), "The card was declined: insufficient funds");
//! assert_eq!(PaymentError::TooManyAttempts.to_string(), "Too many attempts: wait, then try once more");
//! ```
//!
//! Every attribute, with one example each:
//!
//! | attribute | on | example | what it does |
//! |---|---|---|---|
//! | code | variant, first | `#[tool_error(NOT_FOUND, "..")]` | a canonical code (autocompleted, checked) |
//! | `code = ".."` | variant | `#[tool_error(code = "PAYMENT_DECLINED", "..")]` | a custom code (`[A-Z][A-Z0-9_]*`) |
//! | message | variant, after the code | `#[tool_error(NOT_FOUND, "No invoice {id}")]` | the message and `Display` (`{field}`, `{0}` interpolate; `{{` is a brace) |
//! | `recovery` | variant | `recovery = "List invoices first"` | what the model should do next (interpolated too) |
//! | `actions` | variant | `actions(Billing::list_invoices)` | actions to suggest, checked paths (not strings) |
//! | `details` | variant | `details(requestedId = id)` | key–value details from fields |
//! | `severity` | variant | `severity = warning` | `warning` (the call still succeeds), `error` (default), `critical` |
//! | `retry_after` | variant | `retry_after = 30` or `retry_after = wait` | when to retry, in seconds, written or from a field |
//! | `no_recovery` | variant | `#[tool_error(CONFLICT, "Paid: tell the user.", no_recovery)]` | says an error has neither `recovery` nor `actions` on purpose; without it, such a variant of severity `error` or `critical` gets a warning (the model would learn what failed, not what to do) |
//! | `transparent` | variant of one field | `#[tool_error(transparent)] Billing(BillingError)` | the field's envelope, `Display` and source |
//! | `internal` | variant | `#[tool_error(internal, "ledger failed: {0}")] Ledger(io::Error)` | INTERNAL_ERROR with an incident id; the message (and source chain) go to the log only |
//! | `from` | field | `Io(#[tool_error(from)] std::io::Error)` | `From<io::Error>` for the enum (so `?` converts), and the field is the source |
//! | `source` | field | `#[tool_error(source)] cause: io::Error` | `Error::source` (a field named `source` is the source without it) |
//! | `skip_display` | enum | `#[tool_error(skip_display)]` | the enum has its own `Display` and `Error` (thiserror's, say); only the envelope is derived |
//! | `from_envelope` | enum | `#[tool_error(from_envelope)]` | [`FromEnvelope`](client::FromEnvelope): a client reads its errors back as the enum (`Client::call_typed`); each field from its detail or its plain `{field}` in the message, parsed with `FromStr` |
//! | `crate` | enum | `#[tool_error(crate = ::my_sdk::mcp_fusion)]` | where this crate is, when re-exported |
//!
//! The helper attributes are namespaced (`#[tool_error(from)]`, not `#[from]`), so the derive
//! sits beside thiserror's without either reading the other's.
//!
//! # Asking the user: `#[derive(ElicitForm)]`
//!
//! A handler asks the user to fill in a form with [`Context::elicit`] (MCP elicitation), typed
//! by a struct that derives [`ElicitForm`](tools::ElicitForm): its fields become the form's,
//! and what a form cannot show is refused when the crate compiles, on the field's type.
//!
//! ```
//! use mcp_fusion::{Context, ToolError};
//! use mcp_fusion::tools::{ElicitChoice, ElicitForm};
//!
//! /// How often to send the report.
//! #[derive(serde::Deserialize, ElicitChoice)]
//! #[serde(rename_all = "lowercase")]
//! enum Every {
//!     /// Every day
//!     Day,
//!     /// Every week, on Mondays
//!     Week,
//! }
//!
//! #[derive(serde::Deserialize, ElicitForm)]
//! struct Subscribe {
//!     /// Where the report goes.
//!     #[form(title = "Email", format = "email")]
//!     email: String,
//!     #[form(default = Every::Week)]
//!     every: Every,
//!     /// How many rows at most.
//!     #[form(min = 1, max = 500, default = 50)]
//!     rows: Option<u16>,
//! }
//!
//! async fn subscribe(f: &Context) -> Result<String, ToolError> {
//!     let form = f.elicit::<Subscribe>("Where should the report go?").await?.accepted()?;
//!     Ok(format!("{} rows to {}", form.rows.unwrap_or(50), form.email))
//! }
//! # let _ = subscribe;
//! ```
//!
//! A form shows, one per field: text (`String`), a boolean, an integer (`i8` to `i64`, `u8`
//! to `u64`; the type's range where it is narrower), a number (`f32`, `f64`), one choice (an
//! enum of unit variants with `#[derive(ElicitChoice)]`) or several (a `Vec` of one), and an
//! `Option` of any of these, which the user may leave empty (the others are required). A
//! nested struct, a map, a tuple, a list of text or numbers, or a type parameter is a compile
//! error on the field's type that lists what a form shows. A field's doc comment is its
//! description; the struct's own is not sent (the message given to `elicit` is what the user
//! reads).
//!
//! Names are serde's: the fields and the choices' values are the names serde reads the answer
//! with (`#[serde(rename_all = "..")]`, `#[serde(rename = "..")]`; a `#[serde(skip)]` field is
//! not in the form), so they are written once. What would have serde read the answer as
//! anything but a flat object (`flatten`, `transparent`, a tagged enum) is refused.
//!
//! | attribute | on | example | what it does |
//! |---|---|---|---|
//! | `title` | field | `#[form(title = "Email")]` | the field's name as the user sees it (default: the property's name) |
//! | `format` | text | `#[form(format = "email")]` | `"email"`, `"uri"`, `"date"` or `"date-time"` |
//! | `min_length`, `max_length` | text | `#[form(min_length = 3, max_length = 254)]` | length in characters |
//! | `min`, `max` | number | `#[form(min = 0, max = 0.5)]` | the least and greatest value; a fraction only for `f32`/`f64`, a whole number read as the field's own type (so `max = 300` on a `u8` is refused) |
//! | `min_items`, `max_items` | several choices | `#[form(min_items = 1)]` | how many the user picks |
//! | `default` | field | `#[form(default = "Ada")]`, `default = 50`, `default = true`, `default = Every::Week`, `default = [Topic::Rust]` | the value the form starts with (SEP-1034), checked against the field's type and its bounds when the crate compiles |
//! | `crate` | struct | `#[form(crate = ::my_sdk::mcp_fusion)]` | where this crate is, when re-exported |
//! | `title` | variant | `#[choice(title = "Every week")]` | what the user sees for a choice (default: its doc comment; without either, its value) |
//! | `crate` | enum | `#[choice(crate = ::my_sdk::mcp_fusion)]` | where this crate is, when re-exported |
//!
//! A choice with titles is sent as SEP-1330's titled enum (`oneOf` of `const` and `title`, or
//! an array whose `items` are `anyOf` of them); without any, as the plain `enum` of its values.
//! An option its field's kind does not take (`format` on a number, `min_items` on one choice)
//! is a compile error on the option.
//!
//! An argument only the user can give (a confirmation) is marked on the action,
//! `ask_user(confirm)`, and need not be asked in the handler. The model never gives it: it is
//! left out of the schema `tools/list` shows, and a call carrying it is refused
//! (USER_ONLY_FIELD). The server asks the user for it in a form made from the argument's schema
//! (its doc comment, bounds and choices), the way [`Context::elicit`] asks, puts the answer in
//! the arguments, validates them again and runs the action with them. Declined or dismissed,
//! the call is answered USER_DECLINED or USER_CANCELLED; where the user cannot be asked (a
//! client without elicitation, stateless HTTP before 2026-07-28, a call in process), the call
//! never runs: CLIENT_UNSUPPORTED, telling the model not to fill the field in (-32021 from
//! 2026-07-28) ([`ActionDefBuilder::user_field`](tools::ActionDefBuilder::user_field)). An
//! answer the model may relay from the conversation is a deliberate choice of its own
//! ([`ActionDefBuilder::relayed_user_field`](tools::ActionDefBuilder::relayed_user_field)).
//!
//! ```
//! use mcp_fusion::{Server, ToolError, tool};
//! use mcp_fusion::rmcp::model::CallToolRequestParams;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Delete {
//!     note: String,
//!     /// Delete the note for good.
//!     confirm: Option<bool>,
//! }
//!
//! struct Notes;
//!
//! /// Notes.
//! #[tool]
//! impl Notes {
//!     /// Deletes a note, once the user confirms.
//!     #[action(destructive, ask_user(confirm))]
//!     async fn delete(&self, args: Delete) -> Result<String, ToolError> {
//!         Ok(match args.confirm {
//!             Some(true) => format!("Deleted {}", args.note),
//!             _ => format!("Kept {}", args.note),
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let server = Server::builder("notes", "1.0.0").tool(Notes).build().unwrap();
//! let delete = |arguments: serde_json::Value| {
//!     CallToolRequestParams::new("notes").with_arguments(arguments.as_object().cloned().unwrap())
//! };
//! // In process there is no user to ask: the call never runs.
//! let result = server.call(delete(serde_json::json!({"action": "delete", "note": "a"}))).await;
//! let result = result.unwrap();
//! let text = &result.content[0].as_text().unwrap().text;
//! assert!(text.contains("the client cannot ask them"), "{text}");
//! // The model cannot confirm for the user.
//! let given = serde_json::json!({"action": "delete", "note": "a", "confirm": true});
//! let result = server.call(delete(given)).await.unwrap();
//! let text = &result.content[0].as_text().unwrap().text;
//! assert!(text.contains("USER_ONLY_FIELD"), "{text}");
//! # });
//! ```
//!
//! # The map
//!
//! The root holds what every server names, each for one reason:
//!
//! | root item | why it is here |
//! |---|---|
//! | [`tool`] | writes a [`Tool`] from an impl block or an async fn |
//! | [`ToolErrors`] | maps a domain error enum to envelopes |
//! | [`ToolError`], [`ErrorCode`], [`Severity`] | what a handler returns when a call fails |
//! | [`Context`] | what a handler gets besides its arguments: errors, progress, the client |
//! | [`Tool`] | what the server lists and calls; `#[tool]` implements it, or write it by hand |
//! | [`Server`] | serves tools (and your own rmcp handler's prompts and resources) |
//! | [`rmcp`] | the SDK underneath, re-exported so versions always match |
//!
//! Everything else has one path, in the module that owns it:
//!
//! - [`errors`]: the rest of building an envelope (the builder's argument types, custom codes,
//!   a warning on a successful result).
//! - [`tools`]: what definitions are made of ([`ToolDef`](tools::ToolDef),
//!   [`ActionDef`](tools::ActionDef)), what an action returns, and what it asks of the client
//!   (forms with [`ElicitForm`](tools::ElicitForm), sampling, roots, log levels).
//! - [`validate`]: schemas, problems and `<validation_error>`; [`router`]: the discriminator
//!   ([`ActionRouter`](router::ActionRouter)).
//! - [`middleware`]: code around every call ([`AuthCheck`](middleware::AuthCheck),
//!   [`Audit`](middleware::Audit)).
//! - [`server`]: the builder, stdio (feature `stdio`) and streamable HTTP (`http`) options, the
//!   limit stores (`server::limits`), MCP authorization (`server::oauth`, feature `oauth`) and
//!   the gateway (`server::gateway`, feature `gateway`).
//! - [`client`]: reading an envelope back ([`parse_envelope`](client::parse_envelope),
//!   [`FromEnvelope`](client::FromEnvelope), the `_meta` mirror), and with feature `client` a
//!   typed client that does it for every result.
//! - [`contract`]: the lockfile, classified diffs, and what changed told to the model
//!   ([`inject_contract_awareness`](contract::inject_contract_awareness)).
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly): each item behind a feature is labelled with it.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The macros name the crate `::mcp_fusion`; this lets the crate's own tests use them.
#[allow(unused_extern_crates)]
extern crate self as mcp_fusion;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod call_result;
pub mod client;
mod closest;
pub mod contract;
mod envelope;
mod error;
mod hex;
pub mod middleware;
#[cfg(feature = "oauth-client")]
mod oauth_client;
pub mod router;
pub mod server;
mod tool;
pub mod validate;

/// What building an envelope takes besides [`ToolError`], [`ErrorCode`] and [`Severity`] (at
/// the root, where every handler names them): [`Text`](errors::Text) and
/// [`RetryAfter`](errors::RetryAfter), the types its builder takes;
/// [`InvalidCode`](errors::InvalidCode), a custom code that is not `[A-Z][A-Z0-9_]*`;
/// [`with_warning`](errors::with_warning), a warning appended to a successful result.
pub mod errors {
    pub use crate::call_result::with_warning;
    pub use crate::envelope::{RetryAfter, Text};
    pub use crate::error::InvalidCode;
}

/// What a tool is made of besides [`Tool`] and [`Context`] (at the root), for tools written by
/// hand and for reading definitions: [`ToolDef`](tools::ToolDef) and
/// [`ActionDef`](tools::ActionDef) with their builders; what an action returns
/// ([`Response`](tools::Response), [`IntoOutput`](tools::IntoOutput),
/// [`Failure`](tools::Failure)) and reads ([`TraceContext`](tools::TraceContext), the verified
/// [`Caller`](tools::Caller)); and what it asks of the client through [`Context`]: a form
/// ([`ElicitForm`](tools::ElicitForm) and [`ElicitChoice`](tools::ElicitChoice), each a trait
/// and its derive at one path, as serde's `Serialize`), a URL, the client's model
/// ([`Sampling`](tools::Sampling)), its roots, a log line at a [`LogLevel`](tools::LogLevel);
/// any of them under a key of the handler's choosing ([`Input`](tools::Input)).
pub mod tools {
    pub use crate::tool::{
        ActionDef, ActionDefBuilder, ActionRef, Annotations, Answer, Ask, AskError, BoxFuture,
        Caller, Choice, Concurrency, Deprecation, ElicitChoice, ElicitForm, Elicited, Exposition,
        Failure, Input, IntoOutput, LogLevel, RateLimit, Response, Root, SCOPES_KEY, Sampled,
        Sampling, SingleToolDefBuilder, TaskSupport, ToolDef, ToolDefBuilder, TraceContext,
    };
    /// Implements [`ElicitChoice`] for an enum of unit variants: a choice in a form (or
    /// several, as a `Vec`); see the [crate docs](crate#asking-the-user-deriveelicitform).
    pub use mcp_fusion_macros::ElicitChoice;
    /// Implements [`ElicitForm`] for a struct: the form [`Context::elicit`](crate::Context::elicit)
    /// asks the user to fill in, checked at compile time; see the
    /// [crate docs](crate#asking-the-user-deriveelicitform).
    pub use mcp_fusion_macros::ElicitForm;
}

// The root holds what every server names: the two macros, the error a handler returns with its
// code and severity, what a handler gets, the trait a tool implements, the server, and rmcp.
// Everything else has one path, in the module that owns it.

/// The error a handler returns, rendered as `<tool_error>`: built with [`ToolError::new`] (or
/// [`Context::error`] in a handler), then `.suggest(..)`, `.actions(..)`, `.details(..)`,
/// `.retry_after(..)`, `.severity(..)`.
pub use envelope::ToolError;
/// An error code: the canonical ones as constants (`ErrorCode::NOT_FOUND`), custom ones checked.
pub use error::ErrorCode;
/// `warning`, `error` or `critical`: whether the call fails, and how hard.
pub use error::Severity;
/// Maps a domain error enum to codes, messages and recovery hints; see the
/// [crate docs](crate#domain-errors-derivetoolerrors).
pub use mcp_fusion_macros::ToolErrors;
/// Makes a tool of an impl block (one action per async method) or of an async fn; see the
/// [crate docs](crate#tools-tool).
pub use mcp_fusion_macros::tool;
/// The official Rust MCP SDK this crate plugs into, re-exported so versions always match.
pub use rmcp;
/// The MCP server that serves tools (and, beside them, your own rmcp handler's prompts and
/// resources): [`Server::builder`], then stdio or streamable HTTP; the rest of serving is in
/// [`server`].
pub use server::core::Server;
/// What an action's handler gets besides its arguments (`f: Context`).
pub use tool::Context;
/// A tool an MCP server can list and call; `#[tool]` implements it.
pub use tool::Tool;
