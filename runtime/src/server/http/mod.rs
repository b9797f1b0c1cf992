//! Serving streamable HTTP: rmcp's streamable HTTP service behind a front of our own, on hyper
//! with an accept loop of our own, so that every limit a hostile client could push on holds.

mod accept;
mod front;
mod hot;

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::{Serve, ServeError, Server};
use front::Front;
pub(crate) use front::ParsePlace;

/// How [`Server::serve_http`] serves streamable HTTP: safe by default, every limit a knob.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::HttpOptions;
///
/// let mut options = HttpOptions::default();
/// options.stateless = true;
/// options.allowed_hosts = vec!["mcp.example.com".into()];
/// options.allowed_origins = vec!["https://app.example.com".into()];
/// options.max_sessions = 1_000;
/// assert_eq!(options.max_body_bytes, 1 << 20);
/// assert_eq!(options.session_keep_alive, Duration::from_secs(120));
/// ```
///
/// Memory at worst, with the defaults: bodies being read, at most `max_connections` × 1 MiB
/// (256 MiB); bodies being parsed, `max_parsing` at a time, each read twice over (once to
/// check it, once by rmcp, one after the other) at up to ~130 times its size for JSON of the
/// smallest values: 2 × 130 MiB; arguments that fail validation, one large call at a time at
/// up to ~200 times its size (`Schema::validate`): 206 MiB for 1 MiB of the smallest wrong
/// values; sessions, about 55 KiB each: 256 × 55 KiB (14 MiB).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so replicas can sit behind a load balancer.
    pub stateless: bool,
    /// The path the MCP endpoint is mounted at; any other path is 404.
    pub path: String,
    /// Host names accepted in `Host` (DNS-rebinding protection); loopback names by default.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in `Origin` (the MCP transport requires servers to check it): loopback
    /// origins, `http` and `https` on any port, by default. Requests without `Origin` (clients
    /// that are not browsers) pass; any other origin is refused 403. Entries need a scheme;
    /// `:*` matches any port (`https://app.example.com:*`).
    pub allowed_origins: Vec<String>,
    /// The largest request body, in bytes (1 MiB by default, as on stdio); a larger one is
    /// refused 413 before it is read, or as soon as it grows past the limit.
    pub max_body_bytes: usize,
    /// How many request bodies are parsed at once (2 by default): parsing JSON of small values
    /// takes ~130 times the body's size, so this bounds that memory whatever the traffic.
    pub max_parsing: usize,
    /// How long a client has to send a request's headers (10 s by default); an idle
    /// keep-alive connection must start its next request within it too.
    pub header_read_timeout: Duration,
    /// How long a client has to send a request's whole body once its headers are in (30 s by
    /// default); a slower one gets 408 and the connection is closed.
    pub body_read_timeout: Duration,
    /// How long a connection may go without a byte read or written while no request of it is
    /// being handled (60 s by default): a response stream its client stopped reading, say.
    /// Streams of events carry a keep-alive every 15 s, so a live one is never idle.
    pub idle_timeout: Duration,
    /// How many connections are open at once (256 by default). Past it, a new connection
    /// takes the place of the connection idle longest (no request in progress, or a request
    /// whose head is not complete), which is closed; with none idle it is answered 503 with
    /// `Retry-After` and closed.
    pub max_connections: usize,
    /// After a refusal that closes the connection (413, 408, 400, 503 at the connection cap),
    /// how long what the client still sends is read and dropped before the connection is
    /// closed (5 s by default), so that a client still writing its request reads the answer
    /// instead of a reset (nginx's lingering close). Every close lingers at most this long.
    pub linger_timeout: Duration,
    /// How many bytes a lingering close reads and drops at most (128 MiB by default).
    pub linger_max_bytes: u64,
    /// How many sessions live at once (256 by default); past it, `initialize` is answered 503
    /// with `Retry-After` and a JSON-RPC error (-32000) naming the limit.
    pub max_sessions: usize,
    /// How long a session lives without a message from its client (120 s by default; rmcp's
    /// own default is 300 s). A client whose session ended gets 404 and initializes again.
    pub session_keep_alive: Duration,
    /// At a graceful shutdown, how long calls in flight may still run before they are stopped;
    /// `None` (the default) waits as long as the longest deadline of any action, or 30 s when
    /// an action has none.
    pub drain: Option<Duration>,
    /// Stateless only: plain `tools/call` (without a progress token), `tools/list` and `ping`
    /// requests with plain headers are answered by this crate's front as rmcp would answer
    /// them (the same status and bytes), without rmcp's per-request service (on by default).
    pub fast_path: bool,
    /// MCP authorization (feature `oauth`): the server as an OAuth resource server. Every
    /// request must then carry a bearer token its verifier accepts (else `401`, before the
    /// body is read), its Protected Resource Metadata is served at the well-known paths, and
    /// a call of an action whose scopes the token lacks is answered `403`
    /// `insufficient_scope` (see [`auth`](crate::server::auth)). `None` by default.
    #[cfg(feature = "oauth")]
    pub oauth: Option<crate::server::auth::OAuth>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        let loopback = ["localhost", "127.0.0.1", "[::1]"];
        HttpOptions {
            stateless: false,
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: ["http", "https"]
                .iter()
                .flat_map(|scheme| {
                    loopback
                        .iter()
                        .map(move |host| format!("{scheme}://{host}:*"))
                })
                .collect(),
            max_body_bytes: 1 << 20,
            max_parsing: 2,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 256,
            linger_timeout: Duration::from_secs(5),
            linger_max_bytes: 128 << 20,
            max_sessions: 256,
            session_keep_alive: Duration::from_secs(120),
            drain: None,
            fast_path: true,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

/// The hardened streamable HTTP endpoint as a [`tower_service::Service`], to mount inside an
/// existing application beside its own routes and layers (axum: `Router::nest_service`). Every
/// limit of [`HttpOptions`] on requests holds (body size and time, parsing, Host and Origin,
/// sessions); the connection limits (`max_connections`, the header and idle timeouts, lingering
/// closes) belong to the application's own HTTP server, and `path` to its router.
///
/// ```
/// use mcp_fusion::server::HttpOptions;
/// use mcp_fusion::{Server, ToolError, tool};
///
/// /// Pings.
/// #[tool]
/// async fn ping() -> Result<&'static str, ToolError> {
///     Ok("pong")
/// }
///
/// let server = Server::builder("s", "1").tool(PingTool).build()?;
/// let mcp = server.http_service(HttpOptions::default());
/// // axum: `Router::new().route("/health", get(|| async { "ok" })).nest_service("/mcp", mcp)`
/// # let _ = mcp;
/// # Ok::<(), mcp_fusion::server::BuildError>(())
/// ```
#[derive(Clone)]
pub struct HttpService {
    front: Arc<Front>,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService").finish_non_exhaustive()
    }
}

impl HttpService {
    /// From now on, answers every new request 503 with `Retry-After` (the calls already in
    /// flight go on), and completes once none is left or after `drain`: the first step of a
    /// graceful shutdown of the application that mounts it. Its sessions are closed then.
    pub async fn drain(&self, drain: Duration) {
        self.front.drain(drain).await;
    }
}

impl<B> tower_service::Service<http::Request<B>> for HttpService
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = front::Reply;
    type Error = std::convert::Infallible;
    type Future = crate::tool::BoxFuture<'static, Result<front::Reply, std::convert::Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let front = self.front.clone();
        Box::pin(async move { Ok(front.handle(request).await) })
    }
}

impl Server {
    /// The streamable HTTP endpoint as a service to mount in an application (see
    /// [`HttpService`]): the same server, answering with `options`.
    pub fn http_service(&self, options: HttpOptions) -> HttpService {
        HttpService {
            front: Arc::new(self.front(&options, None)),
        }
    }

    fn front(&self, options: &HttpOptions, path: Option<String>) -> Front {
        #[cfg(feature = "oauth")]
        let verified = options.oauth.is_some();
        #[cfg(not(feature = "oauth"))]
        let verified = false;
        let scoped = self
            .definitions()
            .flat_map(|def| def.actions())
            .any(|action| !action.scopes().is_empty());
        if scoped && !verified {
            tracing::warn!(
                "http: actions declare OAuth scopes, but this server verifies no access token \
                 (HttpOptions::oauth, feature `oauth`): anyone who reaches it may call them"
            );
        }
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(options.session_keep_alive);
        let sessions = Arc::new(sessions);
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts.clone())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_legacy_session_mode(!options.stateless);
        if options.stateless {
            config = config.with_json_response(true);
        }
        let closing = config.cancellation_token.clone();
        let server = self.clone();
        let rmcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        Front::new(rmcp, sessions, options, path, closing, self.clone())
    }

    /// Serves streamable HTTP on `listener` (bind it to loopback unless you mean otherwise),
    /// within the limits of `options`, until the listener fails for good, or, with
    /// [`Serve::with_graceful_shutdown`], until the signal: new requests are then answered 503
    /// with `Retry-After`, calls in flight finish within `options.drain`, sessions are closed,
    /// connections too, and the future completes.
    ///
    /// Malformed bodies are answered 400 with a JSON-RPC error (-32700, -32600), requests
    /// rmcp's reader cannot hold are repaired or answered as on stdio, and a call whose client
    /// goes away is stopped.
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
                #[cfg(feature = "gateway")]
                self.start_mounts();
                let drain = options.drain.unwrap_or_else(|| self.longest_deadline());
                let front = Arc::new(self.front(&options, Some(options.path.clone())));
                let stop = tokio_util::sync::CancellationToken::new();
                let mut accepting = tokio::spawn(accept::serve(
                    listener,
                    front.clone(),
                    options,
                    stop.clone(),
                ));
                let stopped = match shutdown {
                    None => accepting.await,
                    Some(signal) => tokio::select! {
                        stopped = &mut accepting => stopped,
                        () = signal => {
                            tracing::info!(?drain, "http: shutting down: new requests are refused, calls in flight may finish");
                            front.drain(drain).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults are part of the bounds the docs state: changing one is a decision.
    #[test]
    fn defaults_are_pinned() {
        let options = HttpOptions::default();
        assert_eq!(options.max_body_bytes, 1024 * 1024);
        assert_eq!(options.max_parsing, 2);
        assert_eq!(options.header_read_timeout, Duration::from_secs(10));
        assert_eq!(options.body_read_timeout, Duration::from_secs(30));
        assert_eq!(options.idle_timeout, Duration::from_secs(60));
        assert_eq!(options.max_connections, 256);
        assert_eq!(options.linger_timeout, Duration::from_secs(5));
        assert_eq!(options.linger_max_bytes, 128 << 20);
        assert_eq!(options.max_sessions, 256);
        assert_eq!(options.session_keep_alive, Duration::from_secs(120));
        assert!(!options.stateless);
        assert_eq!(options.path, "/mcp");
        assert_eq!(options.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(
            options.allowed_origins,
            [
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ]
        );
    }
}
