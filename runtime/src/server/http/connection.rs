//! One connection of the accept loop: when it last moved a byte, how many of its requests
//! are being handled and when its last answer was written ([`Activity`], for the header time,
//! idle eviction and choosing the idlest), and a
//! stream whose close lingers ([`Watched`]): what the client still sends is read and dropped
//! for a bounded time, so that a client still writing its request reads the answer rather than
//! a reset.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker, ready};
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

/// The milliseconds since `epoch`.
pub(super) fn ms_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// When a connection last moved a byte, and how many of its requests are being handled.
/// Moving a byte only raises a flag (no clock is read on the hot path); the connection's idle
/// watch (`idle_for`) turns the flag into a time at each of its ticks.
pub(super) struct Activity {
    /// The accept loop's epoch, shared by its connections: their times compare.
    epoch: Instant,
    /// When it opened, in ms since `epoch`.
    opened: u64,
    /// When the idle watch last saw the connection move (at first, when it opened), in ms
    /// since `epoch`.
    last: AtomicU64,
    /// A byte moved since the idle watch last looked.
    moved: AtomicBool,
    handling: AtomicUsize,
    /// Response bodies still being written (a stream of events lasts).
    bodies: AtomicUsize,
    /// When its last response body was written or dropped (at first, when it opened), in ms
    /// since `epoch`: the client's next request head is due within the header time from then.
    freed: AtomicU64,
}

impl Activity {
    /// A connection opened now, its times counted from `epoch` (the accept loop's).
    pub(super) fn new(epoch: Instant) -> Self {
        let opened = ms_since(epoch);
        Activity {
            epoch,
            opened,
            last: AtomicU64::new(opened),
            moved: AtomicBool::new(false),
            handling: AtomicUsize::new(0),
            bodies: AtomicUsize::new(0),
            freed: AtomicU64::new(opened),
        }
    }

    /// When it opened, in ms since the accept loop's epoch.
    pub(super) fn opened(&self) -> u64 {
        self.opened
    }

    /// No request being handled, no answer being written.
    pub(super) fn is_idle(&self) -> bool {
        self.handling.load(Ordering::Acquire) == 0 && self.bodies.load(Ordering::Acquire) == 0
    }

    pub(super) fn touch(&self) {
        // Read first: a flag already raised is not written again (the line stays shared).
        if !self.moved.load(Ordering::Relaxed) {
            self.moved.store(true, Ordering::Relaxed);
        }
    }

    /// When the connection last moved a byte (or opened), in ms since the accept loop's
    /// epoch, to a tick of its idle watch; `u64::MAX` when it moved since the last tick.
    pub(super) fn last_moved(&self) -> u64 {
        match self.moved.load(Ordering::Relaxed) {
            true => u64::MAX,
            false => self.last.load(Ordering::Relaxed),
        }
    }

    fn elapsed_ms(&self) -> u64 {
        ms_since(self.epoch)
    }

    /// A tick of the idle watch: the flag of a byte moved becomes the time of the tick. How
    /// long the connection has been quiet, in ms.
    pub(super) fn tick(&self) -> u64 {
        let now = self.elapsed_ms();
        if self.moved.swap(false, Ordering::Relaxed) {
            self.last.store(now, Ordering::Relaxed);
        }
        now.saturating_sub(self.last.load(Ordering::Relaxed))
    }

    /// Completes once the connection has gone `limit` without a request since it opened or
    /// since its last answer was written: a head that does not come whole in time (sent a byte
    /// at a time, or never finished), or a keep-alive connection left unused. Its clock is the
    /// connection's, not one per request: it sleeps until the head would be due, `limit` at a
    /// time while an answer is being written.
    pub(super) async fn no_request_for(&self, limit: Duration) {
        let limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
        loop {
            let wait = match self.bodies.load(Ordering::Acquire) {
                0 => {
                    let due = self.freed.load(Ordering::Acquire).saturating_add(limit_ms);
                    match due.checked_sub(self.elapsed_ms()) {
                        Some(left) if left > 0 => left,
                        _ => return,
                    }
                }
                _ => limit_ms,
            };
            // At least a millisecond: a header time of zero never spins while answers are written.
            tokio::time::sleep(Duration::from_millis(wait.max(1))).await;
        }
    }

    /// Completes once the connection has moved no byte for `idle` (to an eighth of it: the
    /// watch's tick, twice) with no request being handled (a handler may think for longer
    /// than that).
    pub(super) async fn idle_for(&self, idle: Duration) {
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        loop {
            tokio::time::sleep((idle / 8).max(Duration::from_millis(10))).await;
            let quiet = self.tick();
            if quiet >= idle_ms && self.handling.load(Ordering::Acquire) == 0 {
                return;
            }
        }
    }
}

/// A future polled only once its own waker fired (and the first time): a connection's
/// watchers (its idle clock, its close token), which fire once in minutes, are not polled at
/// every wake-up of the connection's task, several a request.
pub(super) struct Quiet<F> {
    inner: Pin<Box<F>>,
    flag: Arc<Flag>,
    waker: Waker,
}

/// Whether a [`Quiet`] future was woken, and the task to wake for it.
struct Flag {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        let task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = task.as_ref() {
            task.wake_by_ref();
        }
    }
}

impl<F: Future> Quiet<F> {
    pub(super) fn new(inner: F) -> Self {
        let flag = Arc::new(Flag {
            woken: AtomicBool::new(true),
            task: Mutex::new(None),
        });
        Quiet {
            inner: Box::pin(inner),
            waker: Waker::from(Arc::clone(&flag)),
            flag,
        }
    }
}

impl<F: Future> Future for Quiet<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        {
            let mut task = self
                .flag
                .task
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        if !self.flag.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let this = &mut *self;
        this.inner
            .as_mut()
            .poll(&mut Context::from_waker(&this.waker))
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
        // One clock read a request, where hyper's header timer took one, a timer and a box.
        if self.0.bodies.fetch_sub(1, Ordering::AcqRel) == 1 {
            (self.0.freed).store(self.0.elapsed_ms(), Ordering::Release);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The header time runs from the connection's opening and from each answer written, never
    /// while an answer is being written.
    #[tokio::test(start_paused = true)]
    async fn a_request_is_due_within_the_header_time_of_the_last_answer() {
        let limit = Duration::from_secs(10);
        let activity = Arc::new(Activity::new(Instant::now()));
        let mut watch = std::pin::pin!(activity.no_request_for(limit));
        let mut pending = async || {
            tokio::task::yield_now().await;
            let mut cx = Context::from_waker(Waker::noop());
            watch.as_mut().poll(&mut cx).is_pending()
        };
        assert!(pending().await);
        tokio::time::advance(Duration::from_secs(9)).await;
        assert!(pending().await, "due 10 s after the opening");
        // A request at 9 s, answered for 30 s: never due meanwhile.
        let body = OpenBody::new(Arc::clone(&activity));
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(pending().await, "an answer being written");
        drop(body);
        tokio::time::advance(Duration::from_secs(9)).await;
        assert!(pending().await, "due 10 s after the answer");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(!pending().await, "due");
    }

    /// A quiet future is polled the first time, then only once its own waker fired, however
    /// often the task holding it wakes; it completes when its inner future does.
    #[tokio::test(start_paused = true)]
    async fn a_quiet_future_is_polled_only_once_woken() {
        let polls = Arc::new(AtomicUsize::new(0));
        let counted = {
            let polls = Arc::clone(&polls);
            let mut sleep = Box::pin(tokio::time::sleep(Duration::from_secs(60)));
            std::future::poll_fn(move |cx| {
                polls.fetch_add(1, Ordering::Relaxed);
                sleep.as_mut().poll(cx)
            })
        };
        let mut quiet = std::pin::pin!(Quiet::new(counted));
        for _ in 0..10 {
            let polled = std::future::poll_fn(|cx| Poll::Ready(quiet.as_mut().poll(cx))).await;
            assert!(polled.is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 1);
        tokio::time::advance(Duration::from_secs(60)).await;
        quiet.await;
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }
}
