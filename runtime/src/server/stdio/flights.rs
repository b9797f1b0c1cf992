//! The requests in flight on one stdio connection, by id: each with the token that cancels it
//! and its place among the answers not yet written. An id is in flight from when its request
//! is read until its answer is handed to the writer (or dropped, when the client cancelled it):
//! a second request with that id meanwhile is refused, as its answer could not be told from the
//! first's.

use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::RequestId;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

/// The requests in flight, shared by the transport and the tasks answering plain requests.
#[derive(Clone, Default)]
pub(super) struct Flights {
    /// By id (foldhash, seeded at random: a client cannot choose ids that collide; at most
    /// `max_pending_answers` of them).
    table: Arc<Mutex<foldhash::HashMap<RequestId, Flight>>>,
    /// Woken each time a request leaves.
    left: Arc<Notify>,
}

/// A request in flight.
struct Flight {
    cancel: CancellationToken,
    /// Cancelled by the client (or at the end of the drain): its answer is not written.
    cancelled: bool,
    /// Its place among the pending answers, given back once its answer is written.
    place: Option<OwnedSemaphorePermit>,
}

/// How a request left.
pub(super) enum Left {
    /// Its answer is to be written, taking its place with it.
    Answered(Option<OwnedSemaphorePermit>),
    /// Cancelled: its answer is dropped (its place given back with it).
    Cancelled,
    /// It was not in flight.
    Unknown,
}

impl Flights {
    fn lock(&self) -> MutexGuard<'_, foldhash::HashMap<RequestId, Flight>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Enters request `id` with the place its line took: the token that cancels it, or `None`
    /// (and the place back) when a request with that id is in flight.
    pub(super) fn enter(
        &self,
        id: &RequestId,
        place: Option<OwnedSemaphorePermit>,
    ) -> Result<CancellationToken, Option<OwnedSemaphorePermit>> {
        match self.lock().entry(id.clone()) {
            Entry::Occupied(_) => Err(place),
            Entry::Vacant(free) => {
                let cancel = CancellationToken::new();
                free.insert(Flight {
                    cancel: cancel.clone(),
                    cancelled: false,
                    place,
                });
                Ok(cancel)
            }
        }
    }

    /// Whether a request with this id is in flight.
    pub(super) fn contains(&self, id: &RequestId) -> bool {
        self.lock().contains_key(id)
    }

    /// The client cancelled request `id`: it is stopped, and its answer will not be written.
    /// Whether it was in flight.
    pub(super) fn cancel(&self, id: &RequestId) -> bool {
        match self.lock().get_mut(id) {
            Some(flight) => {
                flight.cancelled = true;
                flight.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Request `id` is answered (or gave up): it leaves.
    pub(super) fn leave(&self, id: &RequestId) -> Left {
        let left = self.lock().remove(id);
        self.left.notify_one();
        match left {
            Some(flight) if flight.cancelled => Left::Cancelled,
            Some(flight) => Left::Answered(flight.place),
            None => Left::Unknown,
        }
    }

    /// Whether one request is in flight, no more.
    pub(super) fn alone(&self) -> bool {
        self.lock().len() == 1
    }

    /// How many requests in flight the client has not cancelled.
    pub(super) fn running(&self) -> usize {
        self.lock().values().filter(|f| !f.cancelled).count()
    }

    /// Stops every request still running: their answers are not written.
    pub(super) fn stop_all(&self) {
        for flight in self.lock().values_mut() {
            flight.cancelled = true;
            flight.cancel.cancel();
        }
    }

    /// Completes once a request has left since the last time it completed (one departure
    /// is remembered, so none is missed between a look at `running` and the wait).
    pub(super) async fn departure(&self) {
        self.left.notified().await;
    }
}
