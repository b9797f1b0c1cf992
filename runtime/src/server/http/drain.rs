//! The outermost layer: counts the POSTs being answered (until their answer is written or
//! dropped) and, once a graceful shutdown begins, refuses every new request `503` with
//! `Retry-After` while those finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use http::{Method, Request};
use tokio::sync::Notify;
use tower_service::Service;

use super::next::{Guarding, Next};
use super::reply::{Reply, unavailable};

/// What a drain shares with the requests it counts.
#[derive(Default)]
pub(crate) struct Draining {
    /// Shutting down: new requests are refused.
    refusing: AtomicBool,
    /// POSTs whose answers are not yet written.
    count: AtomicUsize,
    /// Woken when the count falls to zero.
    none: Notify,
}

impl Draining {
    /// From now on refuses new requests; completes once none is being answered, or after
    /// `drain`. Whether every request finished in time.
    pub(crate) async fn drain(&self, drain: Duration) -> bool {
        self.refusing.store(true, Ordering::Release);
        let none_left = async {
            loop {
                let notified = self.none.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.count.load(Ordering::Acquire) == 0 {
                    return;
                }
                notified.await;
            }
        };
        let finished = tokio::time::timeout(drain, none_left).await.is_ok();
        if !finished {
            let left = self.count.load(Ordering::Acquire);
            tracing::warn!(
                left,
                ?drain,
                "http: requests still running after the drain period are stopped"
            );
        }
        finished
    }
}

/// A POST being answered, until its answer is written or dropped.
pub(crate) struct Answering(Arc<Draining>);

impl Answering {
    fn new(draining: &Arc<Draining>) -> Self {
        draining.count.fetch_add(1, Ordering::AcqRel);
        Answering(Arc::clone(draining))
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.none.notify_waiters();
        }
    }
}

/// The drain layer over `S`.
#[derive(Clone)]
pub(crate) struct Drain<S> {
    pub(crate) inner: S,
    pub(crate) draining: Arc<Draining>,
}

impl<S, B> Service<Request<B>> for Drain<S>
where
    S: Service<Request<B>, Response = Reply, Error = std::convert::Infallible>,
    S::Future: Send + 'static,
{
    type Response = Reply;
    type Error = std::convert::Infallible;
    type Future = Guarding<S::Future, Answering>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if self.draining.refusing.load(Ordering::Acquire) {
            return Guarding::bare(Next::now(unavailable(
                "Server shutting down: retry in a moment (another replica may answer).",
                "1",
            )));
        }
        // A stream of events (GET) lasts as long as its session: only POSTs are drained.
        if request.method() != Method::POST {
            return Guarding::bare(Next::on(self.inner.call(request)));
        }
        let answering = Answering::new(&self.draining);
        Guarding::new(Next::on(self.inner.call(request)), answering)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;
    use http_body_util::{BodyExt, Full};
    use tower::ServiceExt;

    async fn echo(_: Request<()>) -> Result<Reply, std::convert::Infallible> {
        Ok(Reply::new(Full::default().boxed()))
    }

    fn post() -> Request<()> {
        Request::post("/mcp").body(()).unwrap()
    }

    /// A drain waits for the answers being written (held by their bodies), refuses what comes
    /// meanwhile, and ends once the last body is gone.
    #[tokio::test(start_paused = true)]
    async fn a_drain_waits_for_answers_and_refuses_new_requests() {
        let draining = Arc::new(Draining::default());
        let layer = Drain {
            inner: tower::service_fn(echo),
            draining: Arc::clone(&draining),
        };
        let held = layer.clone().oneshot(post()).await.unwrap();
        assert_eq!(held.status(), StatusCode::OK);
        let drain = tokio::spawn({
            let draining = Arc::clone(&draining);
            async move { draining.drain(Duration::from_secs(30)).await }
        });
        tokio::task::yield_now().await;
        let refused = layer.clone().oneshot(post()).await.unwrap();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()["retry-after"], "1");
        assert!(!drain.is_finished());
        drop(held);
        assert!(drain.await.unwrap(), "finished in time");
    }

    /// A body never written does not hold the shutdown past the drain period.
    #[tokio::test(start_paused = true)]
    async fn a_drain_ends_at_its_period() {
        let draining = Arc::new(Draining::default());
        let layer = Drain {
            inner: tower::service_fn(echo),
            draining: Arc::clone(&draining),
        };
        let _held = layer.oneshot(post()).await.unwrap();
        assert!(!draining.drain(Duration::from_secs(5)).await);
    }
}
