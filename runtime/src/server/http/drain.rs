//! The endpoint's first step: counts the POSTs being answered (until their answer is written or
//! dropped) and, once a graceful shutdown begins, refuses every new request `503` with
//! `Retry-After` while those finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use http::{Method, Request};
use tokio::sync::Notify;

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

impl Draining {
    /// Whether `request` is served now: `Err` with the refusal once a drain began; else the
    /// count of a POST (`None` for a stream of events, GET, which lasts as long as its
    /// session: only POSTs are drained), to carry until its answer is written or dropped.
    pub(crate) fn admit<B>(
        self: &Arc<Self>,
        request: &Request<B>,
    ) -> Result<Option<Answering>, Box<Reply>> {
        if self.refusing.load(Ordering::Acquire) {
            return Err(Box::new(unavailable(
                "Server shutting down: retry in a moment (another replica may answer).",
                "1",
            )));
        }
        Ok((request.method() == Method::POST).then(|| Answering::new(self)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    fn post() -> Request<()> {
        Request::post("/mcp").body(()).unwrap()
    }

    /// A drain waits for the POSTs being answered (each counted until its answer is written
    /// or dropped), refuses what comes meanwhile, and ends once the last answer is gone; a
    /// stream of events is not counted.
    #[tokio::test(start_paused = true)]
    async fn a_drain_waits_for_answers_and_refuses_new_requests() {
        let draining = Arc::new(Draining::default());
        let held = draining.admit(&post()).unwrap();
        assert!(held.is_some());
        let stream = draining.admit(&Request::get("/mcp").body(()).unwrap());
        assert!(stream.unwrap().is_none(), "a GET is not counted");
        let drain = tokio::spawn({
            let draining = Arc::clone(&draining);
            async move { draining.drain(Duration::from_secs(30)).await }
        });
        tokio::task::yield_now().await;
        let refused = draining
            .admit(&post())
            .err()
            .expect("refused while draining");
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()["retry-after"], "1");
        assert!(!drain.is_finished());
        drop(held);
        assert!(drain.await.unwrap(), "finished in time");
    }

    /// An answer never written does not hold the shutdown past the drain period.
    #[tokio::test(start_paused = true)]
    async fn a_drain_ends_at_its_period() {
        let draining = Arc::new(Draining::default());
        let _held = draining.admit(&post()).unwrap();
        assert!(!draining.drain(Duration::from_secs(5)).await);
    }
}
