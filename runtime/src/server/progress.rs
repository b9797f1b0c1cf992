//! A call's progress on its way to the client: the notifications its handler (or an upstream,
//! or the heartbeat) reports, sent in order through the transport that read the call, none
//! after its answer.

use std::sync::Arc;
use std::time::Duration;

use crate::tool::{Progress, Reporter};

use super::request::ProgressSink;

/// How long the answer waits, at most, for the progress reported before it to be sent: a client
/// that does not read its notifications does not hold the answer longer.
const FLUSH: Duration = Duration::from_secs(1);

/// A call's progress on its way to the client, for as long as the call runs: dropped with the
/// call's future (its client cancelled it, its round ended), it closes the progress and stops
/// the task sending it. That task holds the way to the client (over stdio, a sender of the
/// lines written): left waiting, it would keep stdout open at exit, its drain spent for nothing.
pub(crate) struct Forwarding {
    progress: Arc<Progress>,
    forwarder: tokio::task::JoinHandle<()>,
}

impl Forwarding {
    /// Starts sending `progress` to `sink`.
    pub(crate) fn start(sink: ProgressSink, progress: Arc<Progress>) -> Self {
        let forwarder = tokio::spawn(forward(sink, Arc::clone(&progress)));
        Forwarding {
            progress,
            forwarder,
        }
    }

    /// The call is answered: no progress after the answer, what was reported before it goes
    /// out first, for at most [`FLUSH`].
    pub(crate) async fn finish(mut self) {
        self.progress.close();
        let _ = tokio::time::timeout(FLUSH, &mut self.forwarder).await;
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        self.progress.close();
        self.forwarder.abort();
    }
}

/// Sends a call's progress notifications in order, until the call closes its progress.
async fn forward(sink: ProgressSink, progress: Arc<Progress>) {
    while let Some(note) = progress.next().await {
        let sent = match &sink {
            ProgressSink::Peer(peer) => peer.notify_progress(note).await.is_ok(),
            #[cfg(feature = "stdio")]
            ProgressSink::Lines(lines) => {
                // A call of the fast lane (`server::lane`) on stdio.
                let line = super::lane::progress_line(note);
                lines.send((line, None)).await.is_ok()
            }
            ProgressSink::Task(store, id) => {
                let message = Some(status_message(&note));
                let update = super::tasks::TaskUpdate::Working { message };
                // A store that cannot answer loses a progress report, not the task.
                !matches!(store.record(id, update).await, Ok(super::tasks::Held::Gone))
            }
        };
        if !sent {
            return;
        }
    }
}

/// A progress report as a task's status message: its message, and how far along it is.
fn status_message(note: &rmcp::model::ProgressNotificationParam) -> String {
    let done = match note.total {
        Some(total) => format!("{}/{total}", note.progress),
        None => note.progress.to_string(),
    };
    match &note.message {
        Some(message) => format!("{message} ({done})"),
        None => format!("progress {done}"),
    }
}

/// Progress every `every` while the handler has reported none: the seconds elapsed (to the
/// millisecond), no total.
pub(crate) async fn heartbeat(progress: &Progress, every: Duration) -> std::convert::Infallible {
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + every, every);
    loop {
        ticks.tick().await;
        if progress.reported_by_handler() {
            return std::future::pending().await;
        }
        let seconds = started.elapsed().as_millis() as f64 / 1000.0;
        progress.report(seconds, None, None, Reporter::Heartbeat);
    }
}
