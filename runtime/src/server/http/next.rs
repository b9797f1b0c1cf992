//! Calling the next service of the stack, as every layer does: when it is ready, then with the
//! request. The services of the stack never fail (`Infallible`): every refusal is a response.
//!
//! A layer that decides at once ([`Next`]) answers itself, or hands the request on and returns
//! the next service's own future: no box, no copy of the services inside, no await of its own.
//! Only a layer with work of its own to await (reading a body, checking a token) boxes it.
//! Every service of the stack is ready at all times (`poll_ready` is `Ready`; a layer's is
//! its inner's), so the accept loop and `HttpService` call the stack at once.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_service::Service;

use super::reply::{Reply, guarded};
use crate::tool::BoxFuture;

/// What a layer that hands a request on, or boxes work of its own around it, asks of the
/// service inside it: the stack's `Reply`, never an error, cloned into the work, its future
/// sent across threads.
pub(crate) trait Inner<R>:
    Service<R, Response = Reply, Error = Infallible, Future: Send> + Clone + Send + 'static
{
}

impl<S, R> Inner<R> for S where
    S: Service<R, Response = Reply, Error = Infallible, Future: Send> + Clone + Send + 'static
{
}

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

pin_project_lite::pin_project! {
    /// A layer's answer: its own, ready now; the next service's future, as it is; or work of
    /// its own still to do.
    #[project = Projected]
    pub(crate) enum Next<F> {
        Now { reply: Option<Reply> },
        On { #[pin] future: F },
        Own { future: BoxFuture<'static, Reply> },
    }
}

impl<F> Next<F> {
    /// The layer's own answer.
    pub(crate) fn now(reply: Reply) -> Self {
        Next::Now { reply: Some(reply) }
    }

    /// The next service's answer.
    pub(crate) fn on(future: F) -> Self {
        Next::On { future }
    }

    /// The answer of the layer's own work.
    pub(crate) fn own(future: impl Future<Output = Reply> + Send + 'static) -> Self {
        Next::Own {
            future: Box::pin(future),
        }
    }
}

impl<F> Future for Next<F>
where
    F: Future<Output = Result<Reply, Infallible>>,
{
    type Output = Result<Reply, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            Projected::Now { reply } => Poll::Ready(Ok(reply
                .take()
                .expect("a layer's answer is polled once it is ready"))),
            Projected::On { future } => future.poll(cx),
            Projected::Own { future } => future.as_mut().poll(cx).map(Ok),
        }
    }
}

pin_project_lite::pin_project! {
    /// A layer's answer whose body carries `guard` until it is written or dropped
    /// ([`guarded`]): the next service's future as it is, not boxed and copied into a future
    /// of the layer's own.
    pub(crate) struct Guarding<F, G> {
        #[pin]
        answer: Next<F>,
        guard: Option<G>,
    }
}

impl<F, G> Guarding<F, G> {
    /// `answer`, its body carrying `guard`.
    pub(crate) fn new(answer: Next<F>, guard: G) -> Self {
        Guarding {
            answer,
            guard: Some(guard),
        }
    }

    /// `answer` as it is.
    pub(crate) fn bare(answer: Next<F>) -> Self {
        Guarding {
            answer,
            guard: None,
        }
    }
}

impl<F, G> Future for Guarding<F, G>
where
    F: Future<Output = Result<Reply, Infallible>>,
    G: Send + Sync + Unpin + 'static,
{
    type Output = Result<Reply, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(reply) = std::task::ready!(this.answer.poll(cx));
        Poll::Ready(Ok(match this.guard.take() {
            Some(guard) => guarded(reply, guard),
            None => reply,
        }))
    }
}
