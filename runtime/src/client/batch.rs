//! [`Client::batch`]: many calls at once, each within its timeout, a bounded number in flight.

use std::collections::HashMap;
use std::future::Future;

use rmcp::model::CallToolResult;
use serde_json::Value;
use tokio::task::{JoinError, JoinSet};

use super::{BatchOptions, Client, ClientError};

impl Client {
    /// Sets how [`batch`](Client::batch) runs its calls (by default 16 at once, each within
    /// 60 seconds).
    #[must_use]
    pub fn batch_options(mut self, options: BatchOptions) -> Self {
        self.batch = options;
        self
    }

    /// Calls every target, as [`call_raw`](Client::call_raw) does, and gives every result as it
    /// came, in the order given, whatever the others did. At most
    /// [`BatchOptions::concurrency`] calls are in flight at once; a call without an answer
    /// within [`BatchOptions::timeout`] is cancelled and its place holds
    /// [`ClientError::TimedOut`].
    ///
    /// ```no_run
    /// # async fn run(client: mcp_fusion::client::Client) {
    /// let calls = (1..=3).map(|n| ("billing.get_invoice", serde_json::json!({"id": format!("inv_{n}")})));
    /// for outcome in client.batch(calls).await {
    ///     println!("{:?}", outcome.map(|result| result.is_error));
    /// }
    /// # }
    /// ```
    pub async fn batch<I, S>(&self, calls: I) -> Vec<Result<CallToolResult, ClientError>>
    where
        I: IntoIterator<Item = (S, Value)>,
        S: Into<String>,
    {
        let (concurrency, timeout) = (self.batch.get_concurrency(), self.batch.get_timeout());
        let calls = calls.into_iter().map(|(target, arguments)| {
            let client = self.clone();
            let target: String = target.into();
            async move {
                // Dropped at the timeout: rmcp then tells the server the call is cancelled.
                tokio::time::timeout(timeout, client.call_raw(&target, arguments))
                    .await
                    .unwrap_or(Err(ClientError::TimedOut { after: timeout }))
            }
        });
        let joined = in_order(calls, concurrency).await;
        // A call's task only ends early by panicking inside rmcp: its place holds the panic.
        let outcomes = joined
            .into_iter()
            .map(|outcome| outcome.unwrap_or_else(|e| Err(ClientError::transport(e))));
        outcomes.collect()
    }
}

/// Runs each future as a task of its own, at most `most` at once (the next taken from
/// `futures` as one ends): their outcomes in the order given, a task that panicked in its own
/// place.
async fn in_order<F>(
    futures: impl IntoIterator<Item = F>,
    most: usize,
) -> Vec<Result<F::Output, JoinError>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut futures = futures.into_iter().enumerate();
    let mut set = JoinSet::new();
    let mut places = HashMap::new();
    let mut outcomes = Vec::new();
    loop {
        while set.len() < most.max(1) {
            let Some((place, future)) = futures.next() else {
                break;
            };
            outcomes.push(None);
            places.insert(set.spawn(future).id(), place);
        }
        let Some(joined) = set.join_next_with_id().await else {
            break;
        };
        let (id, outcome) = match joined {
            Ok((id, output)) => (id, Ok(output)),
            Err(e) => (e.id(), Err(e)),
        };
        if let Some(place) = places.remove(&id) {
            outcomes[place] = Some(outcome);
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.expect("every task is joined"))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// A task that panics keeps its place, whatever order the tasks end in (before, it was
    /// put last and every later outcome moved up one).
    #[tokio::test(start_paused = true)]
    async fn a_panicking_call_keeps_its_place_in_a_batch() {
        let tasks = [(30, false), (10, true), (20, false)].map(|(ms, panics)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            assert!(!panics, "the call panicked");
            ms
        });
        let outcomes = in_order(tasks, 16).await;
        assert_eq!(outcomes[0].as_ref().ok(), Some(&30));
        assert!(outcomes[1].as_ref().is_err_and(|e| e.is_panic()));
        assert_eq!(outcomes[2].as_ref().ok(), Some(&20));
    }

    /// At most `most` tasks run at once, the next starting as one ends; the outcomes keep the
    /// order given. On the paused clock: 10 tasks of 10 ms, 3 at a time, end after 40 ms.
    #[tokio::test(start_paused = true)]
    async fn at_most_so_many_run_at_once() {
        let running = Arc::new(AtomicUsize::new(0));
        let most_seen = Arc::new(AtomicUsize::new(0));
        let tasks = (0..10u64).map(|n| {
            let (running, most_seen) = (running.clone(), most_seen.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most_seen.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10 - n % 3)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                n
            }
        });
        let start = tokio::time::Instant::now();
        let outcomes = in_order(tasks, 3).await;
        let ends: Vec<u64> = outcomes.into_iter().map(|o| o.expect("no panic")).collect();
        assert_eq!(ends, (0..10).collect::<Vec<_>>());
        assert_eq!(most_seen.load(Ordering::SeqCst), 3);
        assert!(
            start.elapsed() >= Duration::from_millis(30),
            "{:?}",
            start.elapsed()
        );
        assert!(
            start.elapsed() <= Duration::from_millis(40),
            "{:?}",
            start.elapsed()
        );
        // Nothing given, nothing run; 0 reads as 1.
        assert!(
            in_order(std::iter::empty::<std::future::Ready<()>>(), 0)
                .await
                .is_empty()
        );
        assert_eq!(BatchOptions::default().concurrency(0).get_concurrency(), 1);
    }
}
