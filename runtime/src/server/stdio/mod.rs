//! Serving on stdin/stdout.

mod flights;
mod lines;
mod transport;
mod writer;

use std::time::Duration;

use rmcp::ServiceExt;

use crate::server::core::Server;
use crate::server::serve::{Serve, ServeError, Shutdown};
use transport::StdioTransport;

/// How [`Server::serve_stdio`] reads and writes stdin/stdout, and the memory that costs at
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
    /// (`tests/serving.rs`, on Linux), freed once read. Lines are read one at a time, so this
    /// is the bound for the whole input.
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

impl Server {
    /// Serves on stdin/stdout until the client closes stdin and the calls in flight are
    /// answered, or, with [`Serve::with_graceful_shutdown`], until the signal: new calls are
    /// then answered SERVER_BUSY (`Tool "{tool}" cannot take calls right now.`), the calls in
    /// flight finish within `options.drain`, and the future completes.
    ///
    /// Every request with an id is answered exactly once (ERRORS.md §1): including valid JSON
    /// that rmcp's reader cannot hold (nesting deeper than 128, numbers beyond `f64`, lone
    /// surrogate escapes), a request reusing the id of one in flight (-32600), and calls still
    /// running when stdin closes (within the drain period). A request the client cancels
    /// (`notifications/cancelled`) is stopped and gets no answer, as MCP requires.
    ///
    /// There is no access token on stdio (MCP authorization is for HTTP: the client that
    /// starts the server is trusted with it), so actions' OAuth scopes do not apply and
    /// handlers see no [`Caller`](crate::tools::Caller).
    ///
    /// When stdin/stdout are pipes (as when a client starts the server), they are read and
    /// written without tokio's blocking thread pool: several times the throughput with calls in
    /// flight. This needs a runtime with IO enabled (`#[tokio::main]` enables it).
    ///
    /// ```no_run
    /// # async fn run(server: mcp_fusion::Server) -> Result<(), mcp_fusion::server::ServeError> {
    /// use mcp_fusion::server::StdioOptions;
    ///
    /// let mut options = StdioOptions::default();
    /// options.max_pending_answers = 16;
    /// server.serve_stdio(options).await
    /// # }
    /// ```
    pub fn serve_stdio(self, options: StdioOptions) -> Serve {
        Serve::new(move |shutdown| {
            Box::pin(async move {
                self.start_sources();
                let (read, write) = rmcp::transport::stdio_pipes();
                self.serve_transport((read, write), options, shutdown).await
            })
        })
    }

    /// Serves the stdio transport (newline-delimited JSON-RPC, every promise of
    /// [`Server::serve_stdio`]) on any pair of byte streams: a socket, a pipe, an in-memory
    /// duplex for tests and embedding.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::server::StdioOptions;
    /// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    ///
    /// let server = mcp_fusion::Server::builder("t", "1").build()?;
    /// let (client, server_end) = tokio::io::duplex(1 << 16);
    /// let (read, write) = tokio::io::split(server_end);
    /// let serving = tokio::spawn(server.serve_io(read, write, StdioOptions::default()).into_future());
    /// let (reply, mut request) = tokio::io::split(client);
    /// request.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await?;
    /// request.write_all(b"\n").await?;
    /// let mut line = String::new();
    /// BufReader::new(reply).read_line(&mut line).await?;
    /// assert_eq!(line.trim(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    /// # drop(request); let _ = serving.await; Ok(()) }
    /// ```
    pub fn serve_io<R, W>(self, read: R, write: W, options: StdioOptions) -> Serve
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        Serve::new(move |shutdown| {
            Box::pin(async move { self.serve_transport((read, write), options, shutdown).await })
        })
    }

    async fn serve_transport<R, W>(
        self,
        io: (R, W),
        options: StdioOptions,
        shutdown: Option<Shutdown>,
    ) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let drain = options.drain.unwrap_or_else(|| self.longest_deadline());
        let plain = options.fast_path.then(|| self.clone());
        let transport = StdioTransport::new(io, &options, drain, shutdown, plain);
        let running = self
            .serve(transport)
            .await
            .map_err(|e| ServeError::new("initialization failed", e))?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::new("the serving task failed", e))?;
        Ok(())
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
