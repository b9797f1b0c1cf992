//! What a call carries from its request to its handler: the client's W3C trace context, and a
//! channel for progress notifications (MCP `notifications/progress`) when the client asked for
//! them with a `progressToken`.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::Notify;
use tokio::time::Instant;

/// A W3C trace context (`traceparent`, and `tracestate` when valid), as MCP carries it in a
/// request's `_meta` (2026-07-28 revision, SEP-414). Parsed strictly: anything malformed is
/// ignored and never echoed.
///
/// ```
/// use mcp_fusion::tools::TraceContext;
/// let trace = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None).unwrap();
/// assert_eq!(trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: String,
    parent_id: String,
    flags: u8,
    state: Option<String>,
}

impl TraceContext {
    /// Parses a `traceparent` (and a `tracestate`, dropped alone when malformed) per W3C Trace
    /// Context level 1: version `00` is exactly `00-{32 hex}-{16 hex}-{2 hex}`, lowercase, ids not
    /// all zero; a later version may append `-` fields; version `ff` is invalid.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        // Read by bytes: a client's string is never sliced at a byte offset, which would panic
        // inside a multi-byte character.
        let bytes = traceparent.as_bytes();
        if bytes.len() < 55 || (bytes.len() > 55 && bytes[55] != b'-') {
            return None;
        }
        let field = |range: std::ops::Range<usize>| -> Option<&str> {
            let field = &bytes[range];
            is_hex(field).then(|| std::str::from_utf8(field).ok())?
        };
        let version = field(0..2)?;
        if version == "ff" || (version == "00" && bytes.len() != 55) {
            return None;
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let (trace_id, parent_id, flags) = (field(3..35)?, field(36..52)?, field(53..55)?);
        let zero = |id: &str| id.bytes().all(|b| b == b'0');
        if zero(trace_id) || zero(parent_id) {
            return None;
        }
        Some(TraceContext {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
            flags: u8::from_str_radix(flags, 16).ok()?,
            state: tracestate
                .filter(|s| valid_tracestate(s))
                .map(str::to_owned),
        })
    }

    /// The trace id, 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }

    /// The caller's span id (the parent of the server's span), 16 lowercase hex digits.
    pub fn parent_id(&self) -> &str {
        &self.parent_id
    }

    /// Whether the caller sampled the trace.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The `tracestate`, when it was sent and valid.
    pub fn state(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The `traceparent` as sent (version `00`).
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-{:02x}", self.trace_id, self.parent_id, self.flags)
    }
}

/// Lowercase hex only (W3C: uppercase is invalid).
fn is_hex(text: &[u8]) -> bool {
    !text.is_empty() && text.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A `tracestate` per W3C: at most 32 comma-separated `key=value` members, keys of lowercase
/// letters, digits and `_-*/` (with one `@` for multi-tenant keys), values of printable ASCII
/// without `,` and `=`, at most 256 characters, not ending in a space.
fn valid_tracestate(state: &str) -> bool {
    let members: Vec<&str> = state
        .split(',')
        .map(|m| m.trim_matches([' ', '\t']))
        .filter(|m| !m.is_empty())
        .collect();
    if members.is_empty() || members.len() > 32 || state.len() > 512 {
        return false;
    }
    members.iter().all(|member| {
        let Some((key, value)) = member.split_once('=') else {
            return false;
        };
        let key_ok = !key.is_empty()
            && key.len() <= 256
            && key.as_bytes()[0].is_ascii_lowercase() | key.as_bytes()[0].is_ascii_digit()
            && key.matches('@').count() <= 1
            && key
                .bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'*' | b'/' | b'@'));
        let value_ok = !value.is_empty()
            && value.len() <= 256
            && !value.ends_with(' ')
            && value
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
        key_ok && value_ok
    })
}

/// A fresh span id for the server's own span of a call: 16 lowercase hex digits, not zero.
pub(crate) fn new_span_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}", hasher.finish().max(1))
}

/// Progress of one call toward its client: at most one notification per interval, `progress`
/// strictly increasing (MCP requires it), none once the call is answered. What is reported
/// waits in one place until the transport takes it: a report made while the previous one is
/// still unsent replaces it (the newest is the furthest), so a client that reads slowly costs
/// one notification of memory, never a queue.
#[derive(Debug)]
pub(crate) struct Progress {
    token: ProgressToken,
    interval: Duration,
    state: Mutex<State>,
    /// Woken when a notification waits, and when the progress is closed.
    ready: Notify,
}

#[derive(Debug)]
struct State {
    /// The notification waiting to be sent.
    waiting: Option<ProgressNotificationParam>,
    /// Open until the call is answered.
    open: bool,
    last: Option<f64>,
    sent_at: Option<Instant>,
    /// The handler reported progress itself: the heartbeat stops.
    reported: bool,
}

/// Who reports.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reporter {
    Handler,
    Heartbeat,
}

impl Progress {
    pub(crate) fn new(token: ProgressToken, interval: Duration) -> Self {
        Progress {
            token,
            interval,
            state: Mutex::new(State {
                waiting: None,
                open: true,
                last: None,
                sent_at: None,
                reported: false,
            }),
            ready: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reports progress unless it would not increase `progress`, comes within the interval of
    /// the last one (a final one, `progress == total`, is never held back by the interval), or
    /// the call is answered. Whether it will be sent.
    pub(crate) fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
        by: Reporter,
    ) -> bool {
        let mut state = self.lock();
        if by == Reporter::Handler {
            state.reported = true;
        } else if state.reported {
            return false;
        }
        if !state.open || !progress.is_finite() || state.last.is_some_and(|last| progress <= last) {
            return false;
        }
        let last_one = total.is_some_and(|t| progress >= t);
        let now = Instant::now();
        if !last_one && state.sent_at.is_some_and(|at| now - at < self.interval) {
            return false;
        }
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        param.total = total.filter(|t| t.is_finite());
        param.message = message.map(str::to_owned);
        state.waiting = Some(param);
        state.last = Some(progress);
        state.sent_at = Some(now);
        drop(state);
        self.ready.notify_one();
        true
    }

    /// The next notification to send, once one waits; `None` once the progress is closed and
    /// nothing is left.
    pub(crate) async fn next(&self) -> Option<ProgressNotificationParam> {
        loop {
            let ready = self.ready.notified();
            {
                let mut state = self.lock();
                if let Some(note) = state.waiting.take() {
                    return Some(note);
                }
                if !state.open {
                    return None;
                }
            }
            ready.await;
        }
    }

    /// Whether the handler has reported progress of its own.
    pub(crate) fn reported_by_handler(&self) -> bool {
        self.lock().reported
    }

    /// No more notifications: the call is being answered (what waits is still sent).
    pub(crate) fn close(&self) {
        self.lock().open = false;
        self.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparents_are_parsed_strictly() {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let trace =
            TraceContext::parse(valid, Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")).unwrap();
        assert_eq!(trace.parent_id(), "00f067aa0ba902b7");
        assert!(trace.sampled());
        assert_eq!(
            trace.state(),
            Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        );
        assert_eq!(trace.traceparent(), valid);
        for bad in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "<tool_error>-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            // Multi-byte characters where a field boundary falls inside them.
            "0é-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-é",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902é7-01",
            "0\u{1F600}4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",
        ] {
            assert!(TraceContext::parse(bad, None).is_none(), "{bad}");
        }
        // A later version may carry more fields.
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-abc";
        assert!(TraceContext::parse(later, None).is_some());
        // A malformed tracestate is dropped, the traceparent kept.
        let trace = TraceContext::parse(valid, Some("Bad Key=1")).unwrap();
        assert_eq!(trace.state(), None);
    }

    #[test]
    fn any_character_anywhere_is_refused_without_a_panic() {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        for at in 0..valid.len() {
            for odd in ["é", "\u{1F600}", "\u{0}", "-", "F"] {
                for replace in [0, 1] {
                    let mut sent = valid.to_owned();
                    sent.replace_range(at..at + replace, odd);
                    let trace = TraceContext::parse(&sent, Some(&sent));
                    assert!(trace.is_none() || sent == valid, "{sent}");
                }
            }
        }
    }

    #[tokio::test]
    async fn progress_only_increases_and_is_spaced() {
        let token = ProgressToken(rmcp::model::NumberOrString::Number(7));
        let progress = Progress::new(token, Duration::from_secs(60));
        assert!(progress.report(1.0, Some(10.0), None, Reporter::Handler));
        assert_eq!(progress.next().await.map(|p| p.progress), Some(1.0));
        // Within the interval: held back; not increasing: dropped.
        assert!(!progress.report(2.0, Some(10.0), None, Reporter::Handler));
        assert!(!progress.report(1.0, Some(10.0), None, Reporter::Handler));
        // The last one goes whatever the interval.
        assert!(progress.report(10.0, Some(10.0), Some("done"), Reporter::Handler));
        // The heartbeat stops once the handler reports.
        assert!(!progress.report(11.0, None, None, Reporter::Heartbeat));
        progress.close();
        assert!(!progress.report(20.0, Some(30.0), None, Reporter::Handler));
        // What waited when the progress closed is still sent, then nothing.
        assert_eq!(progress.next().await.map(|p| p.progress), Some(10.0));
        assert_eq!(progress.next().await.map(|p| p.progress), None);
    }

    /// A client that does not read costs one waiting notification: a newer report replaces
    /// the one not yet taken.
    #[tokio::test]
    async fn unsent_progress_is_replaced_not_queued() {
        let token = ProgressToken(rmcp::model::NumberOrString::Number(8));
        let progress = Progress::new(token, Duration::ZERO);
        for done in 1..=1000 {
            assert!(progress.report(f64::from(done), None, None, Reporter::Handler));
        }
        assert_eq!(progress.next().await.map(|p| p.progress), Some(1000.0));
        progress.close();
        assert!(progress.next().await.is_none());
    }
}
