//! The circuit breaker of one upstream ([`Upstream::breaker`](super::Upstream::breaker)):
//! failures in a row, counted for the upstream and for each caller, so that one caller's
//! failing calls open it for that caller alone, and only failures from several callers (or
//! from the only caller there is) drop the connection for everyone.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::time::Instant;

/// How many callers' own breakers are kept at once; past it, the ones not failing are
/// forgotten first, then the oldest.
const MAX_CALLERS: usize = 1024;

/// What a failure opened.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Tripped {
    /// Nothing yet.
    No,
    /// The caller's own breaker: its calls are refused until its backoff ends.
    Caller,
    /// The upstream's: the connection is dropped.
    All,
}

pub(crate) struct Breaker {
    /// Failures in a row that open a breaker (at least 1).
    threshold: u32,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Failures in a row, whoever called; a served call resets it.
    run: u32,
    /// The callers whose failures make up `run` (two are enough to tell).
    run_callers: Vec<Option<String>>,
    /// The first caller served since the breaker was made, and whether another was since.
    first: Option<Option<String>>,
    several: bool,
    /// Each caller's failures in a row, and until when its own breaker is open.
    callers: HashMap<Option<String>, Caller>,
}

#[derive(Default)]
struct Caller {
    failures: u32,
    open_until: Option<Instant>,
}

impl Breaker {
    pub(crate) fn new(threshold: u32) -> Self {
        Breaker {
            threshold: threshold.max(1),
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Until when `caller`'s own breaker refuses its calls, if it is open now.
    pub(crate) fn open_for(&self, caller: Option<&str>) -> Option<Instant> {
        let state = self.lock();
        let until = state.callers.get(&caller.map(str::to_owned))?.open_until?;
        (until > Instant::now()).then_some(until)
    }

    /// A call of `caller` was answered: nothing is failing in a row any more.
    pub(crate) fn served(&self, caller: Option<&str>) {
        let mut state = self.lock();
        let caller = caller.map(str::to_owned);
        state.seen(&caller);
        state.run = 0;
        state.run_callers.clear();
        state.callers.remove(&caller);
    }

    /// A call of `caller` failed; what it opened (the caller's own breaker until `until`).
    pub(crate) fn failed(&self, caller: Option<&str>, until: Instant) -> Tripped {
        let mut state = self.lock();
        let caller = caller.map(str::to_owned);
        state.seen(&caller);
        state.run += 1;
        if !state.run_callers.contains(&caller) && state.run_callers.len() < 2 {
            state.run_callers.push(caller.clone());
        }
        let several_failing = state.run_callers.len() >= 2;
        if state.run >= self.threshold && (several_failing || !state.several) {
            state.run = 0;
            state.run_callers.clear();
            state.callers.clear();
            return Tripped::All;
        }
        if state.callers.len() >= MAX_CALLERS && !state.callers.contains_key(&caller) {
            state.forget_one();
        }
        let own = state.callers.entry(caller).or_default();
        own.failures += 1;
        if own.failures >= self.threshold {
            own.failures = 0;
            own.open_until = Some(until);
            return Tripped::Caller;
        }
        Tripped::No
    }

    /// The connection was dropped and made again: every count starts over.
    pub(crate) fn reset(&self) {
        *self.lock() = State::default();
    }
}

impl State {
    /// Notes that `caller` called.
    fn seen(&mut self, caller: &Option<String>) {
        match &self.first {
            None => self.first = Some(caller.clone()),
            Some(first) if first != caller => self.several = true,
            Some(_) => {}
        }
    }

    /// Forgets one caller: one whose breaker is not open, else any.
    fn forget_one(&mut self) {
        let now = Instant::now();
        let victim = (self.callers.iter())
            .find(|(_, c)| c.open_until.is_none_or(|until| until <= now))
            .or_else(|| self.callers.iter().next())
            .map(|(key, _)| key.clone());
        if let Some(victim) = victim {
            self.callers.remove(&victim);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    /// The only caller there is (stdio) opens it for everyone, as before.
    #[tokio::test]
    async fn the_only_caller_opens_it() {
        let breaker = Breaker::new(3);
        assert_eq!(breaker.failed(None, later()), Tripped::No);
        assert_eq!(breaker.failed(None, later()), Tripped::No);
        assert_eq!(breaker.failed(None, later()), Tripped::All);
    }

    /// Among several callers, one failing caller opens its own breaker only; failures of two
    /// callers in a row open it for everyone.
    #[tokio::test]
    async fn one_caller_of_many_opens_its_own_only() {
        let breaker = Breaker::new(3);
        breaker.served(Some("sub:ada"));
        for _ in 0..2 {
            assert_eq!(breaker.failed(Some("sub:eve"), later()), Tripped::No);
        }
        assert_eq!(breaker.failed(Some("sub:eve"), later()), Tripped::Caller);
        assert!(breaker.open_for(Some("sub:eve")).is_some());
        assert!(breaker.open_for(Some("sub:ada")).is_none());
        // Ada is served: the run is over.
        breaker.served(Some("sub:ada"));
        assert_eq!(breaker.failed(Some("sub:eve"), later()), Tripped::No);
        assert_eq!(breaker.failed(Some("sub:ada"), later()), Tripped::No);
        assert_eq!(breaker.failed(Some("sub:eve"), later()), Tripped::All);
    }

    /// A flood of callers keeps at most `MAX_CALLERS` breakers.
    #[tokio::test]
    async fn callers_are_bounded() {
        let breaker = Breaker::new(2);
        breaker.served(Some("first"));
        for i in 0..(MAX_CALLERS * 3) {
            let caller = format!("caller-{i}");
            breaker.failed(Some(&caller), later());
            breaker.served(Some("first"));
        }
        assert!(breaker.lock().callers.len() <= MAX_CALLERS);
    }
}
