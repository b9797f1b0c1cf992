//! Serving on stdin/stdout.

use rmcp::ServiceExt;

use super::{ServeError, Server, stdio_guard};

impl Server {
    /// Serves on stdin/stdout until the client disconnects. Every request with an id is
    /// answered, including valid JSON that rmcp's reader cannot hold (nesting deeper than 128,
    /// numbers beyond `f64`, lone surrogate escapes).
    ///
    /// When stdin/stdout are pipes (as when a client starts the server), they are read and
    /// written without tokio's blocking thread pool: several times the throughput with calls in
    /// flight. This needs a runtime with IO enabled (`#[tokio::main]` enables it).
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self
            .serve(stdio_guard::StdioGuard::new(rmcp::transport::stdio_pipes()))
            .await
            .map_err(|e| ServeError::new("initialization failed", e))?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::new("the serving task failed", e))?;
        Ok(())
    }
}
