//! How a `tools/call` reaches the client that sent it, whichever way the request came: the
//! link its handler's asks go through (`client`), and, from MCP 2026-07-28, the round they end
//! and the `requestState` it is sealed with (`rounds`). A retried call's state is checked,
//! and spent, before anything runs.

// Logging is deprecated by SEP-2577 in rmcp; it is still served.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, InputRequests, InputRequiredResult, InputResponses, LoggingLevel,
    ProtocolVersion,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Map, Value};

use crate::tool::{Caller, ClientAccess};

use super::client::{Round, RoundLink, SessionLink, UNSET_LEVEL};
use super::core::Server;
use super::request::boxed;
use super::rounds::{Answers, Given, binding, question};

/// The way a call reaches its client.
#[derive(Default)]
pub(crate) struct Reach {
    pub(crate) client: Option<ClientAccess>,
    pub(crate) round: Option<Arc<Round>>,
    /// From 2026-07-28: the answers the request carried (those its state kept too), which a
    /// call that becomes a task runs with.
    pub(crate) answers: Answers,
    /// From 2026-07-28: what the call's next state keeps.
    sealed: Option<Sealed>,
}

impl Reach {
    /// What a handler of this 2026-07-28 call asked of its client that the request did not
    /// declare (the call then answers -32021).
    pub(crate) fn missing(&self) -> Option<ClientCapabilities> {
        self.round.as_ref()?.missing()
    }
}

/// What binds a 2026-07-28 call's rounds to it.
struct Sealed {
    bound: Vec<u8>,
}

/// What a request says of its client, as a transport read it.
pub(crate) struct Asker<'a> {
    /// The tool called, and its arguments as sent.
    pub(crate) tool: &'a str,
    pub(crate) arguments: Option<&'a Map<String, Value>>,
    /// The protocol version of the request (its own, or its session's).
    pub(crate) version: Option<ProtocolVersion>,
    /// What the client declared it can be asked.
    pub(crate) capabilities: Option<ClientCapabilities>,
    /// The peer its notifications and (up to 2025-11-25) its requests go through, and whether
    /// requests can reach the client that way (a session, not stateless HTTP).
    pub(crate) peer: Option<Peer<RoleServer>>,
    pub(crate) back_channel: bool,
    /// The level the request asks log messages at (2026-07-28).
    pub(crate) log_level: Option<LoggingLevel>,
    /// The answers and state of a retried 2026-07-28 call.
    pub(crate) answers: Option<InputResponses>,
    pub(crate) state: Option<&'a str>,
    pub(crate) caller: Option<&'a Caller>,
}

impl Server {
    /// How the call `asker` describes reaches its client; the refusal (a JSON-RPC error) of a
    /// retried call whose state cannot carry it on. Answers sent without a state are this
    /// run's answers, bound to no earlier question.
    #[allow(clippy::manual_async_fn)] // an `async fn` keeps its arguments twice: rust#62958
    pub(crate) fn reach(&self, asker: Asker<'_>) -> impl Future<Output = Result<Reach, ErrorData>> {
        async move {
            let inner = &self.inner;
            let capabilities = asker.capabilities.unwrap_or_default();
            let rounds = asker
                .version
                .as_ref()
                .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
            if rounds {
                let bound = binding(
                    &inner.info.name,
                    asker.tool,
                    asker.arguments,
                    asker.caller.map(Caller::subject),
                );
                let answers: Answers = match (asker.state, asker.answers) {
                    (None, responses) => (responses.unwrap_or_default().into_iter())
                        .map(|(key, answer)| (key, Given::unbound(answer)))
                        .collect(),
                    (Some(state), responses) => {
                        let responses = responses.unwrap_or_default();
                        // Boxed: a retried round is rare, and its future would make every
                        // call's larger.
                        match boxed(|| inner.rounds.open(state, &bound, responses)).await {
                            Ok(opened) => opened.answers,
                            Err(refused) => return Err(refused.into_error()),
                        }
                    }
                };
                let link =
                    RoundLink::new(answers.clone(), capabilities, asker.peer, asker.log_level);
                let round = link.round();
                return Ok(Reach {
                    answers,
                    client: Some(ClientAccess {
                        link: Arc::new(link),
                        ask_timeout: inner.ask_timeout,
                    }),
                    round: Some(round),
                    sealed: Some(Sealed { bound }),
                });
            }
            let (Some(peer), true) = (asker.peer, asker.back_channel) else {
                return Ok(Reach::default());
            };
            let level = Some(inner.levels.of(&peer).unwrap_or(UNSET_LEVEL));
            let link = SessionLink::new(peer, capabilities, level);
            Ok(Reach {
                client: Some(ClientAccess {
                    link: Arc::new(link),
                    ask_timeout: inner.ask_timeout,
                }),
                ..Reach::default()
            })
        }
    }

    /// The answer of a round that ended with `asks`: `input_required`, with the state the
    /// client sends back with its answers, keeping the answers this run used, each bound to
    /// the question it answered.
    pub(crate) fn input_required(&self, reach: &Reach, asks: InputRequests) -> InputRequiredResult {
        let state = (reach.sealed.as_ref()).map(|sealed| {
            // Each question's digest as made when it was asked (a source's asks, made
            // elsewhere, are digested here).
            let mut known = (reach.round.as_ref())
                .map(|round| round.questions())
                .unwrap_or_default();
            let asked = (asks.iter())
                .map(|(key, request)| {
                    let digest = known.remove(key);
                    (key.clone(), digest.unwrap_or_else(|| question(request)))
                })
                .collect();
            let used = (reach.round.as_ref())
                .map(|round| round.used())
                .unwrap_or_default();
            self.inner.rounds.seal(&sealed.bound, used, asked)
        });
        InputRequiredResult::new(Some(asks), state)
    }
}
