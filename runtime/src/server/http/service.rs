//! The streamable HTTP endpoint: one service over rmcp's `StreamableHttpService`, whose
//! steps each request meets in turn, each a function of its own module (tested alone there):
//!
//! 1. the drain (`Draining::admit`): counts the POSTs being answered; refuses everything `503`
//!    once a graceful shutdown begins;
//! 2. the path (`Paths`, when the server owns the whole HTTP server);
//! 3. `Host` and `Origin` by rmcp's rules, before anything reads the request (`Hosts`: a
//!    service of rmcp's judges each head once; the one that serves does not judge again);
//! 4. the bearer token, before the body is read (feature `oauth`: `Guard::serve`);
//! 5. the body (`Limits::read_request`), within its size and time, parsed within the
//!    `max_parsing` budget (bodies of the largest size at a time, smaller ones sharing it by
//!    size), and what it is ([`Parsed`]) handed to the steps after it that read it;
//! 6. `403 insufficient_scope` for a call the token may not make (feature `oauth`:
//!    `Guard::check_scopes`);
//! 7. the cap on live sessions (`SessionCap`);
//! 8. the fast lane (`server::lane::http`, with `fast_path` on): plain requests answered as
//!    rmcp would answer them, on a stateless server and in a session;
//! 9. rmcp's service: sessions (rmcp's, with one request per id in flight in each:
//!    [`Sessions`]), streams of events, the MCP dispatch to the server (the body it reads gives
//!    back its parse place once rmcp has parsed it).
//!
//! A request's steps are one future, boxed once, with rmcp's own inside it: a step hands the
//! next what it learnt of the message as an argument, and what the core reads (the verified
//! caller, the parse place) in the request's extensions.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use super::body::{Limits, Parsed, ReadBody};
use super::drain::{Answering, Draining};
use super::hosts::{Hosts, Unknown};
use super::options::HttpOptions;
use super::parsing::Parsing;
use super::path::Paths;
use super::reply::{Reply, guarded};
use super::sessions::{SessionCap, Sessions};
use crate::server::core::Server;
use crate::server::lane::Lane;
use crate::server::request::boxed;
use crate::tool::BoxFuture;

/// The endpoint's steps, with what each keeps.
pub(crate) struct Endpoint {
    draining: Arc<Draining>,
    paths: Paths,
    hosts: Hosts,
    #[cfg(feature = "oauth")]
    guard: Option<super::oauth::Guard>,
    limits: Limits,
    cap: SessionCap,
    /// The fast lane, the one place HTTP calls into it (`server::lane::http`).
    lane: Option<Lane>,
    rmcp: StreamableHttpService<Server, Sessions>,
}

impl Endpoint {
    /// The answer to `request`, its body carrying `guard` (the caller's, if any) and a POST's
    /// place in the drain's count until it is written or dropped, handed to `finish` (what the
    /// caller's service answers). The drain decides at once; the rest is one future, boxed: a
    /// connection keeps no room for it between requests (hyper would otherwise keep room for
    /// the largest a request makes in each connection's state, held or not).
    ///
    /// The steps' futures are made, moved and boxed for every request, so each holds what it
    /// needs once: a step is a function returning its `async move` block, not an `async fn`
    /// (which keeps a second copy of every argument it takes: rust-lang/rust#62958), and
    /// passes what it learnt on as arguments.
    pub(crate) fn call<B, G, T>(
        self: &Arc<Self>,
        request: Request<B>,
        guard: Option<G>,
        finish: fn(Reply) -> T,
    ) -> BoxFuture<'static, T>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        G: Send + Sync + Unpin + 'static,
        T: 'static,
    {
        match self.draining.admit(&request) {
            Ok(answering) => boxed(|| Finishing {
                answer: Arc::clone(self).answer(request),
                then: Some((answering, guard, finish)),
            }),
            Err(refused) => Box::pin(async move { finish(carrying(*refused, None, guard)) }),
        }
    }

    /// Steps 2 to 4: the path, the `Host` and `Origin`, the bearer token.
    #[allow(clippy::manual_async_fn)] // an `async fn` keeps its arguments twice: rust#62958
    fn answer<B>(self: Arc<Self>, request: Request<B>) -> impl Future<Output = Reply>
    where
        B: http_body::Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        async move {
            if let Some(refused) = self.paths.refusal(&request) {
                return refused;
            }
            match self.hosts.check(&request) {
                Ok(()) => {}
                Err(Unknown::Refused(refused)) => return *refused,
                Err(Unknown::Ask(asked)) => {
                    if let Some(refused) = asked.await {
                        return refused;
                    }
                }
            }
            // Boxed: the guard's future holds the rest's, which a server without OAuth would
            // otherwise make room for in every request's.
            #[cfg(feature = "oauth")]
            if let Some(guard) = &self.guard {
                return boxed(|| guard.serve(request, |request| self.read(request))).await;
            }
            self.read(request).await
        }
    }

    /// Step 5, the body, then the steps after it.
    fn read<B>(&self, request: Request<B>) -> impl Future<Output = Reply>
    where
        B: http_body::Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.limits
            .read_request(request, |request, parsed| self.read_after(request, parsed))
    }

    /// Steps 6 to 9: the scopes, the session cap, the fast lane, rmcp.
    #[allow(clippy::manual_async_fn)] // an `async fn` keeps its arguments twice: rust#62958
    fn read_after(
        &self,
        mut request: Request<ReadBody>,
        mut parsed: Option<Parsed>,
    ) -> impl Future<Output = Reply> {
        async move {
            #[cfg(feature = "oauth")]
            if let Some(guard) = &self.guard
                && let Err(refused) = guard.check_scopes(&request, &mut parsed)
            {
                return *refused;
            }
            if let Some(refused) = self.cap.refusal(request.headers(), parsed.as_ref()).await {
                return refused;
            }
            if let Some(lane) = &self.lane
                && let Some(parsed) = &mut parsed
            {
                lane.cancel(&request, parsed);
                if let Some(plain) = parsed.plain.take() {
                    // Boxed, as rmcp's answer is: the endpoint's own future stays small, made
                    // and moved for every request.
                    match boxed(|| lane.answer(request, plain)).await {
                        Ok(answered) => return answered,
                        Err(given_back) => request = given_back,
                    }
                }
            }
            // Nothing after this reads the facts: they go before rmcp's answer runs.
            drop(parsed);
            boxed(|| self.rmcp.handle(request)).await
        }
    }
}

pin_project_lite::pin_project! {
    /// An admitted request's future: the steps' answer, carrying what its body carries
    /// (`carrying`), handed to `finish`. A future of its own, not an `async` block: a block
    /// would keep the steps' future twice, as what it captured and as what it awaits
    /// (rust-lang/rust#108906).
    struct Finishing<F, G, T> {
        #[pin]
        answer: F,
        then: Option<(Option<Answering>, Option<G>, fn(Reply) -> T)>,
    }
}

impl<F, G, T> Future for Finishing<F, G, T>
where
    F: Future<Output = Reply>,
    G: Send + Sync + Unpin + 'static,
{
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = self.project();
        let reply = std::task::ready!(this.answer.poll(cx));
        let (answering, guard, finish) = this.then.take().expect("not polled after it ended");
        Poll::Ready(finish(carrying(reply, answering, guard)))
    }
}

/// `reply`, its body carrying `answering` and `guard`, when there is either.
fn carrying<G: Send + Sync + Unpin + 'static>(
    reply: Reply,
    answering: Option<Answering>,
    guard: Option<G>,
) -> Reply {
    match (answering, guard) {
        (None, None) => reply,
        (answering, guard) => guarded(reply, (answering, guard)),
    }
}

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
    endpoint: Arc<Endpoint>,
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
        self.endpoint.draining.drain(drain).await;
        self.closing.cancel();
    }

    /// The endpoint, for the accept loop.
    pub(super) fn endpoint(&self) -> Arc<Endpoint> {
        Arc::clone(&self.endpoint)
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
        self.endpoint.call(request, None::<()>, Ok)
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

    /// The endpoint for `options`; `path`, when the server owns the whole HTTP server.
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
        // Two of rmcp's services: one judges `Host` and `Origin` for the hosts step (which
        // remembers what it allowed), and the one that serves sees only what it allowed, so it
        // does not judge them again (rmcp parses its lists for every request).
        let hosts = Hosts {
            rmcp: StreamableHttpService::new(
                move || Ok(server.clone()),
                manager.clone(),
                config.clone(),
            ),
            allowed: Default::default(),
        };
        let server = self.clone();
        let config = config.disable_allowed_hosts().disable_allowed_origins();
        let rmcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        #[cfg(feature = "oauth")]
        let guard = (options.oauth.clone())
            .map(|oauth| super::oauth::Guard::new(oauth, self.clone(), manager.clone()));
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
        let endpoint = Endpoint {
            draining: Arc::default(),
            paths: Paths(paths),
            hosts,
            #[cfg(feature = "oauth")]
            guard,
            limits: Limits {
                max_body_bytes: options.max_body_bytes,
                body_read_timeout: options.body_read_timeout,
                parsing: Parsing::new(options.max_parsing, options.max_body_bytes),
                parse_wait: options.parse_wait,
                keep_call_arguments: self.has_oauth(options),
                lane: options.fast_path,
                read_top: self.has_oauth(options),
                sessions: !options.stateless,
            },
            cap: SessionCap {
                sessions: manager,
                max_sessions: options.max_sessions,
            },
            lane: Lane::new(self, options, &sessions),
            rmcp,
        };
        HttpService {
            endpoint: Arc::new(endpoint),
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
