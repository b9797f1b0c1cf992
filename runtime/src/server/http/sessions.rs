//! A server's sessions: rmcp's own, with the two rules rmcp leaves to us.
//!
//! - [`Sessions`], the session manager rmcp's service serves with: rmcp's `LocalSessionManager`,
//!   plus one request per id in flight in a session. rmcp routes a session's answers by request
//!   id, so a second request with the id of one in flight would take the first's answer; it is
//!   answered -32600 instead, as the one event of its stream. The rule reads the message rmcp
//!   has parsed (`SessionManager::create_stream`): nothing before rmcp reads a session's
//!   requests for their ids. The fast lane's calls take their ids in the same table
//!   ([`SessionIds`]), refused `400` by the lane.
//! - [`SessionCap`]: at most `max_sessions` live at once (an `initialize` that would
//!   open one more is answered `503` with `Retry-After`).
//!
//! A request's id stays taken until its stream ends or is dropped (its answer written, or its
//! client gone).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_core::Stream;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use tokio_util::sync::CancellationToken;

use super::body::Parsed;
use super::reply::{Reply, json_rpc};
use crate::server::methods::id_in_flight;
use crate::tool::BoxFuture;

/// Seconds a client refused a session waits before it tries again.
const SESSION_RETRY_AFTER: &str = "10";

/// A request of a session: the session's id and the request's.
type SessionRequest = (Arc<str>, RequestId);

/// The ids of the requests in flight in each session, and what cancels those of the fast lane
/// (`None`: a request of rmcp's, which rmcp cancels).
#[derive(Default)]
pub(crate) struct SessionIds {
    /// foldhash, seeded per server: a client's ids cannot be chosen to collide.
    taken: Mutex<foldhash::HashMap<SessionRequest, Option<CancellationToken>>>,
}

/// A request's id, taken until this is dropped.
pub(crate) struct IdTaken {
    ids: Arc<SessionIds>,
    key: SessionRequest,
}

impl Drop for IdTaken {
    fn drop(&mut self) {
        (self.ids.taken.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

impl SessionIds {
    /// Takes request `id` of `session`; the refusal when a request with that id is in flight.
    pub(crate) fn take(
        self: &Arc<Self>,
        session: Arc<str>,
        id: RequestId,
        cancel: Option<CancellationToken>,
    ) -> Result<IdTaken, ErrorData> {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        match taken.entry((session, id)) {
            std::collections::hash_map::Entry::Occupied(entry) => Err(in_flight(&entry.key().1)),
            std::collections::hash_map::Entry::Vacant(entry) => {
                let key = entry.key().clone();
                entry.insert(cancel);
                Ok(IdTaken {
                    ids: Arc::clone(self),
                    key,
                })
            }
        }
    }

    /// Cancels the fast lane's request `id` of `session`, if it runs.
    pub(crate) fn cancel(&self, session: &str, id: &RequestId) {
        let taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(Some(cancel)) = taken.get(&(Arc::from(session), id.clone())) {
            cancel.cancel();
        }
    }
}

/// The refusal of a request whose id a request in flight in its session holds.
fn in_flight(id: &RequestId) -> ErrorData {
    id_in_flight(id, " in this session")
}

/// The refusal as the lane answers it: `400` with the JSON-RPC error.
pub(crate) fn refused(error: ErrorData, id: RequestId) -> Reply {
    json_rpc(
        StatusCode::BAD_REQUEST,
        &JsonRpcMessage::error(error, Some(id)),
    )
}

/// rmcp's sessions (`local`), with one request per id in flight in each (`ids`).
pub(crate) struct Sessions {
    pub(crate) local: Arc<LocalSessionManager>,
    pub(crate) ids: Arc<SessionIds>,
}

impl Sessions {
    pub(crate) fn new(local: Arc<LocalSessionManager>) -> Self {
        Sessions {
            local,
            ids: Arc::default(),
        }
    }
}

type Local = LocalSessionManager;

impl SessionManager for Sessions {
    type Error = <Local as SessionManager>::Error;
    type Transport = <Local as SessionManager>::Transport;

    fn create_session(
        &self,
    ) -> impl Future<Output = Result<(SessionId, Self::Transport), Self::Error>> + Send {
        self.local.create_session()
    }

    fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<rmcp::model::ServerJsonRpcMessage, Self::Error>> + Send {
        self.local.initialize_session(id, message)
    }

    fn has_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        self.local.has_session(id)
    }

    fn close_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.local.close_session(id)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let taken = match &message {
            JsonRpcMessage::Request(request) => {
                match self.ids.take(id.clone(), request.id.clone(), None) {
                    Ok(taken) => Some(taken),
                    Err(error) => {
                        let refusal = JsonRpcMessage::error(error, Some(request.id.clone()));
                        return Ok(Events {
                            events: None,
                            refusal: Some(ServerSseMessage::from_message(refusal)),
                            taken: None,
                        });
                    }
                }
            }
            _ => None,
        };
        let events = self.local.create_stream(id, message).await?;
        Ok(Events {
            events: Some(events),
            refusal: None,
            taken,
        })
    }

    fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.local.accept_message(id, message)
    }

    fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.local.create_standalone_stream(id)
    }

    fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.local.resume(id, last_event_id)
    }

    fn restore_session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<RestoreOutcome<Self::Transport>, Self::Error>> + Send {
        self.local.restore_session(id)
    }

    fn event_store(
        &self,
    ) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.local.event_store()
    }
}

pin_project_lite::pin_project! {
    /// A request's events, its id held until they end; or the one event that refuses it.
    struct Events<S> {
        #[pin]
        events: Option<S>,
        refusal: Option<ServerSseMessage>,
        taken: Option<IdTaken>,
    }
}

impl<S: Stream<Item = ServerSseMessage>> Stream for Events<S> {
    type Item = ServerSseMessage;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ServerSseMessage>> {
        let this = self.project();
        if let Some(refusal) = this.refusal.take() {
            return Poll::Ready(Some(refusal));
        }
        let next = match this.events.as_pin_mut() {
            Some(events) => std::task::ready!(events.poll_next(cx)),
            None => None,
        };
        if next.is_none() {
            // Answered: the id may be used again at once.
            *this.taken = None;
        }
        Poll::Ready(next)
    }
}

/// The cap on live sessions.
pub(crate) struct SessionCap {
    /// rmcp's sessions, to count.
    pub(crate) sessions: Arc<LocalSessionManager>,
    pub(crate) max_sessions: usize,
}

impl SessionCap {
    /// The refusal of an `initialize` outside any session (the one request that opens one)
    /// while the server holds `max_sessions`.
    pub(crate) async fn refusal(
        &self,
        headers: &HeaderMap,
        parsed: Option<&Parsed>,
    ) -> Option<Reply> {
        let initialize = parsed.filter(|p| p.initialize)?;
        if headers.contains_key(&super::headers::SESSION_ID) {
            return None;
        }
        self.full(initialize.id.clone()).await
    }

    /// The refusal when the server holds `max_sessions`. (Out of line: rare beside the
    /// requests within a session.)
    #[cold]
    #[inline(never)]
    fn full(&self, id: Option<RequestId>) -> BoxFuture<'_, Option<Reply>> {
        Box::pin(async move {
            let live = self.sessions.sessions.read().await.len();
            (live >= self.max_sessions).then(|| busy(self.max_sessions, id))
        })
    }
}

/// `503` for an `initialize` that would open a session past the cap.
fn busy(max_sessions: usize, id: Option<RequestId>) -> Reply {
    let error = ErrorData::new(
        ErrorCode(-32000),
        format!(
            "Server busy: this server holds at most {max_sessions} sessions at once. Retry later, or end a session you no longer use (DELETE)."
        ),
        None,
    );
    let mut reply = json_rpc(
        StatusCode::SERVICE_UNAVAILABLE,
        &JsonRpcMessage::error(error, id),
    );
    reply.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(SESSION_RETRY_AFTER),
    );
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id is taken until given up; another session's same id is another request; a lane
    /// call is cancelled through the table.
    #[test]
    fn an_id_in_flight_in_a_session_is_refused() {
        let ids = Arc::new(SessionIds::default());
        let seven = || RequestId::Number(7);
        let first = ids.take("a".into(), seven(), None).expect("free");
        let again = ids.take("a".into(), seven(), None).err().expect("taken");
        assert!(again.message.contains("id 7 is already used"), "{again:?}");
        let other = ids
            .take("b".into(), seven(), None)
            .expect("another session's");
        drop(first);
        let cancel = CancellationToken::new();
        let lane = ids.take("a".into(), seven(), Some(cancel.clone()));
        ids.cancel("a", &seven());
        assert!(cancel.is_cancelled());
        drop((lane, other));
        assert!(ids.taken.lock().unwrap().is_empty());
    }

    /// rmcp's stream of a request holds its id until it ends; a refused one is one event.
    #[tokio::test]
    async fn a_requests_events_hold_its_id_until_they_end() {
        let ids = Arc::new(SessionIds::default());
        let taken = ids.take("a".into(), RequestId::Number(1), None).unwrap();
        let answer = ServerSseMessage::from_message(JsonRpcMessage::error(
            ErrorData::internal_error("x", None),
            Some(RequestId::Number(1)),
        ));
        let mut events = Box::pin(Events {
            events: Some(Iter(vec![answer].into_iter())),
            refusal: None,
            taken: Some(taken),
        });
        let next = std::future::poll_fn(|cx| events.as_mut().poll_next(cx));
        assert!(next.await.is_some());
        assert_eq!(
            ids.taken.lock().unwrap().len(),
            1,
            "held while the answer is out"
        );
        let end = std::future::poll_fn(|cx| events.as_mut().poll_next(cx));
        assert!(end.await.is_none());
        assert!(ids.taken.lock().unwrap().is_empty(), "given up at the end");
        let refusal = ServerSseMessage::default();
        let mut refused = Box::pin(Events::<Iter> {
            events: None,
            refusal: Some(refusal),
            taken: None,
        });
        assert!(
            std::future::poll_fn(|cx| refused.as_mut().poll_next(cx))
                .await
                .is_some()
        );
        assert!(
            std::future::poll_fn(|cx| refused.as_mut().poll_next(cx))
                .await
                .is_none()
        );
    }

    /// A stream of its items, each ready at once.
    struct Iter(std::vec::IntoIter<ServerSseMessage>);

    impl Stream for Iter {
        type Item = ServerSseMessage;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.0.next())
        }
    }

    /// An `initialize` past the cap is refused `503`; requests of a session pass.
    #[tokio::test]
    async fn an_initialize_past_the_cap_is_refused() {
        let initialize = Parsed {
            id: Some(RequestId::Number(1)),
            initialize: true,
            ..Parsed::default()
        };
        let outside = HeaderMap::new();
        let mut within = HeaderMap::new();
        within.insert("mcp-session-id", HeaderValue::from_static("a"));
        let cap = SessionCap {
            sessions: Arc::default(),
            max_sessions: 1,
        };
        assert!(cap.refusal(&outside, Some(&initialize)).await.is_none());
        let full = SessionCap {
            max_sessions: 0,
            ..cap
        };
        let refused = full.refusal(&outside, Some(&initialize)).await.unwrap();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()[header::RETRY_AFTER], SESSION_RETRY_AFTER);
        assert!(full.refusal(&within, Some(&initialize)).await.is_none());
        assert!(
            full.refusal(&outside, Some(&Parsed::default()))
                .await
                .is_none()
        );
        assert!(full.refusal(&outside, None).await.is_none());
    }
}
