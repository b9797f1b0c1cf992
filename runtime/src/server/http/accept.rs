//! The accept loop: connections capped (the idlest one closed to make room for a new one),
//! `TCP_NODELAY` on each (a stream of events is written in small pieces, which Nagle's
//! algorithm and the client's delayed ACK would hold ~40 ms each), headers read within their
//! time, a connection closed once idle, and every close lingering: what the client still sends
//! is read and dropped for a bounded time, so that it reads the answer rather than a reset.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::front::Front;

/// How long a new connection waits for the place of the idle connection it closed.
const ROOM_WAIT: Duration = Duration::from_secs(1);

/// Accepts connections until `stop`, then closes them all.
pub(super) async fn serve(
    listener: TcpListener,
    front: Arc<Front>,
    options: HttpOptions,
    stop: CancellationToken,
) -> io::Result<()> {
    let open = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let connections = Arc::new(Connections::default());
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
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
        let (front, http) = (front.clone(), http.clone());
        let (open, connections) = (open.clone(), connections.clone());
        tokio::spawn(async move {
            let Some(place) = admit(&open, &connections).await else {
                refuse(stream, linger).await;
                return;
            };
            let activity = Arc::new(Activity::new());
            let (id, close) = connections.add(activity.clone());
            let _registered = Registered(&connections, id);
            let _place = place;
            let io = TokioIo::new(Watched {
                inner: stream,
                activity: activity.clone(),
                linger: Lingering::new(linger),
            });
            let requests = activity.clone();
            let service = service_fn(move |request| {
                let front = front.clone();
                let handling = Handling::new(requests.clone());
                let open_body = OpenBody::new(requests.clone());
                async move {
                    let reply = front.handle(request).await;
                    drop(handling);
                    Ok::<_, Infallible>(reply.map(|body| Guarded(body, open_body).boxed()))
                }
            });
            tokio::select! {
                served = http.serve_connection(io, service) => {
                    if let Err(e) = served {
                        tracing::debug!("http: connection ended: {e}");
                    }
                }
                () = activity.idle_for(idle_timeout) => {
                    tracing::debug!("http: an idle connection was closed");
                }
                () = close.cancelled() => {
                    tracing::debug!("http: an idle connection was closed to make room for a new one");
                }
            }
        });
    }
}

/// A place among `max_connections`: a free one, or the one of the idlest connection, closed
/// for it. `None` when every connection is busy.
async fn admit(open: &Arc<Semaphore>, connections: &Connections) -> Option<OwnedSemaphorePermit> {
    if let Ok(place) = open.clone().try_acquire_owned() {
        return Some(place);
    }
    if !connections.close_idlest() {
        return None;
    }
    tokio::time::timeout(ROOM_WAIT, open.clone().acquire_owned())
        .await
        .ok()?
        .ok()
}

/// The open connections, to find the idlest when there is no room.
#[derive(Default)]
struct Connections {
    next: AtomicU64,
    open: Mutex<HashMap<u64, (Arc<Activity>, CancellationToken)>>,
}

impl Connections {
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

    /// Closes the connection idle longest: no request being handled and no answer being
    /// streamed (a request whose head is not complete counts as none). Whether there was one.
    fn close_idlest(&self) -> bool {
        let open = self.lock();
        let idlest = open
            .values()
            .filter(|(activity, close)| activity.is_idle() && !close.is_cancelled())
            .min_by_key(|(activity, _)| activity.last.load(Ordering::Relaxed));
        match idlest {
            Some((_, close)) => {
                close.cancel();
                true
            }
            None => false,
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
        activity: Arc::new(Activity::new()),
        linger: Lingering::new(linger),
    };
    let answer = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(linger.timeout + Duration::from_secs(1), answer).await;
}

/// How a close lingers (`HttpOptions::linger_timeout`, `linger_max_bytes`).
#[derive(Clone, Copy)]
struct Linger {
    timeout: Duration,
    max_bytes: u64,
}

/// A close in progress: the write side shut, the client's bytes read and dropped until it
/// closes too, the time is up or enough was read.
struct Lingering {
    linger: Linger,
    shut: bool,
    read: u64,
    until: Option<Pin<Box<Sleep>>>,
}

impl Lingering {
    fn new(linger: Linger) -> Self {
        Lingering {
            linger,
            shut: false,
            read: 0,
            until: None,
        }
    }
}

/// A response body, with what must live as long as it does.
pub(super) struct Guarded<G>(pub(super) super::front::ReplyBody, pub(super) G);

impl<G: Unpin> Body for Guarded<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

/// When a connection last moved a byte, and how many of its requests are being handled.
struct Activity {
    start: Instant,
    last: AtomicU64,
    handling: AtomicUsize,
    /// Response bodies still being written (a stream of events lasts).
    bodies: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
            bodies: AtomicUsize::new(0),
        }
    }

    /// No request being handled, no answer being written.
    fn is_idle(&self) -> bool {
        self.handling.load(Ordering::Acquire) == 0 && self.bodies.load(Ordering::Acquire) == 0
    }

    fn touch(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    /// Completes once the connection has moved no byte for `idle` with no request being
    /// handled (a handler may think for longer than that).
    async fn idle_for(&self, idle: Duration) {
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        loop {
            tokio::time::sleep((idle / 4).max(Duration::from_millis(10))).await;
            let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
            let quiet = now.saturating_sub(self.last.load(Ordering::Relaxed));
            if quiet >= idle_ms && self.handling.load(Ordering::Acquire) == 0 {
                return;
            }
        }
    }
}

/// A request being handled, for as long as it lives.
struct Handling(Arc<Activity>);

impl Handling {
    fn new(activity: Arc<Activity>) -> Self {
        activity.handling.fetch_add(1, Ordering::AcqRel);
        Handling(activity)
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.touch();
        self.0.handling.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body being written, for as long as it lives.
struct OpenBody(Arc<Activity>);

impl OpenBody {
    fn new(activity: Arc<Activity>) -> Self {
        activity.bodies.fetch_add(1, Ordering::AcqRel);
        OpenBody(activity)
    }
}

impl Drop for OpenBody {
    fn drop(&mut self) {
        self.0.bodies.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A stream that records when it last moved a byte, and lingers when it is shut.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
    linger: Lingering,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// Shuts the write side, then reads and drops what the client still sends until it closes,
    /// `linger_max_bytes` were read or `linger_timeout` passed: closing with unread bytes
    /// would reset the connection, and a client still writing its request would lose the
    /// answer.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.linger.shut {
            ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.linger.shut = true;
            let until = Instant::now() + this.linger.linger.timeout;
            this.linger.until = Some(Box::pin(tokio::time::sleep_until(until)));
        }
        let mut sink = [0u8; 8192];
        loop {
            if this.linger.read >= this.linger.linger.max_bytes {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut sink);
            match Pin::new(&mut this.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => this.linger.read += buf.filled().len() as u64,
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => {
                    return match this.linger.until.as_mut().map(|t| t.as_mut().poll(cx)) {
                        Some(Poll::Pending) => Poll::Pending,
                        _ => Poll::Ready(Ok(())),
                    };
                }
            }
        }
    }
}
