//! What every transport hands the core with a `tools/call`: the call itself, and the facts of
//! the request that carried it (who the transport verified, the HTTP request's head, where
//! progress goes, when the client stopped wanting the answer). The stdio transport, the HTTP
//! endpoint and rmcp's service loop each fill one in; the core never asks a transport anything.

use std::borrow::Cow;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::{Extensions, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use std::sync::Arc;

use crate::tool::{ClientAccess, TraceContext, new_span_id};

use super::client::Round;

/// One `tools/call`, whichever transport read it.
pub(crate) struct CallRequest<'a> {
    /// The MCP tool name called.
    pub(crate) name: Cow<'a, str>,
    pub(crate) arguments: Option<Map<String, Value>>,
    /// The client's `progressToken`, and where its notifications go.
    pub(crate) progress: Option<(ProgressToken, ProgressSink)>,
    /// The client's trace context, and the server's own span id for the call.
    pub(crate) trace: Option<(TraceContext, String)>,
    /// What the transport knows of the request, as rmcp carries it: the verified caller, and
    /// over streamable HTTP the request's head (`http::request::Parts`). Middleware and the
    /// rate-limit key see the same facts whichever path read the request.
    pub(crate) extensions: Extensions,
    /// Cancelled once the client no longer wants the answer (`notifications/cancelled`, its
    /// stream gone); never, when only dropping the call's future stops it.
    pub(crate) cancelled: CancellationToken,
    /// The way to the client that called (`Context::elicit`, `sample`, `roots`, `log`); none
    /// where there is no way back to it.
    pub(crate) client: Option<ClientAccess>,
    /// From 2026-07-28, the round the call's asks end when their answer is not in the request.
    pub(crate) round: Option<Arc<Round>>,
    /// Its rate limits were spent already: it runs a task, whose creation spent them.
    pub(crate) spent: bool,
}

impl CallRequest<'_> {
    /// A call without any request facts: in process.
    pub(crate) fn in_process(
        name: String,
        arguments: Option<Map<String, Value>>,
    ) -> CallRequest<'static> {
        CallRequest {
            name: Cow::Owned(name),
            arguments,
            progress: None,
            trace: None,
            extensions: Extensions::new(),
            cancelled: CancellationToken::new(),
            client: None,
            round: None,
            spent: false,
        }
    }
}

/// The client's W3C trace context from a request's `_meta` (SEP-414), parsed strictly (anything
/// malformed is ignored), with a fresh span id for the server's own span of the call.
pub(crate) fn trace_of(
    traceparent: Option<&str>,
    tracestate: Option<&str>,
) -> Option<(TraceContext, String)> {
    let trace = TraceContext::parse(traceparent?, tracestate)?;
    Some((trace, new_span_id()))
}

/// Where a call's progress notifications go.
pub(crate) enum ProgressSink {
    /// Through rmcp's service, which read the call.
    Peer(Peer<RoleServer>),
    /// Straight to the lines the stdio transport writes (a call the fast lane read,
    /// `server::lane`), each before the call's answer.
    #[cfg(feature = "stdio")]
    Lines(tokio::sync::mpsc::Sender<Framed>),
    /// To the task the call runs as: its status message.
    Task(Arc<dyn super::tasks::TaskStore>, Arc<str>),
}

/// A line the stdio transport writes, with the place of the request it answers (none for a
/// notification): the place is given back once the line is written.
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) type Framed = (Vec<u8>, Option<tokio::sync::OwnedSemaphorePermit>);

/// A request's cancellation as a transport signals it, in its extensions, beside rmcp's own
/// (`RequestContext::ct`): the stdio transport reads `notifications/cancelled` itself (so that
/// it knows when the cancelled request is done with its id) and stops what is still running at
/// the end of a drain. The core stops every request it answers (a call, a `subscriptions/listen`
/// stream, a request of the user's handler) once either is cancelled.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) struct Cancel(pub(crate) CancellationToken);

/// The cancellation of a request rmcp read: the transport's own when it signals one (stdio),
/// else rmcp's (which streamable HTTP cancels when the client goes away).
pub(crate) fn cancellation(rmcp: &CancellationToken, extensions: &Extensions) -> CancellationToken {
    match extensions.get::<Cancel>() {
        Some(Cancel(transport)) => transport.clone(),
        None => rmcp.clone(),
    }
}

/// The future `make` gives, boxed where it is made: its room is allocated first, which lets
/// the compiler build the future there, where `Box::pin(make())` builds it on the stack and
/// copies it whole (a request's futures are KBs, mostly room for later states).
pub(crate) fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    let room = Box::<F>::new_uninit();
    Box::into_pin(Box::write(room, make()))
}

/// Runs `future` unless `cancelled` fires first (`None` then), as a `biased` select with the
/// cancellation first would: the token is looked at before every poll. A future done at its
/// first poll, as most requests are, never registers with the token (which takes its lock
/// twice).
pub(crate) fn unless_cancelled<F: Future>(
    cancelled: &CancellationToken,
    future: F,
) -> UnlessCancelled<'_, F> {
    UnlessCancelled {
        token: cancelled,
        cancelled: None,
        future,
    }
}

pin_project_lite::pin_project! {
    /// The future of [`unless_cancelled`]. (Not an `async fn`: one keeps its future twice, as
    /// its argument and pinned, and a call's future is the largest a request makes.)
    pub(crate) struct UnlessCancelled<'a, F> {
        token: &'a CancellationToken,
        // Once the future was pending: the token's wake-up.
        #[pin]
        cancelled: Option<WaitForCancellationFuture<'a>>,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for UnlessCancelled<'_, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let cancelled = match this.cancelled.as_mut().as_pin_mut() {
            Some(registered) => registered.poll(cx).is_ready(),
            None => this.token.is_cancelled(),
        };
        if cancelled {
            return Poll::Ready(None);
        }
        if let Poll::Ready(done) = this.future.poll(cx) {
            return Poll::Ready(Some(done));
        }
        if this.cancelled.is_none() {
            this.cancelled.set(Some(this.token.cancelled()));
            let registered = this.cancelled.as_pin_mut().expect("just set");
            if registered.poll(cx).is_ready() {
                return Poll::Ready(None);
            }
        }
        Poll::Pending
    }
}

/// A request the stdio transport read after a graceful shutdown began, in its extensions: the
/// core refuses it (a call with SERVER_BUSY, anything else with a JSON-RPC error). Over HTTP
/// the endpoint answers 503 itself.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) struct Stopping;

#[cfg(test)]
mod tests {
    use super::*;

    /// As a biased select with the cancellation first: a cancelled token wins before the
    /// first poll and while the future waits; a future done at once is answered.
    #[tokio::test(start_paused = true)]
    async fn a_cancelled_request_stops_whenever_it_is_cancelled() {
        let cancelled = CancellationToken::new();
        assert_eq!(unless_cancelled(&cancelled, async { 1 }).await, Some(1));

        let mut polled = false;
        let never = std::future::poll_fn(|_| {
            polled = true;
            Poll::<()>::Pending
        });
        let stop = cancelled.clone();
        let waiting = unless_cancelled(&cancelled, never);
        let (waited, ()) = tokio::join!(waiting, async move {
            tokio::task::yield_now().await;
            stop.cancel();
        });
        assert_eq!(waited, None);
        assert!(polled, "the future ran until the cancellation");

        let mut polled = false;
        let first = std::future::poll_fn(|_| {
            polled = true;
            Poll::Ready(2)
        });
        assert_eq!(unless_cancelled(&cancelled, first).await, None);
        assert!(!polled, "a cancelled request never runs");
    }

    /// The future is polled once each time the task is woken, the first time too (where the
    /// token is looked at, not yet registered with), and a token cancelled while it waits wins
    /// over the future even when both are ready at the same poll.
    #[tokio::test(start_paused = true)]
    async fn each_wake_polls_the_request_once() {
        let cancelled = CancellationToken::new();
        let mut polls = 0;
        let pending = std::future::poll_fn(|_| {
            polls += 1;
            Poll::<()>::Pending
        });
        {
            let mut waiting = std::pin::pin!(unless_cancelled(&cancelled, pending));
            let mut cx = Context::from_waker(std::task::Waker::noop());
            for _ in 0..3 {
                assert!(waiting.as_mut().poll(&mut cx).is_pending());
            }
        }
        assert_eq!(polls, 3, "polled once a wake");

        let stop = cancelled.clone();
        let mut polls = 0;
        let cancelling = std::future::poll_fn(|cx| {
            polls += 1;
            if polls == 1 {
                // Pending, and the token cancelled before the next poll, when this future
                // would be ready too.
                stop.cancel();
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(())
        });
        assert_eq!(unless_cancelled(&cancelled, cancelling).await, None);
        assert_eq!(polls, 1, "the cancellation is looked at first");
    }
}
