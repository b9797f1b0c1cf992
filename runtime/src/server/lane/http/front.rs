//! The fast lane's HTTP step (`HttpOptions::fast_path`): a plain request (`lane::read`)
//! whose headers are ones rmcp's service would accept as they are (`lane::rules`) is answered
//! here, with the answer rmcp would give: on a stateless server `200`, `application/json`, the
//! same bytes, without rmcp building its message, a one-shot service and its task (on a server
//! with sessions, for a request carrying its 2026-07-28 lifecycle, the same bytes as one event);
//! in a session, the same events as rmcp's session would send (`session`).
//! The core sees the same request facts as on rmcp's path: the request's head
//! (`http::request::Parts`, with the verified caller), for middleware and rate-limit keys alike.
//!
//! Whatever it does not answer goes to rmcp as it came (rmcp keeps the request's head for as
//! long as the request runs; what it parses is its own).

use std::sync::Arc;

use http::Request;

use super::session::SessionLane;
use crate::server::core::Server;
use crate::server::http::ParsePlace;
use crate::server::http::body::{Lifecycle, Parsed, ReadBody};
use crate::server::http::reply::{Reply, answered};
use crate::server::lane::answer::PlainClient;
use crate::server::lane::read::PlainRequest;
use crate::server::lane::rules::{Lifecycles, PlainHeaders, Shape};

/// The fast path's server, its rules, and its sessions (`None`: a stateless server).
pub(crate) struct Lane {
    pub(crate) server: Server,
    pub(crate) headers: PlainHeaders,
    pub(crate) lifecycles: Lifecycles,
    pub(crate) sessions: Option<SessionLane>,
}

impl Lane {
    /// Cancels the lane's call a `notifications/cancelled` of a session names (`parsed`, the
    /// body step's reading of it): a call of the lane is not rmcp's to cancel (rmcp, which
    /// is handed the notification too, cancels its own).
    pub(crate) fn cancel(&self, http: &Request<ReadBody>, parsed: &Parsed) {
        if let (Some(cancels), Some(sessions)) = (&parsed.cancels, &self.sessions) {
            sessions.cancel(http.headers(), cancels);
        }
    }

    /// The answer to a plain request (`plain`, the body step's reading of it) whose headers
    /// rmcp would take as they are; any other request is given back as it came, for rmcp.
    pub(crate) fn answer(
        &self,
        http: Request<ReadBody>,
        plain: Box<(PlainRequest<'static>, Option<Lifecycle>)>,
    ) -> impl Future<Output = Result<Reply, Request<ReadBody>>> {
        // Taken apart before the future is made, which then holds each part once (an `async
        // fn` would keep its arguments besides: rust-lang/rust#62958).
        let (parts, body) = http.into_parts();
        let (request, lifecycle) = *plain;
        async move {
            let (server, headers) = (&self.server, &self.headers);
            // A request carrying its 2026-07-28 lifecycle has no session: rmcp serves it as a
            // stateless server does, whether the server has sessions or not.
            if let Some(sessions) = &self.sessions
                && lifecycle.is_none()
            {
                // What only finds the session is scoped to it: a value borrowed in a future
                // keeps its room there until its scope ends.
                let taken = {
                    let asked = request.asked_with(None);
                    match headers.session(&asked, &parts.headers) {
                        Some(id) => (sessions.taken(server, id, &request).await)
                            .map(|taken| (taken, Arc::<str>::from(id))),
                        None => None,
                    }
                };
                let Some(((peer, shape), id)) = taken else {
                    return Err(Request::from_parts(parts, body));
                };
                let extensions = handed(parts, body);
                let reply = sessions.answer(server, id, request, peer, shape, extensions);
                return Ok(reply.await);
            }
            let shape = {
                let inline =
                    (lifecycle.as_ref()).map(|l| (l.version.as_str(), l.capabilities.is_some()));
                headers.shape(&request.asked_with(inline), &parts.headers)
            };
            let supported =
                (lifecycle.as_ref()).is_none_or(|l| self.lifecycles.supports(&l.version));
            let (Some(shape), true) = (shape, supported) else {
                return Err(Request::from_parts(parts, body));
            };
            // A retried round is taken only as a 2026-07-28 call, which reaches its client by
            // rounds here as on rmcp's path.
            let rounds = matches!(shape, Shape::Current) && lifecycle.is_some();
            if request.retried() && !rounds {
                return Err(Request::from_parts(parts, body));
            }
            let extensions = handed(parts, body);
            let cancelled = tokio_util::sync::CancellationToken::new();
            // From 2026-07-28 a call reaches its client by rounds; before, stateless HTTP has no
            // way back to it.
            let client = match (shape, lifecycle) {
                (Shape::Current, Some(lifecycle)) => PlainClient::Round(lifecycle.capabilities),
                _ => PlainClient::None,
            };
            let answer = server
                .answer_plain(request, cancelled, shape, None, extensions, client)
                .await
                .unwrap_or_default();
            let status = match shape {
                Shape::Current => status_of(&answer),
                _ => http::StatusCode::OK,
            };
            // With sessions rmcp's `json_response` is off: a stateless answer of `200` is an
            // event stream of that one answer (a refusal stays JSON, with its status).
            let mut reply = match (&self.sessions, status) {
                (Some(_), http::StatusCode::OK) => super::session::event(&answer),
                _ => answered(answer),
            };
            *reply.status_mut() = status;
            Ok(reply)
        }
    }
}

/// What the core is handed of a request the lane answers: its head, as rmcp hands it. The
/// body is read: its parse place goes back before the call runs.
fn handed(mut parts: http::request::Parts, body: ReadBody) -> rmcp::model::Extensions {
    if let Some(place) = parts.extensions.remove::<ParsePlace>() {
        place.release();
    }
    drop(body);
    let mut extensions = rmcp::model::Extensions::new();
    extensions.insert(parts);
    extensions
}

/// The HTTP status rmcp gives a 2026-07-28 answer (its `jsonrpc_http_status`): 400 for the
/// lifecycle's errors (an unsupported version, a capability the request did not declare, a
/// header that disagrees with the body), 404 for a method no one serves, 200 otherwise.
fn status_of(answer: &[u8]) -> http::StatusCode {
    use rmcp::model::ErrorCode;

    #[derive(serde::Deserialize)]
    struct Code {
        code: i32,
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        error: Option<Code>,
    }
    // A result is by far the most common answer: only an error is read again. The searcher
    // is built once: building one costs more than most searches.
    static ERROR: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(br#""error":"#));
    if ERROR.find(answer).is_none() {
        return http::StatusCode::OK;
    }
    let code = serde_json::from_slice::<Answer>(answer)
        .ok()
        .and_then(|a| a.error)
        .map(|e| ErrorCode(e.code));
    match code {
        Some(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH,
        ) => http::StatusCode::BAD_REQUEST,
        Some(ErrorCode::METHOD_NOT_FOUND) => http::StatusCode::NOT_FOUND,
        _ => http::StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    use super::status_of;

    #[test]
    fn answers_get_the_status_rmcp_gives_them() {
        let error = |code: i32| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"}}}}"#)
        };
        assert_eq!(
            status_of(error(-32021).as_bytes()),
            http::StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_of(error(-32601).as_bytes()),
            http::StatusCode::NOT_FOUND
        );
        assert_eq!(status_of(error(-32602).as_bytes()), http::StatusCode::OK);
        let result =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""error":"}]}}"#;
        assert_eq!(status_of(result), http::StatusCode::OK);
    }
}
