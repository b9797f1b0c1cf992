//! Serving on stdin/stdout.

mod flights;
mod lines;
mod options;
mod transport;
mod writer;

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::server::core::Server;
use crate::server::serve::{Serve, ServeError, Shutdown};
pub use options::StdioOptions;
use transport::StdioTransport;

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
    /// handlers see no [`Caller`](crate::tool::Caller).
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
        // The fast lane, the one place stdio calls into it (`server::lane`).
        let lane = options
            .fast_path
            .then(|| crate::server::lane::StdioLane::new(self.clone()));
        let peer = std::sync::Arc::default();
        let transport = StdioTransport::new(io, &options, drain, shutdown, lane, Arc::clone(&peer));
        let running = self
            .serve(transport)
            .await
            .map_err(|e| ServeError::new("initialization failed", e))?;
        // The session began: the calls the transport answers itself reach the client too.
        let _ = peer.set(running.peer().clone());
        running
            .waiting()
            .await
            .map_err(|e| ServeError::new("the serving task failed", e))?;
        Ok(())
    }
}
