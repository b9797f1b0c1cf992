//! An action's deadline that stands still while the handler waits for someone other than
//! itself: the user (an elicitation), the client's model (sampling). The time the user takes is
//! not the action's; what bounds the wait for the user is the ask's own timeout.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// A deadline that pauses while any of its pauses is held.
#[derive(Debug, Clone)]
pub(crate) struct Deadline(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Woken when a pause ends.
    resumed: Notify,
}

#[derive(Debug)]
struct State {
    /// When it passes, counting no paused time.
    until: Instant,
    /// Pauses held, and since when the first began.
    paused: usize,
    since: Option<Instant>,
}

impl Deadline {
    /// A deadline `after` from now.
    pub(crate) fn after(after: Duration) -> Self {
        let state = State {
            until: Instant::now() + after,
            paused: 0,
            since: None,
        };
        Deadline(Arc::new(Shared {
            state: Mutex::new(state),
            resumed: Notify::new(),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops the clock until the returned pause is dropped.
    pub(crate) fn pause(&self) -> Pause {
        let mut state = self.lock();
        if state.paused == 0 {
            state.since = Some(Instant::now());
        }
        state.paused += 1;
        Pause(self.clone())
    }

    /// Completes once the deadline has passed, its paused time not counted.
    pub(crate) async fn passed(&self) {
        loop {
            let resumed = self.0.resumed.notified();
            tokio::pin!(resumed);
            resumed.as_mut().enable();
            let until = {
                let state = self.lock();
                (state.paused == 0).then_some(state.until)
            };
            match until {
                Some(until) if Instant::now() >= until => return,
                Some(until) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(until) => {}
                        () = &mut resumed => {}
                    }
                }
                None => resumed.await,
            }
        }
    }
}

/// A pause of a deadline, until dropped: the time it lasted is added to the deadline.
#[derive(Debug)]
pub(crate) struct Pause(Deadline);

impl Drop for Pause {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.paused -= 1;
        if state.paused == 0
            && let Some(since) = state.since.take()
        {
            state.until += since.elapsed();
        }
        drop(state);
        self.0.0.resumed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paused deadline passes as late as the pause lasted.
    #[tokio::test(start_paused = true)]
    async fn time_paused_is_not_counted() {
        let deadline = Deadline::after(Duration::from_secs(10));
        let started = Instant::now();
        let passed = tokio::spawn({
            let deadline = deadline.clone();
            async move { deadline.passed().await }
        });
        tokio::time::sleep(Duration::from_secs(4)).await;
        let pause = deadline.pause();
        // Two pauses at once count once.
        let inner = deadline.pause();
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!passed.is_finished());
        drop(inner);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!passed.is_finished());
        drop(pause);
        passed.await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(4 + 61 + 6));
    }
}
