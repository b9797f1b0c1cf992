//! [`BatchOptions`]: how [`Client::batch`](super::Client::batch) runs its calls.

use std::time::Duration;

/// How [`Client::batch`](super::Client::batch) runs its calls: at most
/// [`concurrency`](BatchOptions::concurrency) at once (16 by default), the next starting as one
/// ends; each given up after [`timeout`](BatchOptions::timeout) (60 seconds by default),
/// counted from its start (not from the batch's), the server then told the call is cancelled.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::client::BatchOptions;
///
/// let options = BatchOptions::default().concurrency(4).timeout(Duration::from_secs(10));
/// assert_eq!((options.get_concurrency(), options.get_timeout()), (4, Duration::from_secs(10)));
/// # async fn configure(client: mcp_fusion::client::Client, options: BatchOptions) {
/// let client = client.batch_options(options);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    concurrency: usize,
    timeout: Duration,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            concurrency: 16,
            timeout: Duration::from_secs(60),
        }
    }
}

impl BatchOptions {
    /// At most `most` calls in flight at once (at least one: 0 reads as 1).
    #[must_use]
    pub fn concurrency(mut self, most: usize) -> Self {
        self.concurrency = most.max(1);
        self
    }

    /// Each call is given up after `per_call` without an answer: its place in the batch holds
    /// [`ClientError::TimedOut`](super::ClientError::TimedOut).
    #[must_use]
    pub fn timeout(mut self, per_call: Duration) -> Self {
        self.timeout = per_call;
        self
    }

    /// How many calls may be in flight at once.
    #[must_use]
    pub fn get_concurrency(&self) -> usize {
        self.concurrency
    }

    /// How long each call may wait for its answer.
    #[must_use]
    pub fn get_timeout(&self) -> Duration {
        self.timeout
    }
}
