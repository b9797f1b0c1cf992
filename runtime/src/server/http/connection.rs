//! One connection of the accept loop: when it last moved a byte and how many of its requests
//! are being handled ([`Activity`], for idle eviction and for choosing the idlest), and a
//! stream whose close lingers ([`Watched`]): what the client still sends is read and dropped
//! for a bounded time, so that a client still writing its request reads the answer rather than
//! a reset.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

/// How a close lingers (`HttpOptions::linger_timeout`, `linger_max_bytes`).
#[derive(Clone, Copy)]
pub(super) struct Linger {
    pub(super) timeout: Duration,
    pub(super) max_bytes: u64,
}

/// A close in progress: the write side shut, the client's bytes read and dropped until it
/// closes too, the time is up or enough was read.
pub(super) struct Lingering {
    linger: Linger,
    shut: bool,
    read: u64,
    until: Option<Pin<Box<Sleep>>>,
}

impl Lingering {
    pub(super) fn new(linger: Linger) -> Self {
        Lingering {
            linger,
            shut: false,
            read: 0,
            until: None,
        }
    }
}

/// When a connection last moved a byte, and how many of its requests are being handled.
pub(super) struct Activity {
    start: Instant,
    pub(super) last: AtomicU64,
    handling: AtomicUsize,
    /// Response bodies still being written (a stream of events lasts).
    bodies: AtomicUsize,
}

impl Activity {
    pub(super) fn new() -> Self {
        Activity {
            start: Instant::now(),
            last: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
            bodies: AtomicUsize::new(0),
        }
    }

    /// No request being handled, no answer being written.
    pub(super) fn is_idle(&self) -> bool {
        self.handling.load(Ordering::Acquire) == 0 && self.bodies.load(Ordering::Acquire) == 0
    }

    fn touch(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    /// Completes once the connection has moved no byte for `idle` with no request being
    /// handled (a handler may think for longer than that).
    pub(super) async fn idle_for(&self, idle: Duration) {
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
pub(super) struct Handling(Arc<Activity>);

impl Handling {
    pub(super) fn new(activity: Arc<Activity>) -> Self {
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
pub(super) struct OpenBody(Arc<Activity>);

impl OpenBody {
    pub(super) fn new(activity: Arc<Activity>) -> Self {
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
pub(super) struct Watched {
    pub(super) inner: TcpStream,
    pub(super) activity: Arc<Activity>,
    pub(super) linger: Lingering,
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
