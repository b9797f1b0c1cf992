//! Serving streamable HTTP: one endpoint whose steps end in rmcp's streamable HTTP service
//! (`service`), on hyper, under an accept loop of our own (`listener`, `connection`), so that
//! every limit a hostile client could push on holds.

pub(super) mod body;
mod connection;
mod drain;
mod headers;
mod hosts;
mod listener;
#[cfg(feature = "oauth")]
mod oauth;
mod options;
mod parsing;
mod path;
pub(super) mod reply;
mod service;
mod sessions;

pub use options::{ConnectionOptions, HttpOptions};
pub use service::HttpService;

pub(crate) use headers::SESSION_ID;
pub(crate) use parsing::ParsePlace;
pub(crate) use sessions::{SessionIds, Sessions, refused};

use crate::server::core::Server;
use crate::server::serve::{Serve, ServeError};

impl Server {
    /// Serves streamable HTTP on `listener` (bind it to loopback unless you mean otherwise),
    /// within the limits of `options`, until the listener fails for good, or, with
    /// [`Serve::with_graceful_shutdown`], until the signal: new requests are then answered 503
    /// with `Retry-After`, requests in flight finish within `options.drain`, sessions are
    /// closed, connections too, and the future completes.
    ///
    /// Malformed bodies are answered 400 with a JSON-RPC error (-32700, -32600), requests
    /// rmcp's reader cannot hold are repaired or answered as on stdio, and a call whose client
    /// goes away is stopped.
    ///
    /// Fails at once, serving nothing, with `options.oauth` set when a store keeping rate limits
    /// would keep verified callers' keys readable (a `RedisStore` without a key secret): each
    /// verified caller spends a budget named by its subject.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_fusion::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// let stop = async { tokio::signal::ctrl_c().await.unwrap_or(()) };
    /// server.serve_http(listener, Default::default()).with_graceful_shutdown(stop).await?;
    /// # Ok(()) }
    /// ```
    pub fn serve_http(self, listener: tokio::net::TcpListener, options: HttpOptions) -> Serve {
        Serve::new(move |shutdown| {
            Box::pin(async move {
                if let Some(refused) = self.refuses_to_serve(&options) {
                    let refused = std::io::Error::new(std::io::ErrorKind::InvalidInput, refused);
                    return Err(ServeError::new("it is refused as set up", refused));
                }
                self.start_sources();
                let drain = options.drain.unwrap_or_else(|| self.longest_deadline());
                let endpoint = self.endpoint(&options, Some(options.path.clone()));
                let stop = tokio_util::sync::CancellationToken::new();
                let mut accepting = tokio::spawn(listener::serve(
                    listener,
                    endpoint.endpoint(),
                    options.connections,
                    stop.clone(),
                ));
                let stopped = match shutdown {
                    None => accepting.await,
                    Some(signal) => tokio::select! {
                        stopped = &mut accepting => stopped,
                        () = signal => {
                            tracing::info!(?drain, "http: shutting down: new requests are refused, requests in flight may finish");
                            endpoint.drain(drain).await;
                            stop.cancel();
                            accepting.await
                        }
                    },
                };
                match stopped {
                    Ok(served) => {
                        served.map_err(|e| ServeError::new("the HTTP listener failed", e))
                    }
                    Err(e) => Err(ServeError::new("the HTTP accept loop failed", e)),
                }
            })
        })
    }
}
