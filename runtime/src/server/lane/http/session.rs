//! The fast lane in a session (a server with sessions, `HttpOptions::fast_path`): a plain
//! request of a live session whose headers rmcp's service would take as they are
//! (`rules::PlainHeaders::session`) is answered here with the events rmcp would send
//! (`200`, `text/event-stream`, a priming event then the answer, the same JSON), in one body,
//! without rmcp's message, its session worker, the request's channel and task, or a stream
//! written event by event.
//!
//! A session is taken once rmcp has opened it and the client has said `initialized` (the
//! server is told then, with the session's peer: [`LaneSessions::started`]) and for as long as
//! rmcp still holds it (checked on every request, as rmcp checks it). The answer is shaped for
//! the version the session negotiated. A call is taken only when nothing in it can ask the
//! client (the client declared neither elicitation, sampling nor roots, and the call asks for
//! no progress): rmcp sends such asks on the request's own stream, which this lane does not
//! hold. The lane's requests never reach rmcp's session, which ends a session it hears nothing
//! of for its keep-alive: the lane tells it the client is there (at most every 5 s, and every
//! quarter of the keep-alive). A call of the lane is cancelled by the session's `notifications/cancelled` naming it
//! (its answer then is the priming event alone), and stopped if its client goes away. The
//! events' ids (`0/N`, `1/N`) count from 2^63 so that they never name one of rmcp's
//! streams: a client resuming one is told it is over, as for a stream rmcp has forgotten.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, Full};
use rmcp::model::{ClientCapabilities, Extensions, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::server::core::Server;
use crate::server::http::reply::Reply;
use crate::server::http::{SessionIds, Sessions, refused};
use crate::server::lane::answer::PlainClient;
use crate::server::lane::read::PlainRequest;
use crate::server::lane::rules::Shape;

/// What the lane needs of the server with sessions.
pub(crate) struct SessionLane {
    pub(crate) manager: Arc<LocalSessionManager>,
    /// The ids of the lane's events (`N` of `0/N`), from 2^63 up.
    next: AtomicU64,
    /// The ids in flight in each session, rmcp's requests' and the lane's, with what cancels
    /// the lane's (`notifications/cancelled`).
    ids: Arc<SessionIds>,
}

impl SessionLane {
    pub(crate) fn new(sessions: &Sessions) -> Self {
        SessionLane {
            manager: Arc::clone(&sessions.local),
            next: AtomicU64::new(1 << 63),
            ids: Arc::clone(&sessions.ids),
        }
    }

    /// A `notifications/cancelled` of the session `headers` name: cancels the lane's request
    /// it names, if it runs.
    pub(crate) fn cancel(&self, headers: &http::HeaderMap, id: &RequestId) {
        let Some(session) = headers
            .get(&crate::server::http::SESSION_ID)
            .and_then(|v| v.to_str().ok())
        else {
            return;
        };
        self.ids.cancel(session, id);
    }

    /// The session's peer and the shape of its answers, when the lane may answer `request`
    /// in session `id`: rmcp holds the session, its client said `initialized`, and nothing
    /// in the request can ask the client.
    pub(crate) async fn taken(
        &self,
        server: &Server,
        id: &str,
        request: &PlainRequest<'_>,
    ) -> Option<(Peer<RoleServer>, Shape)> {
        let keep_alive = self.manager.session_config.keep_alive;
        let every = keep_alive.map_or(Duration::from_secs(5), |k| {
            (k / 4).min(Duration::from_secs(5))
        });
        let (peer, due) = server.inner.lane.sessions.peer(id, every)?;
        let info = peer.peer_info()?;
        if matches!(request, PlainRequest::Call(..)) && can_be_asked(&info.capabilities) {
            return None;
        }
        // As rmcp checks it (`has_session`): a session it closed or forgot is its to answer.
        let session = self.manager.sessions.read().await.get(id).cloned()?;
        if due {
            // Any event of the session's worker restarts its keep-alive: closing a channel it
            // never had (the lane's numbers) is one that changes nothing else.
            // (Boxed: due once in seconds, its future would make every call's larger.)
            Box::pin(session.close_request_wise_channel(u64::MAX))
                .await
                .ok()?;
        }
        Some((peer, Shape::of(&info.protocol_version)))
    }

    /// Answers `request` in the session of `peer`, as rmcp's session would: its answer as the
    /// second event of a stream whose first primes the client's retry. A request whose id one
    /// in flight in the session holds is refused `400`.
    #[allow(clippy::manual_async_fn)] // an `async fn` keeps its arguments twice: rust#62958
    pub(crate) fn answer(
        &self,
        server: &Server,
        session: Arc<str>,
        request: PlainRequest<'static>,
        peer: Peer<RoleServer>,
        shape: Shape,
        extensions: Extensions,
    ) -> impl Future<Output = Reply> {
        async move {
            let cancelled = CancellationToken::new();
            let id = request.id().clone();
            let _taken = match self.ids.take(session, id.clone(), Some(cancelled.clone())) {
                Ok(taken) => taken,
                Err(error) => return refused(error, id),
            };
            let client = PlainClient::Session(peer);
            let answer = server
                .answer_plain(request, cancelled, shape, None, extensions, client)
                .await;
            let stream = self.next.fetch_add(1, Ordering::Relaxed);
            let retry = self.manager.session_config.sse_retry;
            events(stream, retry, answer.as_deref())
        }
    }
}

/// Whether a client declared anything a call could ask it (rmcp would send the ask on the
/// call's own stream).
fn can_be_asked(capabilities: &ClientCapabilities) -> bool {
    capabilities.elicitation.is_some()
        || capabilities.sampling.is_some()
        || capabilities.roots.is_some()
}

/// The stream rmcp's session writes for a request (`sse_stream_response`): a priming event
/// (`retry`, when the session sets one) and the answer, each with its id, as one body.
fn events(stream: u64, retry: Option<std::time::Duration>, answer: Option<&[u8]>) -> Reply {
    let mut body = Vec::with_capacity(64 + answer.map_or(0, <[u8]>::len));
    let mut index = 0;
    if let Some(retry) = retry {
        body.extend_from_slice(
            format!("data: \nid: 0/{stream}\nretry: {}\n\n", retry.as_millis()).as_bytes(),
        );
        index = 1;
    }
    if let Some(answer) = answer {
        body.extend_from_slice(b"data: ");
        body.extend_from_slice(answer);
        body.extend_from_slice(format!("\nid: {index}/{stream}\n\n").as_bytes());
    }
    event_stream(body)
}

/// The stream rmcp's service writes for a request it serves without a session on a server with
/// sessions (its `stateless_sse_response`, without an event store): the answer alone, without
/// an id; nothing for no answer.
pub(super) fn event(answer: &[u8]) -> Reply {
    let mut body = Vec::with_capacity(8 + answer.len());
    if !answer.is_empty() {
        body.extend_from_slice(b"data: ");
        body.extend_from_slice(answer);
        body.extend_from_slice(b"\n\n");
    }
    event_stream(body)
}

/// `body` as an event stream, with the headers rmcp's `sse_stream_response` gives one.
fn event_stream(body: Vec<u8>) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from(body)).boxed());
    let headers = reply.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_events_are_rmcps() {
        let reply = events(
            7,
            Some(std::time::Duration::from_secs(3)),
            Some(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
        );
        assert_eq!(reply.headers()["content-type"], "text/event-stream");
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(
            body,
            "data: \nid: 0/7\nretry: 3000\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\nid: 1/7\n\n"
        );
    }
}
