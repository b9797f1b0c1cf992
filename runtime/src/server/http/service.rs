//! The streamable HTTP endpoint as a stack of tower layers over rmcp's `StreamableHttpService`,
//! outermost first:
//!
//! 1. [`Drain`]: counts the POSTs being answered; refuses everything `503` once a graceful
//!    shutdown begins;
//! 2. [`Path`]: the endpoint's path only (when the server owns the whole HTTP server);
//! 3. [`Hosts`]: `Host` and `Origin` by rmcp's rules, before anything reads the request (a
//!    service of rmcp's judges each head once; the one that serves does not judge again);
//! 4. `Authenticate` (feature `oauth`): the bearer token, before the body is read;
//! 5. [`ReadBodies`]: the body within its size and time, parsed within the `max_parsing`
//!    budget (bodies of the largest size at a time, smaller ones sharing it by size);
//! 6. `Scopes` (feature `oauth`): `403 insufficient_scope` for a call the token may not make;
//! 7. [`SessionLimits`]: the cap on live sessions;
//! 8. [`FastPath`] (the fast lane, `server::lane::http`): plain requests answered as rmcp
//!    would answer them, on a stateless server and in a session (with `fast_path` off it
//!    only takes the body layer's facts off the request);
//! 9. rmcp's service: sessions (rmcp's, with one request per id in flight in each:
//!    [`Sessions`]), streams of events, the MCP dispatch to the server (the body it reads gives
//!    back its parse place once rmcp has parsed it).
//!
//! Each layer is a `tower_service::Service` of its own, tested alone with
//! `tower::ServiceExt::oneshot`; an inner layer reads what an outer one learnt (the verified
//! caller, the parsed message) from the request's extensions, and settles nothing of theirs.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use super::body::{Limits, ReadBodies};
use super::drain::{Drain, Draining};
use super::hosts::Hosts;
use super::options::HttpOptions;
use super::parsing::Parsing;
use super::path::Path;
use super::reply::Reply;
use super::sessions::{SessionLimits, Sessions};
use crate::server::core::Server;
use crate::server::lane::FastPath;
use crate::tool::BoxFuture;

/// rmcp's service, shared: a clone of `StreamableHttpService` copies its settings (the
/// allowed hosts and origins), which its own `Service::call` does for every request.
#[derive(Clone)]
pub(crate) struct Rmcp(Arc<StreamableHttpService<Server, Sessions>>);

impl Service<Request<super::body::ReadBody>> for Rmcp {
    type Response = Reply;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Reply, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<super::body::ReadBody>) -> Self::Future {
        let rmcp = Arc::clone(&self.0);
        Box::pin(async move { Ok(rmcp.handle(request).await) })
    }
}

#[cfg(feature = "oauth")]
type Inside = super::oauth::Scopes<SessionLimits<FastPath<Rmcp>>>;
#[cfg(not(feature = "oauth"))]
type Inside = SessionLimits<FastPath<Rmcp>>;

#[cfg(feature = "oauth")]
type Authenticated<S> = super::oauth::Authenticate<S>;
#[cfg(not(feature = "oauth"))]
type Authenticated<S> = S;

/// The whole stack, outermost first.
pub(crate) type Stack = Drain<Path<Hosts<Authenticated<ReadBodies<Inside>>>>>;

/// The hardened streamable HTTP endpoint as a [`tower_service::Service`], to mount inside an
/// existing application beside its own routes and layers (axum: `Router::nest_service`). Every
/// limit of [`HttpOptions`] on requests holds (body size and time, parsing, Host and Origin,
/// sessions, OAuth); the connections ([`HttpOptions::connections`]) belong to the
/// application's own HTTP server, and the path to its router.
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
    stack: Stack,
    draining: Arc<Draining>,
    /// Ends every session and stream of rmcp's service.
    closing: CancellationToken,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService").finish_non_exhaustive()
    }
}

impl HttpService {
    /// From now on, answers every new request 503 with `Retry-After` (the requests already in
    /// flight go on), and completes once none is left or after `drain`: the first step of a
    /// graceful shutdown of the application that mounts it. Its sessions are closed then.
    pub async fn drain(&self, drain: Duration) {
        self.draining.drain(drain).await;
        self.closing.cancel();
    }

    /// The stack, for the accept loop.
    pub(super) fn stack(&self) -> Stack {
        self.stack.clone()
    }
}

impl<B> Service<Request<B>> for HttpService
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Reply;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Reply, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        Box::pin(self.stack.call(request))
    }
}

impl Server {
    /// The streamable HTTP endpoint as a service to mount in an application (see
    /// [`HttpService`]): the same server, answering with `options`.
    ///
    /// # Panics
    ///
    /// With `options.oauth` set, when a store keeping rate limits would keep verified callers'
    /// keys readable (a `RedisStore` without a key secret): each verified caller spends a
    /// budget named by its subject. [`serve_http`](Server::serve_http) returns the same reason
    /// as an error.
    pub fn http_service(&self, options: HttpOptions) -> HttpService {
        if let Some(refused) = self.refuses_to_serve(&options) {
            panic!("{refused}");
        }
        self.endpoint(&options, None)
    }

    /// Why the server cannot be served with `options`: with OAuth, each verified caller spends
    /// a budget of its own, named by its subject, which a store keeping rate limits must not
    /// keep readable.
    pub(super) fn refuses_to_serve(&self, options: &HttpOptions) -> Option<String> {
        if !self.has_oauth(options) || self.inner.unkeyed.is_empty() {
            return None;
        }
        let mut refused = "cannot serve with HttpOptions::oauth: each verified caller spends a \
            rate-limit budget of its own, named by its subject, but"
            .to_owned();
        for (i, why) in self.inner.unkeyed.iter().enumerate() {
            refused.push_str(if i == 0 { " " } else { "; and " });
            refused.push_str(why);
        }
        Some(refused)
    }

    /// The stack of layers for `options`; `path`, when the server owns the whole HTTP server.
    pub(super) fn endpoint(&self, options: &HttpOptions, path: Option<String>) -> HttpService {
        self.warn_unprotected(options);
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(options.session_keep_alive);
        let manager = Arc::new(manager);
        let sessions = Arc::new(Sessions::new(manager.clone()));
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
        // Two of rmcp's services: one judges `Host` and `Origin` for the hosts layer (which
        // remembers what it allowed), and the one that serves sees only what it allowed, so it
        // does not judge them again (rmcp parses its lists for every request).
        let hosts = Arc::new(StreamableHttpService::new(
            move || Ok(server.clone()),
            manager.clone(),
            config.clone(),
        ));
        let server = self.clone();
        let config = config.disable_allowed_hosts().disable_allowed_origins();
        let rmcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        let rmcp = Rmcp(Arc::new(rmcp));
        let inside = SessionLimits {
            // The fast lane, the one place HTTP calls into it (`server::lane::http`).
            inner: FastPath::new(rmcp, self, options, &sessions),
            sessions: manager.clone(),
            max_sessions: options.max_sessions,
        };
        #[cfg(feature = "oauth")]
        let guard = (options.oauth.clone())
            .map(|oauth| Arc::new(super::oauth::Guard::new(oauth, self.clone(), manager)));
        #[cfg(feature = "oauth")]
        let inside = super::oauth::Scopes {
            inner: inside,
            guard: guard.clone(),
        };
        let bodies = ReadBodies {
            inner: inside,
            limits: Arc::new(Limits {
                max_body_bytes: options.max_body_bytes,
                body_read_timeout: options.body_read_timeout,
                parsing: Parsing::new(options.max_parsing, options.max_body_bytes),
                parse_wait: options.parse_wait,
                keep_call_arguments: cfg!(feature = "oauth") && self.has_oauth(options),
                lane: options.fast_path,
                read_top: self.has_oauth(options),
                sessions: !options.stateless,
            }),
        };
        #[cfg(feature = "oauth")]
        let paths = path.map(|path| {
            let mut paths = vec![path];
            if let Some(guard) = &guard {
                paths.extend(guard.metadata_paths().iter().cloned());
            }
            paths.into()
        });
        #[cfg(not(feature = "oauth"))]
        let paths = path.map(|path| vec![path].into());
        #[cfg(feature = "oauth")]
        let authenticated = super::oauth::Authenticate {
            inner: bodies,
            guard,
        };
        #[cfg(not(feature = "oauth"))]
        let authenticated = bodies;
        let draining = Arc::new(Draining::default());
        HttpService {
            stack: Drain {
                inner: Path {
                    inner: Hosts {
                        inner: authenticated,
                        rmcp: hosts,
                        allowed: Default::default(),
                    },
                    paths,
                },
                draining: Arc::clone(&draining),
            },
            draining,
            closing,
        }
    }

    /// Whether `options` verify callers (feature `oauth`).
    fn has_oauth(&self, options: &HttpOptions) -> bool {
        #[cfg(feature = "oauth")]
        return options.oauth.is_some();
        #[cfg(not(feature = "oauth"))]
        {
            let _ = options;
            false
        }
    }

    /// Warns of calls that scopes would limit but that nothing verifies, and of calls OAuth
    /// verifies that no scope limits (a source's tools declaring none).
    fn warn_unprotected(&self, options: &HttpOptions) {
        let verified = self.has_oauth(options);
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
        #[cfg(feature = "oauth")]
        if verified {
            for source in self.inner.sources.iter() {
                for unscoped in source.unscoped() {
                    tracing::warn!(
                        source = %unscoped,
                        "http: OAuth verifies every caller, but no scope limits the tools of \
                         \"{unscoped}\" (its tools declare none, and none is configured: \
                         Upstream::scopes): every verified caller may call them"
                    );
                }
            }
        }
    }
}
