//! The fast path, one optional layer (a stateless server with `fast_path`): a plain request
//! (`server::plain`) whose headers are ones rmcp's stateless service would accept as they are
//! (`rmcp_rules`) is answered here, with the answer rmcp would give (`200`, `application/json`,
//! the same bytes), without rmcp building its message, a one-shot service and its task. The
//! core sees the same request facts as on rmcp's path: the request's head
//! (`http::request::Parts`, with the verified caller), for middleware and rate-limit keys alike.
//!
//! Whatever it does not answer goes to rmcp, without the facts the body layer left (rmcp keeps
//! the request's head for as long as the request runs; what it parses is its own).

use std::convert::Infallible;
use std::task::{Context, Poll};

use http::Request;
use tower_service::Service;

use super::body::{Incoming, ReadBody};
use super::handler::ParsePlace;
use super::next;
use super::reply::{Reply, answered};
use crate::server::core::Server;
use crate::server::dispatch::PlainClient;
use crate::server::rmcp_rules::PlainHeaders;
use crate::server::rmcp_rules::Shape;
use crate::tool::BoxFuture;

/// The fast path over `S`: the server, and what a request's headers must show.
#[derive(Clone)]
pub(crate) struct FastPath<S> {
    pub(crate) inner: S,
    /// `None`: every request goes to `inner`.
    pub(crate) plain: Option<std::sync::Arc<(Server, PlainHeaders)>>,
}

impl<S> Service<Request<ReadBody>> for FastPath<S>
where
    S: Service<Request<ReadBody>, Response = Reply, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Reply;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Reply, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<ReadBody>) -> Self::Future {
        let inner = self.inner.clone();
        let plain = self.plain.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            let incoming = parts.extensions.remove::<Incoming>();
            let taken = incoming.and_then(|incoming| incoming.lock().plain.take());
            if let (Some(plain), Some((request, lifecycle))) = (plain, taken) {
                let (server, headers) = &*plain;
                let inline =
                    (lifecycle.as_ref()).map(|l| (l.version.as_str(), l.capabilities.is_some()));
                let asked = request.asked_with(inline);
                if let Some(shape) = headers.shape(&asked, &parts.headers) {
                    // The body is read: its parse place goes back before the call runs.
                    if let Some(place) = parts.extensions.remove::<ParsePlace>() {
                        place.release();
                    }
                    drop(body);
                    let mut extensions = rmcp::model::Extensions::new();
                    extensions.insert(parts);
                    let cancelled = tokio_util::sync::CancellationToken::new();
                    // From 2026-07-28 a call reaches its client by rounds; before, stateless HTTP
                    // has no way back to it.
                    let client = match (shape, lifecycle) {
                        (Shape::Current, Some(lifecycle)) => {
                            PlainClient::Round(lifecycle.capabilities.map(Box::new))
                        }
                        _ => PlainClient::None,
                    };
                    let answer = server
                        .answer_plain(request, cancelled, shape, None, extensions, client)
                        .await
                        .unwrap_or_default();
                    return Ok(answered(answer));
                }
            }
            Ok(next::call(inner, Request::from_parts(parts, body)).await)
        })
    }
}
