//! The bodies being parsed: their budget by size ([`Parsing`]), and a request's share of it
//! ([`ParsePlace`]), held in its head's extensions until the server is handed the request.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The budget of the bodies being parsed, counted by their size (in KiB, a body of 1 KiB or
/// less counting as 1): `max_parsing` bodies of `max_body_bytes`, or as many more smaller ones
/// as their sizes add up to. Parsing's memory grows with a body's size (up to ~130 times it),
/// so the bound on memory is the one a count of bodies gave, while small requests in flight
/// together (the usual traffic) do not wait in a line of two behind each other.
pub(crate) struct Parsing {
    places: Arc<Semaphore>,
    /// The share of the largest body, which no body takes more of.
    largest: u32,
}

impl Parsing {
    const UNIT: usize = 1024;

    pub(crate) fn new(max_parsing: usize, max_body_bytes: usize) -> Self {
        let largest = u32::try_from(max_body_bytes.div_ceil(Self::UNIT).max(1)).unwrap_or(u32::MAX);
        let budget = (largest as usize)
            .saturating_mul(max_parsing.max(1))
            .min(Semaphore::MAX_PERMITS);
        Parsing {
            places: Arc::new(Semaphore::new(budget)),
            largest: largest.min(u32::try_from(budget).unwrap_or(u32::MAX)),
        }
    }

    /// The share of a body of `len` bytes.
    fn share(&self, len: usize) -> u32 {
        let units = u32::try_from(len.div_ceil(Self::UNIT)).unwrap_or(u32::MAX);
        units.clamp(1, self.largest)
    }

    /// The share of a body of `len` bytes, when it is free now.
    pub(super) fn try_take(&self, len: usize) -> Option<OwnedSemaphorePermit> {
        let share = self.share(len);
        Arc::clone(&self.places).try_acquire_many_owned(share).ok()
    }

    /// The share of a body of `len` bytes, once it is free.
    pub(super) async fn take(&self, len: usize) -> Option<OwnedSemaphorePermit> {
        let share = self.share(len);
        Arc::clone(&self.places)
            .acquire_many_owned(share)
            .await
            .ok()
    }

    /// What is free of the budget, in KiB.
    #[cfg(test)]
    pub(super) fn free(&self) -> usize {
        self.places.available_permits()
    }
}

/// A request's place among the bodies being parsed, in its head's extensions until the server
/// is handed the request.
#[derive(Clone, Default)]
pub(crate) struct ParsePlace(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl ParsePlace {
    pub(crate) fn new(place: OwnedSemaphorePermit) -> Self {
        ParsePlace(Arc::new(Mutex::new(Some(place))))
    }

    /// Gives the place back (dropping it, or the request, does too).
    pub(crate) fn release(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bodies share the parse budget by size: many small ones fit together, two of the
    /// largest fill it (and then even the smallest waits), and none takes more than the
    /// largest's share.
    #[test]
    fn bodies_share_the_parse_budget_by_size() {
        let parsing = Parsing::new(2, 1 << 20);
        assert_eq!(parsing.free(), 2048);
        let small: Vec<_> = (0..1000).map(|_| parsing.try_take(200).unwrap()).collect();
        assert_eq!(parsing.free(), 1048);
        let largest = parsing.try_take(1 << 20).unwrap();
        assert!(parsing.try_take(1 << 20).is_none());
        drop(small);
        let over = parsing.try_take((1 << 20) + 5).unwrap();
        assert_eq!(parsing.free(), 0);
        assert!(parsing.try_take(0).is_none());
        drop((largest, over));
        assert_eq!(parsing.free(), 2048);
    }
}
