//! What a handler asks of the client that called it: to log a message to it, to ask its model
//! (sampling), to ask the user (elicitation: a form, or a URL), to list its roots. One API for
//! both protocol eras: on a session (up to MCP 2025-11-25) the server sends the request on the
//! session's back-channel and waits for the answer; from 2026-07-28 (SEP-2322) the call ends its
//! round with `input_required`, the client answers and calls again, and the handler, run again
//! from the top, finds the answer. Either way the handler writes `f.elicit(..).await?`.
//!
//! While a handler waits for the user or the client's model, the action's deadline stands
//! still; the wait has a bound of its own (`ServerBuilder::ask_timeout`), after which the model
//! is told the user did not answer in time.

// Sampling, roots and logging are deprecated by SEP-2577 in rmcp; they are still served, and
// the API here does not make its users name the deprecated types.
#![allow(deprecated)]

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, ListRootsResult, LoggingLevel, ModelHint,
    ModelPreferences, SamplingMessage,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::future::BoxFuture;
use crate::ToolError;

/// A form the user fills in when asked ([`Context::elicit`](crate::Context::elicit)): a flat
/// object of primitive fields (text, numbers, booleans, one of a set of values), as MCP
/// elicitation shows them. `#[derive(ElicitForm)]` writes it for a struct and refuses at compile
/// time a field a form cannot show (see the
/// [crate docs](crate#asking-the-user-deriveelicitform)); by hand, it is rmcp's schema:
///
/// ```
/// use mcp_fusion::rmcp::model::ElicitationSchema;
/// use mcp_fusion::tools::ElicitForm;
///
/// #[derive(serde::Deserialize)]
/// struct Confirm {
///     confirm: bool,
/// }
///
/// impl ElicitForm for Confirm {
///     fn schema() -> ElicitationSchema {
///         ElicitationSchema::builder().required_bool("confirm").build_unchecked()
///     }
/// }
/// # assert!(Confirm::schema().properties.contains_key("confirm"));
/// ```
pub trait ElicitForm: DeserializeOwned + Send {
    /// The form's schema, as the client shows it.
    fn schema() -> ElicitationSchema;
}

/// What the user did with an elicitation: answered it, declined it, or dismissed it.
///
/// ```
/// use mcp_fusion::tools::Elicited;
///
/// let answered: Elicited<bool> = Elicited::Accepted(true);
/// assert_eq!(answered.accepted().ok(), Some(true));
/// assert!(Elicited::<bool>::Declined.accepted().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user answered.
    Accepted(T),
    /// The user declined to answer.
    Declined,
    /// The user dismissed the request without a choice.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The answer, or a [`AskError`] the handler can return with `?` (an envelope that tells
    /// the model the user declined or dismissed it).
    pub fn accepted(self) -> Result<T, AskError> {
        match self {
            Elicited::Accepted(answer) => Ok(answer),
            Elicited::Declined => Err(AskError::Declined),
            Elicited::Cancelled => Err(AskError::Cancelled),
        }
    }
}

/// A question for the client's model (`sampling/createMessage`): messages, and how to answer.
///
/// ```
/// use mcp_fusion::tools::Sampling;
///
/// let question = Sampling::new(200)
///     .system("You summarize invoices in one sentence.")
///     .user("Summarize: 3 lines, 1,200 EUR, due 2026-12-31.");
/// # let _ = question;
/// ```
#[derive(Debug, Clone)]
pub struct Sampling(pub(super) CreateMessageRequestParams);

impl Sampling {
    /// A question answered in at most `max_tokens` tokens.
    pub fn new(max_tokens: u32) -> Self {
        Sampling(CreateMessageRequestParams::new(Vec::new(), max_tokens))
    }

    /// Adds a message of the user.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.0.messages.push(SamplingMessage::user_text(text));
        self
    }

    /// Adds a message of the assistant.
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.0.messages.push(SamplingMessage::assistant_text(text));
        self
    }

    /// The system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.0.system_prompt = Some(prompt.into());
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.0.temperature = Some(temperature);
        self
    }

    /// A model the client should prefer (a name or a family, `claude-3-5`, `gpt`): hints are
    /// tried in the order given.
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        let preferences = self
            .0
            .model_preferences
            .get_or_insert_with(ModelPreferences::default);
        preferences
            .hints
            .get_or_insert_with(Vec::new)
            .push(ModelHint::new(name.into()));
        self
    }

    /// Sequences that stop the answer.
    pub fn stop_sequences<S: Into<String>>(mut self, stops: impl IntoIterator<Item = S>) -> Self {
        self.0.stop_sequences = Some(stops.into_iter().map(Into::into).collect());
        self
    }
}

/// The answer of the client's model.
///
/// ```
/// use mcp_fusion::tools::Sampled;
///
/// # fn read(answer: Sampled) {
/// println!("{} answered: {}", answer.model(), answer.text().unwrap_or("(no text)"));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Sampled(CreateMessageResult);

impl Sampled {
    /// The text of the answer, when it is text.
    pub fn text(&self) -> Option<&str> {
        self.0
            .message
            .content
            .first()?
            .as_text()
            .map(|t| t.text.as_str())
    }

    /// The model that answered.
    pub fn model(&self) -> &str {
        &self.0.model
    }

    /// Why it stopped, as the client said.
    pub fn stop_reason(&self) -> Option<&str> {
        self.0.stop_reason.as_deref()
    }
}

/// How severe a log message is (RFC 5424's levels, as MCP logging names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What happens.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// An operation failed.
    Error,
    /// A component failed.
    Critical,
    /// Action is needed now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl From<LogLevel> for LoggingLevel {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// One of the client's roots: a folder (or other URI) it works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Its URI (`file:///home/ada/project`).
    pub uri: String,
    /// Its name, when the client gave one.
    pub name: Option<String>,
}

/// What a handler asks of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// Ask the user (elicitation).
    User,
    /// Ask the client's model (sampling).
    Model,
    /// List the client's roots.
    Roots,
}

impl Ask {
    /// The capabilities a client declares for it.
    pub(crate) fn needed(self) -> ClientCapabilities {
        let mut needed = ClientCapabilities::default();
        match self {
            Ask::User => needed.elicitation = Some(Default::default()),
            Ask::Model => needed.sampling = Some(Default::default()),
            Ask::Roots => needed.roots = Some(Default::default()),
        }
        needed
    }

    /// The capability a client declares for it.
    pub fn capability(self) -> &'static str {
        match self {
            Ask::User => "elicitation",
            Ask::Model => "sampling",
            Ask::Roots => "roots",
        }
    }
}

/// Why a handler's ask of its client (`f.elicit`, `f.sample`, `f.roots`) got no answer it can
/// use. Returned with `?`, it becomes an envelope the model can act on (`ToolError::from`),
/// never INTERNAL_ERROR. (A program calling a server's tools gets `client::ClientError`
/// instead: this one is the handler's side.)
///
/// ```
/// use mcp_fusion::tools::{Ask, AskError};
/// use mcp_fusion::ToolError;
///
/// let told = ToolError::from(AskError::NotSupported { ask: Ask::User });
/// assert_eq!(told.code().as_str(), "CLIENT_UNSUPPORTED");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskError {
    /// The client cannot be asked this: it did not declare the capability, or the request came
    /// over a transport without a way back to it (stateless HTTP before 2026-07-28).
    NotSupported {
        /// What was asked.
        ask: Ask,
    },
    /// The user declined to answer.
    Declined,
    /// The user dismissed the request without a choice.
    Cancelled,
    /// No answer came in time.
    TimedOut {
        /// What was asked.
        ask: Ask,
        /// How long the handler waited.
        waited: Duration,
    },
    /// The client answered with an error, or with an answer that does not fit the question.
    Failed {
        /// What was asked.
        ask: Ask,
        /// Why, for the model: the client's own error message, or a sentence of this crate's
        /// (never a decoder's or a transport's text, which are logged instead).
        reason: String,
    },
    /// [`Context::elicit_url`](crate::Context::elicit_url) was given a link it does not show
    /// the user: not `https` (nor `http` to this machine), or no URL at all. Nothing was asked.
    UrlRefused {
        /// The link's scheme (`javascript`, `file`, `http`, ...); empty when it is no URL.
        scheme: String,
    },
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::NotSupported { ask } => {
                write!(f, "the client does not support {}", ask.capability())
            }
            AskError::Declined => f.write_str("the user declined"),
            AskError::Cancelled => f.write_str("the user dismissed the request"),
            AskError::TimedOut { ask, waited } => {
                write!(f, "no answer to {} within {waited:?}", ask.capability())
            }
            AskError::Failed { ask, reason } => {
                write!(f, "{} failed: {reason}", ask.capability())
            }
            AskError::UrlRefused { scheme } => {
                write!(f, "a link of scheme {scheme:?} is not shown to the user")
            }
        }
    }
}

impl std::error::Error for AskError {}

impl From<AskError> for ToolError {
    fn from(error: AskError) -> Self {
        match error {
            AskError::NotSupported { ask } => ToolError::client_unsupported(ask.capability()),
            AskError::Declined => ToolError::user_declined(),
            AskError::Cancelled => ToolError::user_cancelled(),
            AskError::TimedOut { ask, waited } => {
                ToolError::client_timed_out(ask == Ask::User, waited)
            }
            AskError::Failed { ask, reason } => ToolError::client_failed(ask.capability(), &reason),
            AskError::UrlRefused { scheme } => ToolError::url_refused(&scheme),
        }
    }
}

impl From<AskError> for super::Failure {
    fn from(error: AskError) -> Self {
        super::Failure::Tool(error.into())
    }
}

/// The way from a call to its client, as the server made it for the call's transport and
/// protocol era.
pub(crate) trait ClientLink: Send + Sync + std::fmt::Debug {
    /// What the client declared it can be asked.
    fn capabilities(&self) -> &ClientCapabilities;

    /// A handler asked what the client did not declare it can be asked (`needed`); a
    /// 2026-07-28 call then answers -32021 whatever the handler makes of the refusal.
    fn refused(&self, needed: ClientCapabilities) {
        let _ = needed;
    }

    /// Whether the client can be asked this, by what it declared.
    fn supports(&self, ask: Ask) -> bool {
        let declared = self.capabilities();
        match ask {
            Ask::User => declared.elicitation.is_some(),
            Ask::Model => declared.sampling.is_some(),
            Ask::Roots => declared.roots.is_some(),
        }
    }

    /// Whether the client can be sent this request (a URL elicitation needs the `url` mode).
    fn supports_request(&self, request: &ClientRequestKind) -> bool {
        match request {
            ClientRequestKind::Elicit(ElicitRequestParams::UrlElicitationParams { .. }) => {
                let elicitation = self.capabilities().elicitation.as_ref();
                elicitation.is_some_and(|e| e.url.is_some())
            }
            other => self.supports(other.ask()),
        }
    }

    /// Sends a request to the client and waits for its answer (its result as JSON); from
    /// 2026-07-28, the answer the client gave in this round, or the end of the round. `key` is
    /// the name the handler gave the ask (`Context::input`): from 2026-07-28 its key in the
    /// round's `inputRequests`; unused before.
    fn request(
        &self,
        request: ClientRequestKind,
        key: Option<&str>,
    ) -> BoxFuture<'_, Result<Value, AskError>>;

    /// Sends a log message when the client's level lets it through: once the future
    /// completes, it is written (before the call's answer); whether it was sent.
    fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: Value,
    ) -> BoxFuture<'static, bool>;
}

/// A request a handler sends its client.
#[derive(Debug, Clone)]
pub(crate) enum ClientRequestKind {
    Sample(CreateMessageRequestParams),
    Elicit(ElicitRequestParams),
    Roots,
}

impl ClientRequestKind {
    pub(crate) fn ask(&self) -> Ask {
        match self {
            ClientRequestKind::Sample(_) => Ask::Model,
            ClientRequestKind::Elicit(_) => Ask::User,
            ClientRequestKind::Roots => Ask::Roots,
        }
    }
}

/// An answer of the client that could not be read: what is logged (the decoder's own text,
/// for the server's operator) and what the handler and the model are told (a sentence of this
/// crate's, never the decoder's text: ERRORS.md keeps internals from the model).
fn unreadable(ask: Ask, reason: &str, error: &serde_json::Error) -> AskError {
    tracing::warn!(capability = ask.capability(), %error, "{reason}");
    AskError::Failed {
        ask,
        reason: reason.to_owned(),
    }
}

/// The form's answer, read as `T`.
pub(crate) fn form_answer<T: DeserializeOwned>(result: Value) -> Result<Elicited<T>, AskError> {
    let result: ElicitResult = serde_json::from_value(result)
        .map_err(|e| unreadable(Ask::User, "the client's answer is not one MCP defines", &e))?;
    match result.action {
        ElicitationAction::Accept => {
            let content = result.content.unwrap_or(Value::Object(Default::default()));
            let answer = serde_json::from_value(content).map_err(|e| {
                unreadable(
                    Ask::User,
                    "the form came back with values that do not fit it",
                    &e,
                )
            })?;
            Ok(Elicited::Accepted(answer))
        }
        ElicitationAction::Decline => Ok(Elicited::Declined),
        // `cancel`, and any action MCP defines later: no answer.
        _ => Ok(Elicited::Cancelled),
    }
}

/// The model's answer.
pub(crate) fn sampled(result: Value) -> Result<Sampled, AskError> {
    serde_json::from_value::<CreateMessageResult>(result)
        .map(Sampled)
        .map_err(|e| unreadable(Ask::Model, "the client's answer is not one MCP defines", &e))
}

/// The client's roots.
pub(crate) fn roots(result: Value) -> Result<Vec<Root>, AskError> {
    serde_json::from_value::<ListRootsResult>(result)
        .map(|listed| {
            (listed.roots.into_iter())
                .map(|root| Root {
                    uri: root.uri,
                    name: root.name,
                })
                .collect()
        })
        .map_err(|e| unreadable(Ask::Roots, "the client's answer is not one MCP defines", &e))
}

/// How a call reaches its client, in its context.
#[derive(Debug, Clone)]
pub(crate) struct ClientAccess {
    pub(crate) link: std::sync::Arc<dyn ClientLink>,
    /// How long an ask waits for its answer.
    pub(crate) ask_timeout: Duration,
}

/// The capability a client declares for `request`.
fn needed_by(request: &ClientRequestKind) -> ClientCapabilities {
    let mut needed = ClientCapabilities::default();
    match request {
        ClientRequestKind::Elicit(ElicitRequestParams::UrlElicitationParams { .. }) => {
            let elicitation = needed.elicitation.get_or_insert_with(Default::default);
            elicitation.url = Some(Default::default());
        }
        other => needed = other.ask().needed(),
    }
    needed
}

impl ClientAccess {
    /// Whether the client can be asked `ask`; when it cannot, the refusal is recorded as
    /// [`ClientAccess::ask`] records it (a 2026-07-28 call then answers -32021).
    pub(crate) fn can(&self, ask: Ask) -> bool {
        let can = self.link.supports(ask);
        if !can {
            self.link.refused(ask.needed());
        }
        can
    }

    /// Sends `request` (named `key`, when the handler named it) to the client within
    /// `ask_timeout`: its answer as it gave it, or why there is none (a client that did not
    /// declare the capability is not asked).
    pub(crate) async fn ask(
        &self,
        request: ClientRequestKind,
        key: Option<&str>,
    ) -> Result<Value, AskError> {
        let ask = request.ask();
        if !self.link.supports_request(&request) {
            self.link.refused(needed_by(&request));
            return Err(AskError::NotSupported { ask });
        }
        let waited = self.ask_timeout;
        match tokio::time::timeout(waited, self.link.request(request, key)).await {
            Ok(answer) => answer,
            Err(_) => Err(AskError::TimedOut { ask, waited }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, serde::Deserialize)]
    struct Form {
        #[allow(dead_code)]
        seats: u32,
    }

    #[test]
    fn an_unreadable_answer_tells_the_model_no_decoder_text() {
        let answers = [
            json!({"action": "accept", "content": {"seats": "many"}}),
            json!({"action": 42}),
        ];
        for answer in answers {
            let error = form_answer::<Form>(answer).expect_err("the answer does not fit");
            let text = ToolError::from(error).message().to_owned();
            assert!(text.starts_with("The client could not answer"), "{text}");
            for internal in ["invalid type", "expected", "line", "column", "u32"] {
                assert!(
                    !text.contains(internal),
                    "{internal:?} reached the model: {text}"
                );
            }
        }
        let error = roots(json!({"roots": "none"})).expect_err("roots are a list");
        assert!(!ToolError::from(error).message().contains("invalid type"));
    }
}
