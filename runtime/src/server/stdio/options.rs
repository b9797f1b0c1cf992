//! How the stdio transport reads and writes, and the memory that costs at most.

use std::time::Duration;

/// How [`Server::serve_stdio`](crate::Server::serve_stdio) reads and writes stdin/stdout, and the memory that costs at
/// most.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::StdioOptions;
///
/// let mut options = StdioOptions::default();
/// options.drain = Some(Duration::from_secs(10));
/// assert_eq!(options.max_pending_answers, 64);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    /// The longest message read, in bytes (1 MiB by default: twice the longest arguments a
    /// model writes in one call, 128k tokens). A longer line is never held: it is answered
    /// -32600 when its `id` can be read, and dropped with a log line otherwise.
    ///
    /// Reading a message costs far more than its length when it is made of the smallest JSON
    /// values (`[0,0,…]`): 40 bytes of `serde_json` value per 2-byte `0,`, and rmcp's message
    /// types buffer the message several times over before that. The worst case is about 130
    /// times the line: a 1 MiB line of zeros takes the server from 10 to 136 MiB at its peak
    /// (`tests/it/stdio_serving.rs`, on Linux), freed once read. Lines are read one at a time,
    /// so this is the bound for the whole input.
    pub max_line_bytes: usize,
    /// How many requests may wait for their answer to be written (64 by default): calls
    /// running and answers waiting for stdout. Reading pauses while that many are pending, so
    /// neither a flood of requests nor a client that does not read stdout can grow the server;
    /// the next message (a cancellation too) waits in the pipe until a call ends. Memory held
    /// is then at most this many requests as read (their arguments as `serde_json` values, up to
    /// about 40 times the line for the smallest values) and their answers (an envelope is at
    /// most 24 KiB; a successful result is as large as the handler makes it).
    pub max_pending_answers: usize,
    /// How long calls in flight may still run once stdin is closed, to write their answers
    /// before the server returns; calls still running then are stopped. `None` (the default)
    /// waits as long as the longest deadline of any action (`timeout = ".."`), or 30 s when an
    /// action has none.
    pub drain: Option<Duration>,
    /// Whether plain `tools/call`, `tools/list` and `ping` requests are answered by this
    /// transport itself once the session has begun (`true`, the default): read from the line
    /// into the few fields they carry and answered with one serialisation, rather than through
    /// rmcp's message types and service loop. The answers are the same; anything else, and any
    /// request in another form (a progress token, per-request protocol metadata), goes to rmcp.
    /// `false` sends every message through rmcp (to compare, or to rule this out).
    pub fast_path: bool,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: 1 << 20,
            max_pending_answers: 64,
            drain: None,
            fast_path: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults are part of the memory bounds the docs state: changing one is a decision.
    #[test]
    fn defaults_are_pinned() {
        let options = StdioOptions::default();
        assert_eq!(options.max_line_bytes, 1024 * 1024);
        assert_eq!(options.max_pending_answers, 64);
        assert_eq!(options.drain, None);
        assert!(options.fast_path);
        assert_eq!(
            crate::server::core::DRAIN_WITHOUT_DEADLINE,
            Duration::from_secs(30)
        );
    }
}
