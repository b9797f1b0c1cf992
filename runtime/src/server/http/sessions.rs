//! The sessions layer (a server with sessions): at most `max_sessions` live at once (an
//! `initialize` that would open one more is answered `503` with `Retry-After`), and one request
//! per id in flight in a session (a second is refused `400`: rmcp routes answers by id, so the
//! first's answer would be lost). A request's id stays taken until its answer is written or
//! dropped.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use http::{HeaderValue, Request, StatusCode, header};
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower_service::Service;

use super::body::{Incoming, ReadBody};
use super::next::{self, Guarding, Inner, Next};
use super::reply::{Reply, json_rpc};
use crate::server::methods::cut;

/// Seconds a client refused a session waits before it tries again.
const SESSION_RETRY_AFTER: &str = "10";

/// A request of a session: the session's id and the request's.
type SessionRequest = (Arc<str>, RequestId);

/// What the sessions layer keeps.
pub(crate) struct Sessions {
    /// rmcp's sessions, to count.
    pub(crate) manager: Arc<LocalSessionManager>,
    pub(crate) max_sessions: usize,
    /// Requests of each session whose answers are not yet written (foldhash, seeded per
    /// server: a client's ids cannot be chosen to collide).
    in_flight: Mutex<foldhash::HashSet<SessionRequest>>,
}

impl Sessions {
    pub(crate) fn new(manager: Arc<LocalSessionManager>, max_sessions: usize) -> Self {
        Sessions {
            manager,
            max_sessions,
            in_flight: Mutex::default(),
        }
    }
}

/// A request's entry among those in flight, removed when its answer is written or dropped.
pub(crate) struct InFlight {
    sessions: Arc<Sessions>,
    key: SessionRequest,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        (self.sessions.in_flight.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

/// The sessions layer over `S`.
#[derive(Clone)]
pub(crate) struct SessionLimits<S> {
    pub(crate) inner: S,
    pub(crate) sessions: Arc<Sessions>,
}

impl<S> Service<Request<ReadBody>> for SessionLimits<S>
where
    S: Inner<Request<ReadBody>>,
{
    type Response = Reply;
    type Error = Infallible;
    type Future = Guarding<S::Future, InFlight>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReadBody>) -> Self::Future {
        let session = request.headers().get(&super::headers::SESSION_ID);
        let incoming = request.extensions().get::<Incoming>();
        let initialize = incoming.is_some_and(|i| i.get().initialize);
        // A request outside any session that opens none (every one of a stateless server)
        // is no business of this layer.
        if session.is_none() && !initialize {
            return Guarding::bare(Next::on(self.inner.call(request)));
        }
        let id = incoming.and_then(|i| i.get().id.clone());
        let Some(session) = session else {
            return Guarding::bare(self.open(request, id));
        };
        let session = session.to_str().ok().map(Arc::<str>::from);
        match (session, id) {
            (Some(session), Some(id)) => match self.sessions.enter(session, id) {
                Ok(in_flight) => Guarding::new(Next::on(self.inner.call(request)), in_flight),
                Err(refused) => Guarding::bare(Next::now(*refused)),
            },
            _ => Guarding::bare(Next::on(self.inner.call(request))),
        }
    }
}

impl<S> SessionLimits<S>
where
    S: Inner<Request<ReadBody>>,
{
    /// An `initialize` outside any session: handed on while the server has room for one more
    /// session, else refused. (Out of line: rare beside the requests within a session.)
    #[cold]
    #[inline(never)]
    fn open(&self, request: Request<ReadBody>, id: Option<RequestId>) -> Next<S::Future> {
        let inner = self.inner.clone();
        let sessions = Arc::clone(&self.sessions);
        Next::own(async move {
            let live = sessions.manager.sessions.read().await.len();
            if live >= sessions.max_sessions {
                return sessions.busy(id);
            }
            next::call(inner, request).await
        })
    }
}

impl Sessions {
    /// Takes the place of request `id` of `session` among those in flight; the refusal when one
    /// with that id is in flight already.
    fn enter(self: &Arc<Self>, session: Arc<str>, id: RequestId) -> Result<InFlight, Box<Reply>> {
        let key = (session, id);
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !in_flight.insert(key.clone()) {
            let id = key.1;
            let error = ErrorData::invalid_request(
                format!(
                    "Invalid request: id {} is already used by a request in flight in this session",
                    cut(&id.to_string())
                ),
                None,
            );
            let message = JsonRpcMessage::error(error, Some(id));
            return Err(Box::new(json_rpc(StatusCode::BAD_REQUEST, &message)));
        }
        Ok(InFlight {
            sessions: Arc::clone(self),
            key,
        })
    }

    /// `503` for an `initialize` that would open a session past the cap.
    fn busy(&self, id: Option<RequestId>) -> Reply {
        let error = ErrorData::new(
            ErrorCode(-32000),
            format!(
                "Server busy: this server holds at most {} sessions at once. Retry later, or end a session you no longer use (DELETE).",
                self.max_sessions
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::http::body::Parsed;
    use http_body_util::{BodyExt, Full};
    use tower::ServiceExt;

    fn request(session: Option<&'static str>, parsed: Parsed) -> Request<ReadBody> {
        let mut request = Request::post("/mcp");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let mut request = request.body(ReadBody::empty()).unwrap();
        let incoming = Incoming::new(parsed);
        request.extensions_mut().insert(incoming);
        request
    }

    fn call(id: i64) -> Parsed {
        Parsed {
            id: Some(RequestId::Number(id)),
            ..Parsed::default()
        }
    }

    /// An id is taken while its answer is not written; another session's same id is not the
    /// same request.
    #[tokio::test]
    async fn an_id_in_flight_in_a_session_is_refused() {
        let ok = tower::service_fn(|_: Request<ReadBody>| async {
            Ok::<_, Infallible>(Reply::new(Full::default().boxed()))
        });
        let sessions = Arc::new(Sessions::new(Arc::default(), 1));
        let layer = SessionLimits {
            inner: ok,
            sessions,
        };
        let first = layer
            .clone()
            .oneshot(request(Some("a"), call(1)))
            .await
            .unwrap();
        let again = layer
            .clone()
            .oneshot(request(Some("a"), call(1)))
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::BAD_REQUEST);
        let other = layer
            .clone()
            .oneshot(request(Some("b"), call(1)))
            .await
            .unwrap();
        assert_eq!(other.status(), StatusCode::OK);
        drop(first);
        let after = layer
            .clone()
            .oneshot(request(Some("a"), call(1)))
            .await
            .unwrap();
        assert_eq!(after.status(), StatusCode::OK);
        // No session cap reached without sessions: initialize passes.
        let initialize = Parsed {
            initialize: true,
            ..call(2)
        };
        let opened = layer.oneshot(request(None, initialize)).await.unwrap();
        assert_eq!(opened.status(), StatusCode::OK);
    }
}
