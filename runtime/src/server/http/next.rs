//! Calling the next service of the stack, as every layer does: when it is ready, then with the
//! request. The services of the stack never fail (`Infallible`): every refusal is a response.

use std::convert::Infallible;

use tower_service::Service;

use super::reply::Reply;

/// Calls `inner` with `request` once it is ready.
pub(crate) async fn call<S, R>(mut inner: S, request: R) -> Reply
where
    S: Service<R, Response = Reply, Error = Infallible>,
{
    let ready = std::future::poll_fn(|cx| inner.poll_ready(cx)).await;
    let Ok(()) = ready;
    let Ok(reply) = inner.call(request).await;
    reply
}
