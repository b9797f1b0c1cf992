//! The accept loop: connections capped (the idlest one closed to make room for a new one),
//! `TCP_NODELAY` on each (a stream of events is written in small pieces, which Nagle's
//! algorithm and the client's delayed ACK would hold ~40 ms each), each request's head read
//! within its time of the connection's opening or its last answer, a connection closed once
//! idle, and every close lingering: what the client still sends is read and dropped for a
//! bounded time, so that it reads the answer rather than a reset.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::connection::{
    Activity, Handling, Linger, Lingering, OpenBody, Quiet, Watched, ms_since,
};
use super::options::ConnectionOptions;
use super::service::Endpoint;

/// How long a new connection waits for the place of the idle connection it closed.
const ROOM_WAIT: Duration = Duration::from_secs(1);

/// Accepts connections until `stop`, then closes them all.
pub(super) async fn serve(
    listener: TcpListener,
    endpoint: Arc<Endpoint>,
    options: ConnectionOptions,
    stop: CancellationToken,
) -> io::Result<()> {
    let open = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let connections = Arc::new(Connections::new());
    // The header time is each connection's own watch (`Activity::no_request_for`), not
    // hyper's timer, which takes a timer and a box for every request.
    let mut http = http1::Builder::new();
    http.header_read_timeout(None);
    let header_read_timeout = options.header_read_timeout;
    let idle_timeout = options.idle_timeout;
    let linger = Linger {
        timeout: options.linger_timeout,
        max_bytes: options.linger_max_bytes,
    };
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => {
                connections.close_all();
                return Ok(());
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors, a connection reset before it was accepted: the listener
            // itself is fine, so wait a moment rather than spin or stop.
            Err(e) => {
                tracing::warn!("http: accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("http: TCP_NODELAY could not be set: {e}");
        }
        let (endpoint, http) = (endpoint.clone(), http.clone());
        let (open, connections) = (open.clone(), connections.clone());
        tokio::spawn(async move {
            let Some(place) = admit(&open, &connections).await else {
                refuse(stream, linger).await;
                return;
            };
            let activity = Arc::new(Activity::new(connections.epoch));
            let (id, close) = connections.add(activity.clone());
            let _registered = Registered(&connections, id);
            let _place = place;
            let io = TokioIo::new(Watched {
                inner: stream,
                activity: activity.clone(),
                linger: Lingering::new(linger),
            });
            let requests = activity.clone();
            let service = service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(crate::server::changes::Connection(id));
                let handling = Handling::new(requests.clone());
                let open_body = OpenBody::new(requests.clone());
                let answer = endpoint.call(request, Some(open_body), std::convert::identity);
                async move {
                    let reply = answer.await;
                    drop(handling);
                    Ok::<_, Infallible>(reply)
                }
            });
            // The watchers are polled only when they wake, not at each wake-up of the
            // connection.
            let watched = Quiet::new(async {
                tokio::select! {
                    biased;
                    () = close.cancelled() => "an idle connection was closed to make room for a new one",
                    () = activity.no_request_for(header_read_timeout) => "a request's head did not come in time",
                    () = activity.idle_for(idle_timeout) => "an idle connection was closed",
                }
            });
            tokio::select! {
                biased;
                served = http.serve_connection(io, service) => {
                    if let Err(e) = served {
                        tracing::debug!("http: connection ended: {e}");
                    }
                }
                closed = watched => tracing::debug!("http: {closed}"),
            }
        });
    }
}

/// A place among `max_connections`: a free one, or the one of the idlest connection, closed
/// for it. `None` when every connection is busy. A connection opened less than [`FRESH`] ago
/// may have its request on the way (nothing read yet looks idle): it is closed only once no
/// older one is idle, and a place freed meanwhile is taken instead.
async fn admit(open: &Arc<Semaphore>, connections: &Connections) -> Option<OwnedSemaphorePermit> {
    if let Ok(place) = open.clone().try_acquire_owned() {
        return Some(place);
    }
    // Each round closes one connection (or finds only fresh ones) and waits a while for a
    // place: a place freed by one connection's closing may go to another new connection
    // that was waiting first, and then this one closes another.
    let room = async {
        loop {
            if connections.close_idlest() == Room::None {
                return None;
            }
            let freed = tokio::time::timeout(FRESH, open.clone().acquire_owned());
            if let Ok(Ok(place)) = freed.await {
                return Some(place);
            }
        }
    };
    tokio::time::timeout(ROOM_WAIT, room).await.ok()?
}

/// How long a new connection is spared from being closed for room.
const FRESH: Duration = Duration::from_millis(200);

/// What [`Connections::close_idlest`] found.
#[derive(Debug, PartialEq, Eq)]
enum Room {
    /// The idlest connection is closed: its place is on its way.
    Closed,
    /// Only connections opened less than [`FRESH`] ago are idle.
    Soon,
    /// No connection is idle.
    None,
}

/// The open connections, to find the idlest when there is no room.
struct Connections {
    /// What their times count from.
    epoch: Instant,
    next: AtomicU64,
    open: Mutex<HashMap<u64, (Arc<Activity>, CancellationToken)>>,
}

impl Connections {
    fn new() -> Self {
        Connections {
            epoch: Instant::now(),
            next: AtomicU64::new(0),
            open: Mutex::default(),
        }
    }

    fn add(&self, activity: Arc<Activity>) -> (u64, CancellationToken) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let close = CancellationToken::new();
        self.lock().insert(id, (activity, close.clone()));
        (id, close)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (Arc<Activity>, CancellationToken)>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes every connection.
    fn close_all(&self) {
        self.lock().values().for_each(|(_, close)| close.cancel());
    }

    /// Closes the connection idle longest (no request being handled and no answer being
    /// streamed; a request whose head is not complete counts as none) among those opened at
    /// least [`FRESH`] ago.
    fn close_idlest(&self) -> Room {
        let fresh = u64::try_from(FRESH.as_millis()).unwrap_or(u64::MAX);
        // Opened by then, at least `FRESH` ago (the clock read once, not per connection).
        let settled = ms_since(self.epoch).checked_sub(fresh);
        let open = self.lock();
        let mut any_idle = false;
        let idlest = (open.values())
            .filter(|(activity, close)| activity.is_idle() && !close.is_cancelled())
            .inspect(|_| any_idle = true)
            .filter(|(activity, _)| settled.is_some_and(|at| activity.opened() <= at))
            .min_by_key(|(activity, _)| activity.last_moved());
        match idlest {
            Some((_, close)) => {
                close.cancel();
                Room::Closed
            }
            None if any_idle => Room::Soon,
            None => Room::None,
        }
    }
}

/// A connection's entry, removed when the connection ends.
struct Registered<'a>(&'a Connections, u64);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

/// The answer to a connection past `max_connections` with none idle, written without reading
/// anything, then lingering.
async fn refuse(stream: TcpStream, linger: Linger) {
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
        Content-Type: text/plain\r\nContent-Length: 22\r\nConnection: close\r\n\r\n\
        Too many connections.\n";
    let mut stream = Watched {
        inner: stream,
        activity: Arc::new(Activity::new(Instant::now())),
        linger: Lingering::new(linger),
    };
    let answer = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(linger.timeout + Duration::from_secs(1), answer).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The connection closed for room is the one quiet longest, whenever each opened: one that
    /// opened long ago and moved a minute before another opened is closed first, not the
    /// newer one that has yet to move.
    #[tokio::test(start_paused = true)]
    async fn the_idlest_connection_is_the_one_quiet_longest() {
        let connections = Connections::new();
        let older = Arc::new(Activity::new(connections.epoch));
        let (_, older_closed) = connections.add(Arc::clone(&older));
        tokio::time::advance(Duration::from_secs(5)).await;
        older.touch();
        older.tick();
        tokio::time::advance(Duration::from_secs(60)).await;
        let newer = Arc::new(Activity::new(connections.epoch));
        let (_, newer_closed) = connections.add(Arc::clone(&newer));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!((older.tick(), newer.tick()), (61_000, 1_000));
        assert_eq!(connections.close_idlest(), Room::Closed);
        assert!(older_closed.is_cancelled());
        assert!(!newer_closed.is_cancelled());
        // A connection that moved since the last tick counts as the most recent.
        newer.touch();
        let (_, third_closed) = connections.add(Arc::new(Activity::new(connections.epoch)));
        tokio::time::advance(FRESH).await;
        assert_eq!(connections.close_idlest(), Room::Closed);
        assert!(third_closed.is_cancelled() && !newer_closed.is_cancelled());
        // A connection just opened may have its request on the way: spared while it is fresh;
        // a busy one is never closed.
        let (_, fresh_closed) = connections.add(Arc::new(Activity::new(connections.epoch)));
        let busy = Handling::new(Arc::clone(&newer));
        assert_eq!(connections.close_idlest(), Room::Soon);
        assert!(!fresh_closed.is_cancelled());
        tokio::time::advance(FRESH).await;
        assert_eq!(connections.close_idlest(), Room::Closed);
        assert!(fresh_closed.is_cancelled());
        assert_eq!(connections.close_idlest(), Room::None);
        drop(busy);
    }

    /// At the cap, a new connection takes a place freed while the only idle connections are
    /// fresh, closing none of them.
    #[tokio::test(start_paused = true)]
    async fn a_place_freed_while_the_idle_are_fresh_is_taken() {
        let open = Arc::new(Semaphore::new(1));
        let connections = Arc::new(Connections::new());
        let place = open.clone().try_acquire_owned().unwrap();
        let (_, closed) = connections.add(Arc::new(Activity::new(connections.epoch)));
        let admitted = tokio::spawn({
            let (open, connections) = (Arc::clone(&open), Arc::clone(&connections));
            async move { admit(&open, &connections).await.is_some() }
        });
        tokio::time::advance(FRESH / 2).await;
        drop(place);
        assert!(admitted.await.unwrap());
        assert!(!closed.is_cancelled());
    }
}
