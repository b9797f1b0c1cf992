//! The accept loop: connections capped, `TCP_NODELAY` on each (a stream of events is written in
//! small pieces, which Nagle's algorithm and the client's delayed ACK would hold ~40 ms each),
//! headers read within their time, and a connection closed once idle.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::HttpOptions;
use super::front::Front;

/// Accepts connections until the listener fails for good.
pub(super) async fn serve(
    listener: TcpListener,
    front: Arc<Front>,
    options: &HttpOptions,
) -> io::Result<()> {
    let open = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let idle_timeout = options.idle_timeout;
    loop {
        let stream = match listener.accept().await {
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
        let Ok(place) = open.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let front = front.clone();
        let http = http.clone();
        tokio::spawn(async move {
            let _place = place;
            let activity = Arc::new(Activity::new());
            let io = TokioIo::new(Watched {
                inner: stream,
                activity: activity.clone(),
            });
            let requests = activity.clone();
            let service = service_fn(move |request| {
                let front = front.clone();
                let handling = Handling::new(requests.clone());
                async move {
                    let reply = front.handle(request).await;
                    drop(handling);
                    Ok::<_, Infallible>(reply)
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
            }
        });
    }
}

/// The answer to a connection past `max_connections`, written without reading anything.
async fn refuse(mut stream: TcpStream) {
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
        Content-Type: text/plain\r\nContent-Length: 22\r\nConnection: close\r\n\r\n\
        Too many connections.\n";
    let answer = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        // Read what the client sent before closing: closing with unread data resets the
        // connection, and a reset can lose the answer on the client's side.
        let mut sink = [0u8; 4096];
        let drained = async {
            while stream.read(&mut sink).await? > 0 {}
            io::Result::Ok(())
        };
        // Briefly: a refused connection should not hold a file for long.
        let _ = tokio::time::timeout(Duration::from_millis(200), drained).await;
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), answer).await;
}

/// When a connection last moved a byte, and how many of its requests are being handled.
struct Activity {
    start: Instant,
    last: AtomicU64,
    handling: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
        }
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

/// A stream that records when it last moved a byte.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
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

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
