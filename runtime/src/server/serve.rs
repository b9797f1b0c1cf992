//! Serving in progress ([`Serve`], on stdio or streamable HTTP), its graceful shutdown, and why
//! it stopped early ([`ServeError`]).

use crate::tool::BoxFuture;

/// Serving in progress, on stdio or streamable HTTP: `.await` it. With
/// [`with_graceful_shutdown`](Serve::with_graceful_shutdown), it stops on a signal: new
/// requests are refused (HTTP: 503 with `Retry-After`; stdio: a call SERVER_BUSY, `Tool "{tool}"
/// cannot take calls right now.`, any other request a JSON-RPC error), the requests in flight
/// (calls, a `resources/read` of your handler, ...) finish within the drain period, sessions
/// are closed, and the future completes.
///
/// ```no_run
/// # async fn run(server: mcp_fusion::Server) -> Result<(), mcp_fusion::server::ServeError> {
/// use mcp_fusion::server::StdioOptions;
///
/// let stop = async { tokio::signal::ctrl_c().await.unwrap_or(()) };
/// server.serve_stdio(StdioOptions::default()).with_graceful_shutdown(stop).await
/// # }
/// ```
#[must_use = "serving starts when it is awaited"]
pub struct Serve {
    run: Box<Run>,
    shutdown: Option<Shutdown>,
}

/// A shutdown signal.
pub(crate) type Shutdown = BoxFuture<'static, ()>;

/// What serves until it stops, given its shutdown signal.
type Run = dyn FnOnce(Option<Shutdown>) -> BoxFuture<'static, Result<(), ServeError>> + Send;

impl Serve {
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    pub(crate) fn new(
        run: impl FnOnce(Option<Shutdown>) -> BoxFuture<'static, Result<(), ServeError>>
        + Send
        + 'static,
    ) -> Self {
        Serve {
            run: Box::new(run),
            shutdown: None,
        }
    }

    /// Stops serving gracefully once `signal` completes (a SIGTERM, Ctrl-C, an application's
    /// own shutdown).
    pub fn with_graceful_shutdown(
        mut self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("graceful", &self.shutdown.is_some())
            .finish_non_exhaustive()
    }
}

impl IntoFuture for Serve {
    type Output = Result<(), ServeError>;
    type IntoFuture = BoxFuture<'static, Result<(), ServeError>>;

    fn into_future(self) -> Self::IntoFuture {
        (self.run)(self.shutdown)
    }
}

/// Why serving stopped early: what failed, with the underlying error as its
/// [`source`](std::error::Error::source).
///
/// ```
/// use mcp_fusion::server::ServeError;
///
/// fn report(error: &ServeError) -> String {
///     let cause = std::error::Error::source(error).map(|e| e.to_string());
///     format!("{error}: {}", cause.unwrap_or_default())
/// }
/// # let _ = report;
/// ```
#[derive(Debug)]
pub struct ServeError {
    stage: &'static str,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl ServeError {
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    pub(crate) fn new(
        stage: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ServeError {
            stage,
            source: Box::new(source),
        }
    }
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the MCP server stopped: {}", self.stage)
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}
