//! The answers the HTTP endpoint gives itself, and what a response body carries with it.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage};
use rmcp::service::TxJsonRpcMessage;

/// A response body, as rmcp's service gives it.
pub(crate) type ReplyBody = BoxBody<Bytes, Infallible>;
/// A response, as rmcp's service gives it.
pub(crate) type Reply = Response<ReplyBody>;

/// The response `reply`, its body carrying `guard` until the body is written or dropped (a
/// request in flight, its place among a session's ids, a connection's activity).
pub(crate) fn guarded<G: Send + Sync + Unpin + 'static>(reply: Reply, guard: G) -> Reply {
    reply.map(|body| Guarded(body, guard).boxed())
}

/// A response body, with what must live as long as it does.
struct Guarded<G>(ReplyBody, G);

impl<G: Unpin> Body for Guarded<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

/// `status` with a JSON-RPC message as its JSON body.
pub(crate) fn json_rpc(status: StatusCode, message: &TxJsonRpcMessage<RoleServer>) -> Reply {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut reply = Response::new(Full::new(Bytes::from(body)).boxed());
    *reply.status_mut() = status;
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

/// `status` with a JSON-RPC error without an id.
pub(crate) fn json_rpc_error(status: StatusCode, error: ErrorData) -> Reply {
    json_rpc(status, &JsonRpcMessage::error(error, None))
}

/// `200` with a JSON-RPC answer, as rmcp's stateless service sends it in JSON mode.
pub(crate) fn answered(body: Vec<u8>) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from(body)).boxed());
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

/// `status` with a short text.
pub(crate) fn text(status: StatusCode, text: &'static str) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *reply.status_mut() = status;
    reply
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    reply
}

/// The reply, with the connection closed after it (the rest of the body is not read).
pub(crate) fn closing(mut reply: Reply) -> Reply {
    reply
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    reply
}

/// `503` with a JSON-RPC error (-32000) saying `message`, `Retry-After` in seconds, and the
/// connection closed after it.
pub(crate) fn unavailable(message: &'static str, retry_after: &'static str) -> Reply {
    let error = ErrorData::new(ErrorCode(-32000), message, None);
    let mut reply = json_rpc_error(StatusCode::SERVICE_UNAVAILABLE, error);
    reply
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    closing(reply)
}
