//! The way from a call to its client (`tool::ClientLink`), made per request for its protocol
//! era and transport:
//!
//! - [`SessionLink`], up to MCP 2025-11-25: requests on the session's back-channel (rmcp's
//!   `Peer`), answered while the handler waits; log messages at the level the session set with
//!   `logging/setLevel`;
//! - [`RoundLink`], from 2026-07-28 (SEP-2322, no server-to-client requests on the wire): an ask
//!   answered in the request's `inputResponses` (or kept in its state, for the same question)
//!   is answered at once; the first that is not, or whose answer is not of the kind asked, ends
//!   the round, and the call is answered `input_required` with what it asked (`rounds`).
//!
//! Stateless HTTP before 2026-07-28 has no way back to its client: no link, every ask is told
//! it is not supported.

// Logging, sampling and roots are deprecated by SEP-2577 in rmcp; they are still served.
#![allow(deprecated)]

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult,
    InputRequest, InputRequests, ListRootsRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::Notify;

use crate::tool::{Ask, AskError, BoxFuture, ClientLink, ClientRequestKind};

use super::rounds::{Answers, Given, question};

/// At most this many log messages a call sends its client; the rest are dropped.
pub(crate) const MAX_LOGS_PER_CALL: usize = 100;

/// The level a session's handlers log at until its client sets one (`logging/setLevel`):
/// `info`, so that `Context::log` reaches a client that never chose, as a log viewer shows
/// by default, while `debug` needs the client to ask for it. (rmcp marks `logging/setLevel`
/// deprecated: many clients never send it.)
pub(crate) const UNSET_LEVEL: LoggingLevel = LoggingLevel::Info;

/// How severe a level is, least first (RFC 5424's order, as MCP's levels follow it).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The level each session set with `logging/setLevel`, for as long as the session is open.
#[derive(Default)]
pub(crate) struct Levels(Mutex<Vec<(Peer<RoleServer>, LoggingLevel)>>);

/// Whether two peers are the same session (rmcp shares the peer's information between clones).
fn same(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

impl Levels {
    fn lock(&self) -> MutexGuard<'_, Vec<(Peer<RoleServer>, LoggingLevel)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the level `peer`'s session set; forgets sessions that closed.
    pub(crate) fn set(&self, peer: &Peer<RoleServer>, level: LoggingLevel) {
        let mut levels = self.lock();
        levels.retain(|(p, _)| !p.is_transport_closed() && !same(p, peer));
        levels.push((peer.clone(), level));
    }

    /// The level `peer`'s session set, if it did.
    pub(crate) fn of(&self, peer: &Peer<RoleServer>) -> Option<LoggingLevel> {
        let levels = self.lock();
        levels.iter().find(|(p, _)| same(p, peer)).map(|(_, l)| *l)
    }
}

/// Sends `data` at `level` on `peer` when `threshold` lets it through, at most
/// [`MAX_LOGS_PER_CALL`] times (counted in `sent`).
fn send_log(
    peer: &Peer<RoleServer>,
    threshold: Option<LoggingLevel>,
    sent: &AtomicUsize,
    level: LoggingLevel,
    logger: Option<&str>,
    data: Value,
) -> BoxFuture<'static, bool> {
    let allowed = threshold.is_some_and(|threshold| rank(level) >= rank(threshold))
        && sent.fetch_add(1, Ordering::Relaxed) < MAX_LOGS_PER_CALL;
    if !allowed {
        return Box::pin(std::future::ready(false));
    }
    let mut param = LoggingMessageNotificationParam::new(level, super::log_message::bounded(data));
    param.logger = logger.map(str::to_owned);
    let peer = peer.clone();
    // Awaited by the handler: the message is written before the call's answer.
    Box::pin(async move { peer.notify_logging_message(param).await.is_ok() })
}

/// A session's back-channel (up to 2025-11-25).
#[derive(Debug)]
pub(crate) struct SessionLink {
    peer: Peer<RoleServer>,
    capabilities: ClientCapabilities,
    /// The level the session set, when the call began.
    level: Option<LoggingLevel>,
    logged: AtomicUsize,
}

impl SessionLink {
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        capabilities: ClientCapabilities,
        level: Option<LoggingLevel>,
    ) -> Self {
        SessionLink {
            peer,
            capabilities,
            level,
            logged: AtomicUsize::new(0),
        }
    }
}

/// What the client said, as the handler's error: its own error message, or, when no answer
/// came back (the transport closed, say), a sentence that keeps the transport's text in the
/// log (ERRORS.md keeps internals from the model).
fn failed(ask: Ask, error: ServiceError) -> AskError {
    let reason = match error {
        ServiceError::McpError(error) => error.message.into_owned(),
        other => {
            tracing::warn!(capability = ask.capability(), error = %other, "a request to the client failed");
            "the request did not reach the client, or its answer was lost".to_owned()
        }
    };
    AskError::Failed { ask, reason }
}

impl ClientLink for SessionLink {
    fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    fn request(
        &self,
        request: ClientRequestKind,
        _key: Option<&str>,
    ) -> BoxFuture<'_, Result<Value, AskError>> {
        let ask = request.ask();
        Box::pin(async move {
            let to_value = |v: Result<Value, serde_json::Error>| {
                v.map_err(|e| {
                    tracing::warn!(capability = ask.capability(), error = %e, "a request to the client could not be written");
                    AskError::Failed {
                        ask,
                        reason: "the request could not be written".to_owned(),
                    }
                })
            };
            match request {
                ClientRequestKind::Sample(params) => {
                    let answer = self.peer.create_message(params).await;
                    to_value(serde_json::to_value(answer.map_err(|e| failed(ask, e))?))
                }
                ClientRequestKind::Elicit(params) => {
                    let answer = self.peer.create_elicitation(params).await;
                    to_value(serde_json::to_value(answer.map_err(|e| failed(ask, e))?))
                }
                ClientRequestKind::Roots => {
                    let answer = self.peer.list_roots().await;
                    to_value(serde_json::to_value(answer.map_err(|e| failed(ask, e))?))
                }
            }
        })
    }

    fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: Value,
    ) -> BoxFuture<'static, bool> {
        send_log(&self.peer, self.level, &self.logged, level, logger, data)
    }
}

/// One round of a 2026-07-28 call: the answers its request carried, and the asks it could not
/// answer yet.
#[derive(Debug, Default)]
pub(crate) struct Round {
    /// The asks no answer was given for, by key: they end the round.
    pending: Mutex<InputRequests>,
    /// The digest of each of those asks' question (`rounds::question`), by key: the state
    /// that ends the round binds each answer to its question.
    questions: Mutex<BTreeMap<String, String>>,
    /// Woken when the first such ask is made.
    ended: Notify,
    /// What a handler asked that the request did not declare: the call answers -32021.
    missing: Mutex<Option<ClientCapabilities>>,
    /// The answers this run of the handler used, each bound to the question it answered: the
    /// next state keeps them.
    used: Mutex<Answers>,
}

impl Round {
    /// The capabilities a handler needed and the request did not declare, if any.
    pub(crate) fn missing(&self) -> Option<ClientCapabilities> {
        self.missing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Completes once an ask of the round found no answer.
    pub(crate) async fn ended(&self) {
        loop {
            let ended = self.ended.notified();
            if !self
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
            {
                return;
            }
            ended.await;
        }
    }

    /// The asks that ended the round.
    pub(crate) fn asks(&self) -> InputRequests {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The digests of the questions of the asks that ended the round, by key (made as they
    /// were asked, so that ending the round does not make them again).
    pub(crate) fn questions(&self) -> BTreeMap<String, String> {
        std::mem::take(
            &mut *self
                .questions
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// The answers the round used, each bound to its question.
    pub(crate) fn used(&self) -> Answers {
        std::mem::take(&mut *self.used.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A 2026-07-28 call's way to its client: the answers in its request (`inputResponses`), the
/// round it ends when it asks for one that is not there, and its own log messages on the
/// request's stream.
#[derive(Debug)]
pub(crate) struct RoundLink {
    answers: Answers,
    /// Asks made so far in this run of the handler: an unnamed ask's key is its kind and its
    /// place.
    asked: AtomicUsize,
    /// The keys asked so far in this run of the handler: each ask needs its own.
    keys: Mutex<HashSet<String>>,
    round: Arc<Round>,
    capabilities: ClientCapabilities,
    /// Where log messages go (the request's stream), and the level the request asked for.
    peer: Option<Peer<RoleServer>>,
    level: Option<LoggingLevel>,
    logged: AtomicUsize,
}

impl RoundLink {
    pub(crate) fn new(
        answers: Answers,
        capabilities: ClientCapabilities,
        peer: Option<Peer<RoleServer>>,
        level: Option<LoggingLevel>,
    ) -> Self {
        RoundLink {
            answers,
            asked: AtomicUsize::new(0),
            keys: Mutex::default(),
            round: Arc::default(),
            capabilities,
            peer,
            level,
            logged: AtomicUsize::new(0),
        }
    }

    /// The round its asks end.
    pub(crate) fn round(&self) -> Arc<Round> {
        Arc::clone(&self.round)
    }
}

/// The key of the `n`-th ask of a call, of kind `request`, when the handler did not name it:
/// the same in every run of the handler that asks the same things in the same order.
fn key(request: &ClientRequestKind, n: usize) -> String {
    let kind = match request {
        ClientRequestKind::Sample(_) => "sampling",
        ClientRequestKind::Elicit(_) => "elicitation",
        ClientRequestKind::Roots => "roots",
    };
    format!("{kind}-{n}")
}

/// Whether `answer` is of the kind of result `asked` calls for.
fn fits(asked: &InputRequest, answer: &Value) -> bool {
    let answer = answer.clone();
    match asked {
        InputRequest::Elicitation(_) => serde_json::from_value::<ElicitResult>(answer).is_ok(),
        InputRequest::CreateMessage(_) => {
            serde_json::from_value::<CreateMessageResult>(answer).is_ok()
        }
        InputRequest::ListRoots(_) => serde_json::from_value::<ListRootsResult>(answer).is_ok(),
        // A kind this server never asks.
        _ => false,
    }
}

impl ClientLink for RoundLink {
    fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    fn refused(&self, needed: ClientCapabilities) {
        let mut missing = self
            .round
            .missing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let missing = missing.get_or_insert_with(ClientCapabilities::default);
        if needed.sampling.is_some() {
            missing.sampling = needed.sampling;
        }
        if needed.roots.is_some() {
            missing.roots = needed.roots;
        }
        if let Some(needed) = needed.elicitation {
            let elicitation = missing.elicitation.get_or_insert_with(Default::default);
            elicitation.form = elicitation.form.take().or(needed.form);
            elicitation.url = elicitation.url.take().or(needed.url);
        }
    }

    fn request(
        &self,
        request: ClientRequestKind,
        named: Option<&str>,
    ) -> BoxFuture<'_, Result<Value, AskError>> {
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let key = named.map_or_else(|| key(&request, n), str::to_owned);
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if !keys.insert(key.clone()) {
            tracing::error!(key, "a call asked its client twice under one input key");
            let reason = format!(
                "the server asked twice under the input key {key:?} in one call \
                 (each ask of a call needs its own key)"
            );
            let ask = request.ask();
            return Box::pin(std::future::ready(Err(AskError::Failed { ask, reason })));
        }
        drop(keys);
        let asked = match request {
            ClientRequestKind::Sample(params) => {
                InputRequest::CreateMessage(CreateMessageRequest::new(params))
            }
            ClientRequestKind::Elicit(params) => {
                InputRequest::Elicitation(ElicitRequest::new(params))
            }
            ClientRequestKind::Roots => InputRequest::ListRoots(ListRootsRequest::default()),
        };
        // An answer counts for the question it was given to (one sent without a state, for
        // whatever is asked under its key), and only when it is of the kind asked: otherwise
        // the question is asked again.
        let asking = question(&asked);
        if let Some(given) = self.answers.get(&key)
            && given.question.as_ref().is_none_or(|q| *q == asking)
            && fits(&asked, &given.answer)
        {
            let answer = given.answer.clone();
            let mut used = self
                .round
                .used
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            used.insert(key, Given::to(asking, answer.clone()));
            return Box::pin(std::future::ready(Ok(answer)));
        }
        let mut pending = self
            .round
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        pending.insert(key.clone(), asked);
        drop(pending);
        (self
            .round
            .questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
        .insert(key, asking);
        self.round.ended.notify_one();
        // The round is over: the pipeline drops the handler before this could complete.
        Box::pin(std::future::pending())
    }

    fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: Value,
    ) -> BoxFuture<'static, bool> {
        match &self.peer {
            Some(peer) => send_log(peer, self.level, &self.logged, level, logger, data),
            None => Box::pin(std::future::ready(false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test(flavor = "current_thread")]
    async fn a_named_ask_is_keyed_by_its_name_an_unnamed_one_by_its_kind_and_place() {
        let answered = json!({"roots": []});
        let answers =
            Answers::from([("client_roots".to_owned(), Given::unbound(answered.clone()))]);
        let link = RoundLink::new(answers, ClientCapabilities::default(), None, None);
        let round = link.round();
        let roots = link.request(ClientRequestKind::Roots, Some("client_roots"));
        assert_eq!(roots.await.unwrap(), answered);
        // Unanswered, the next two end the round, each under its key.
        drop(link.request(ClientRequestKind::Roots, None));
        drop(link.request(ClientRequestKind::Roots, Some("user_roots")));
        let asked = round.asks();
        let keys: Vec<&String> = asked.keys().collect();
        assert_eq!(keys, ["roots-2", "user_roots"]);
        // Each unanswered ask's question, digested as it was asked (the state binds the
        // answers to them), and only theirs: the answered one is in the answers used.
        let digests: BTreeMap<String, String> = (asked.iter())
            .map(|(key, request)| (key.clone(), question(request)))
            .collect();
        assert_eq!(round.questions(), digests);
        assert!(round.used().contains_key("client_roots"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_second_ask_under_one_key_is_refused() {
        let link = RoundLink::new(Answers::new(), ClientCapabilities::default(), None, None);
        drop(link.request(ClientRequestKind::Roots, Some("client_roots")));
        let again = link.request(ClientRequestKind::Roots, Some("client_roots"));
        let Err(AskError::Failed { ask, reason }) = again.await else {
            panic!("a second ask under one key is not sent");
        };
        assert_eq!(ask, Ask::Roots);
        assert!(reason.contains("\"client_roots\""), "{reason}");
        assert_eq!(link.round().asks().len(), 1);
    }
}
