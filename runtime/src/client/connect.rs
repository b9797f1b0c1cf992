//! The typed client: calls tools over rmcp's client and reads envelopes back as typed errors.

use std::fmt;

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::Peer;
use serde_json::{Map, Value};

use super::{FromEnvelope, ParsedError, ParsedKind, parse_envelope};
use crate::envelope::mirror_entries;

/// A client of an MCP server built with this crate (or any MCP server).
///
/// `call("billing.get_invoice", args)` splits the tool from the action and fills the
/// discriminator (`action`); a result whose `isError` is set comes back as
/// [`ClientError::Tool`], with the envelope parsed. [`call_raw`](Client::call_raw) gives every
/// result as it came.
#[derive(Clone)]
pub struct Client {
    peer: Peer<RoleClient>,
    discriminator: String,
    /// How [`Client::batch`] runs its calls.
    pub(super) batch: super::BatchOptions,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("discriminator", &self.discriminator)
            .field("batch", &self.batch)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client over an established rmcp client connection.
    pub fn new(peer: Peer<RoleClient>) -> Self {
        Client {
            peer,
            discriminator: "action".into(),
            batch: super::BatchOptions::default(),
        }
    }

    /// Renames the discriminator filled in by [`Client::call`] (default `action`).
    pub fn discriminator(mut self, name: impl Into<String>) -> Self {
        self.discriminator = name.into();
        self
    }

    /// The rmcp peer, for anything else MCP offers.
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// The server's tools, as `tools/list` shows them.
    pub async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, ClientError> {
        self.peer
            .list_all_tools()
            .await
            .map_err(ClientError::transport)
    }

    /// Calls `tool.action` (or a single-action `tool`) with `arguments` (an object, or null);
    /// a result whose `isError` is set is [`ClientError::Tool`], its envelope parsed.
    pub async fn call(
        &self,
        target: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        let result = self.call_raw(target, arguments).await?;
        if result.is_error == Some(true) {
            return Err(ClientError::Tool(Box::new(ToolCallError::from_result(
                result,
            ))));
        }
        Ok(result)
    }

    /// Calls as [`call`](Client::call) does, and gives the result as it came, `isError` or
    /// not (a warning's envelopes are read with [`warnings`]).
    pub async fn call_raw(
        &self,
        target: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        let params = self.params(target, arguments)?;
        self.peer
            .call_tool(params)
            .await
            .map_err(ClientError::transport)
    }

    /// The params of a call of `target` (`tool.action`, or a single-action `tool`).
    pub(super) fn params(
        &self,
        target: &str,
        arguments: Value,
    ) -> Result<CallToolRequestParams, ClientError> {
        let (tool, action) = match target.split_once('.') {
            Some((tool, action)) => (tool, Some(action)),
            None => (target, None),
        };
        let mut args = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                let given = match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    _ => "a boolean",
                };
                return Err(ClientError::Arguments { given });
            }
        };
        if let Some(action) = action {
            args.insert(self.discriminator.clone(), Value::String(action.to_owned()));
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(args);
        Ok(params)
    }

    /// Calls and decodes the success value into `T`: the result's `structuredContent` when it
    /// has one, otherwise the JSON of its first text block (or that text as a string: a
    /// successful string is sent as its text).
    pub async fn call_as<T: serde::de::DeserializeOwned>(
        &self,
        target: &str,
        arguments: Value,
    ) -> Result<T, ClientError> {
        let result = self.call(target, arguments).await?;
        if let Some(value) = result.structured_content {
            return serde_json::from_value(value).map_err(ClientError::Decode);
        }
        let text = texts(&result).next().unwrap_or_default();
        serde_json::from_str(&text).or_else(|not_json| {
            serde_json::from_value(Value::String(text)).map_err(|_| ClientError::Decode(not_json))
        })
    }

    /// Calls and decodes the success value into `T`, and a failure into the caller's own error
    /// type `E` when the envelope is one of its errors ([`FromEnvelope`], which
    /// `#[derive(ToolErrors)]` implements with `#[tool_error(from_envelope)]`).
    ///
    /// ```no_run
    /// # #[derive(serde::Deserialize)] struct Invoice;
    /// # #[derive(Debug)] enum BillingError { NotFound { id: String } }
    /// # impl mcp_fusion::client::FromEnvelope for BillingError {
    /// #     fn from_envelope(_: &mcp_fusion::client::ParsedError) -> Option<Self> { None }
    /// # }
    /// use mcp_fusion::client::{CallError, Client};
    /// # async fn run(client: Client) {
    /// match client.call_typed::<Invoice, BillingError>("billing.get_invoice", serde_json::json!({"id": "inv_9"})).await {
    ///     Ok(invoice) => { /* ... */ }
    ///     Err(CallError::Domain(BillingError::NotFound { id })) => println!("no invoice {id}"),
    ///     Err(CallError::Client(other)) => println!("{other}"),
    ///     Err(other) => println!("{other:?}"),
    /// }
    /// # }
    /// ```
    pub async fn call_typed<T, E>(&self, target: &str, arguments: Value) -> Result<T, CallError<E>>
    where
        T: serde::de::DeserializeOwned,
        E: FromEnvelope,
    {
        self.call_as(target, arguments)
            .await
            .map_err(|err| match err.domain() {
                Some(domain) => CallError::Domain(domain),
                None => CallError::Client(err),
            })
    }
}

/// The warnings of a successful result (a deprecated action, a partial result), in order:
/// read from its mirror when the server sent one, otherwise from the text blocks after the
/// first that are envelopes.
///
/// ```
/// use mcp_fusion::ToolError;
/// use mcp_fusion::errors::with_warning;
/// use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
///
/// let ok = CallToolResult::success(vec![ContentBlock::text("{}")]);
/// let warned = with_warning(ok, &ToolError::deprecated("billing.void_invoice", None, None));
/// let warnings = mcp_fusion::client::warnings(&warned);
/// assert_eq!(warnings[0].code, "DEPRECATED");
/// ```
pub fn warnings(result: &CallToolResult) -> Vec<ParsedError> {
    let mirrored: Option<Vec<ParsedError>> = mirror_entries(result)
        .iter()
        .map(ParsedError::from_mirror)
        .collect();
    match mirrored {
        Some(warnings) if !warnings.is_empty() => warnings,
        _ => texts(result)
            .skip(1)
            .map(|text| parse_envelope(&text))
            .filter(|parsed| parsed.kind != ParsedKind::NotAnEnvelope)
            .collect(),
    }
}

/// The text blocks of a result.
fn texts(result: &CallToolResult) -> impl Iterator<Item = String> + '_ {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
}

/// A failed tool call: the envelope, parsed, and the raw result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallError {
    /// The parsed envelope: code, severity, message, recovery, actions, details, retry_after,
    /// the action and the fields of a validation error.
    pub error: ParsedError,
    /// The result as received.
    pub raw: CallToolResult,
}

impl ToolCallError {
    /// Reads the envelope of an error result: its mirror in `_meta` when the server sent one
    /// (ERRORS.md §9), otherwise its first text block (§6).
    pub fn from_result(raw: CallToolResult) -> Self {
        let error = match mirror_entries(&raw)
            .first()
            .and_then(ParsedError::from_mirror)
        {
            Some(error) => error,
            None => parse_envelope(&texts(&raw).next().unwrap_or_default()),
        };
        ToolCallError { error, raw }
    }

    /// The code (`NOT_FOUND`, `VALIDATION_ERROR`, ..., `UNKNOWN` for text that is no envelope).
    pub fn code(&self) -> &str {
        &self.error.code
    }

    /// Whether the text was an envelope at all.
    pub fn is_envelope(&self) -> bool {
        self.error.kind != ParsedKind::NotAnEnvelope
    }

    /// The envelope as the caller's own error type, when it is one of its errors.
    pub fn domain<E: FromEnvelope>(&self) -> Option<E> {
        E::from_envelope(&self.error)
    }
}

/// A failed [`Client::call_typed`]: the caller's own error, or anything else.
#[derive(Debug)]
#[non_exhaustive]
pub enum CallError<E> {
    /// The envelope, as one of the caller's errors.
    Domain(E),
    /// An envelope `E` does not know, the transport, the arguments, the decoding.
    Client(ClientError),
}

impl<E: fmt::Display> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Domain(e) => e.fmt(f),
            CallError::Client(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CallError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Domain(e) => Some(e),
            CallError::Client(e) => Some(e),
        }
    }
}

impl fmt::Display for ToolCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error.code, self.error.message)
    }
}

/// Why a call did not give a successful result.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The tool answered with an error envelope.
    Tool(Box<ToolCallError>),
    /// The transport or the protocol failed (including an unknown tool, a JSON-RPC error).
    Transport(Box<dyn std::error::Error + Send + Sync>),
    /// The arguments given were not an object (nor null).
    Arguments {
        /// The JSON type that was given instead (`an array`, `a string`, ...).
        given: &'static str,
    },
    /// The success value did not decode into the requested type.
    Decode(serde_json::Error),
    /// No answer came within the call's timeout ([`BatchOptions::timeout`](super::BatchOptions::timeout));
    /// the server was told the call is cancelled.
    TimedOut {
        /// How long the call waited.
        after: std::time::Duration,
    },
}

impl ClientError {
    pub(super) fn transport(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        ClientError::Transport(Box::new(e))
    }

    /// The tool error, if the tool answered with one.
    pub fn tool_error(&self) -> Option<&ToolCallError> {
        match self {
            ClientError::Tool(e) => Some(e),
            _ => None,
        }
    }

    /// The tool error as the caller's own error type, when the tool answered with one of its
    /// errors ([`FromEnvelope`]).
    pub fn domain<E: FromEnvelope>(&self) -> Option<E> {
        self.tool_error()?.domain()
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Tool(e) => write!(f, "the tool failed: {e}"),
            ClientError::Transport(_) => f.write_str("the call did not complete"),
            ClientError::Arguments { given } => {
                write!(f, "the arguments must be an object, not {given}")
            }
            ClientError::Decode(_) => f.write_str("the success value did not decode"),
            ClientError::TimedOut { after } => write!(f, "no answer within {after:?}"),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Transport(e) => Some(&**e),
            ClientError::Decode(e) => Some(e),
            ClientError::Tool(_) | ClientError::Arguments { .. } | ClientError::TimedOut { .. } => {
                None
            }
        }
    }
}
