//! The `Host` and `Origin` layer: a request naming a host not in `HttpOptions::allowed_hosts`,
//! or a browser's origin not in `allowed_origins`, is refused before anything else reads it
//! (its body, its token), as rmcp refuses it (DNS rebinding). rmcp checks these headers first
//! in its own service, but under the layers that read the body: a forbidden `Host` with a body
//! that is no JSON-RPC message was told 400 about the body rather than 403 about the host.
//!
//! The check is rmcp's own, not a copy: the layer asks rmcp's service about the request's head
//! alone (its `Host`, `Origin` and URI, with the method `OPTIONS`, which rmcp answers 405 once
//! the headers pass), so the rules (ports, IPv6 brackets, `null` origins, an empty list) are
//! always those of the rmcp that serves the request. What rmcp allowed is remembered (at most
//! [`REMEMBERED`] heads, the usual few of a deployment), so that a request whose `Host` and
//! `Origin` were allowed before costs a lookup, not a second pass through rmcp's service.
//! One rule is the layer's own, stricter than rmcp's: a request with more than one `Host` is
//! answered 400, as RFC 9112 §3.2 requires (rmcp would judge the first alone).

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::Empty;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower_service::Service;

use super::next::{self, Inner, Next};
use super::reply::{Reply, text};
use crate::server::core::Server;

/// How many allowed heads (URI authority, `Host`, `Origin`) are remembered; past it, rmcp
/// decides each request again (nothing grows).
pub(crate) const REMEMBERED: usize = 64;

/// The `Host` and `Origin` layer over `S`.
#[derive(Clone)]
pub(crate) struct Hosts<S> {
    pub(crate) inner: S,
    /// The rmcp service whose rules decide (shared: a clone of it copies its settings).
    pub(crate) rmcp: Arc<StreamableHttpService<Server, LocalSessionManager>>,
    /// The heads rmcp allowed.
    pub(crate) allowed: Arc<std::sync::RwLock<foldhash::HashSet<Box<[u8]>>>>,
}

/// What rmcp's check reads of a request: its URI's authority, its `Host` and `Origin` values,
/// on the stack when they fit (the usual head: no allocation to look it up), and boxed only
/// when it is remembered.
struct HeadKey {
    inline: [u8; HeadKey::INLINE],
    len: usize,
    spilled: Option<Vec<u8>>,
    /// How many `Host` values the request carries.
    hosts: usize,
}

impl HeadKey {
    const INLINE: usize = 160;

    fn of<B>(request: &Request<B>) -> Self {
        let mut key = HeadKey {
            inline: [0; HeadKey::INLINE],
            len: 0,
            spilled: None,
            hosts: 0,
        };
        if let Some(authority) = request.uri().authority() {
            key.push(authority.as_str().as_bytes());
        }
        for (name, host) in [(header::HOST, true), (header::ORIGIN, false)] {
            for value in request.headers().get_all(&name) {
                key.hosts += usize::from(host);
                key.push(&[0]);
                key.push(value.as_bytes());
            }
            key.push(&[1]);
        }
        key
    }

    fn push(&mut self, bytes: &[u8]) {
        if let Some(spilled) = &mut self.spilled {
            spilled.extend_from_slice(bytes);
            return;
        }
        let end = self.len + bytes.len();
        match self.inline.get_mut(self.len..end) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len = end;
            }
            None => {
                let mut spilled = Vec::with_capacity(end * 2);
                spilled.extend_from_slice(&self.inline[..self.len]);
                spilled.extend_from_slice(bytes);
                self.spilled = Some(spilled);
            }
        }
    }

    fn as_slice(&self) -> &[u8] {
        self.spilled.as_deref().unwrap_or(&self.inline[..self.len])
    }
}

impl<S, B> Service<Request<B>> for Hosts<S>
where
    S: Inner<Request<B>>,
    B: Send + 'static,
{
    type Response = Reply;
    type Error = std::convert::Infallible;
    type Future = Next<S::Future>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let key = HeadKey::of(&request);
        // RFC 9112 §3.2: a request with more than one `Host` is answered 400 (rmcp reads the
        // first, a proxy in front may have routed by another).
        if key.hosts > 1 {
            return Next::now(text(
                StatusCode::BAD_REQUEST,
                "Bad Request: more than one Host header",
            ));
        }
        let allowed = (self.allowed.read()).is_ok_and(|allowed| allowed.contains(key.as_slice()));
        if allowed {
            return Next::on(self.inner.call(request));
        }
        self.ask_rmcp(request, key.as_slice().into())
    }
}

impl<S> Hosts<S> {
    /// A head not seen yet: rmcp's answer to it, remembered when it allows it. (Out of line:
    /// the usual request's path stays small.)
    #[cold]
    #[inline(never)]
    fn ask_rmcp<B>(&self, request: Request<B>, key: Box<[u8]>) -> Next<S::Future>
    where
        S: Inner<Request<B>>,
        B: Send + 'static,
    {
        let inner = self.inner.clone();
        let allowed = Arc::clone(&self.allowed);
        let rmcp = Arc::clone(&self.rmcp);
        let mut head = Request::builder()
            .method(Method::OPTIONS)
            .uri(request.uri().clone());
        for name in [header::HOST, header::ORIGIN] {
            for value in request.headers().get_all(&name) {
                head = head.header(&name, value);
            }
        }
        let head = head.body(Empty::<Bytes>::new());
        Next::own(async move {
            // Built from a request's own URI and header values: it cannot fail to build.
            if let Ok(head) = head {
                let told = rmcp.handle(head).await;
                if told.status() != StatusCode::METHOD_NOT_ALLOWED {
                    return told;
                }
                if let Ok(mut allowed) = allowed.write()
                    && allowed.len() < REMEMBERED
                {
                    allowed.insert(key);
                }
            }
            next::call(inner, request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use tower::ServiceExt;

    /// The layer over a service that answers `reached`.
    fn layer() -> Hosts<
        impl Service<Request<()>, Response = Reply, Error = std::convert::Infallible, Future: Send>
        + Clone
        + Send
        + 'static,
    > {
        let reached = tower::service_fn(|_: Request<()>| async {
            Ok::<_, std::convert::Infallible>(Reply::new(Full::from("reached").boxed()))
        });
        let server = crate::Server::builder("t", "1").build().unwrap();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(["localhost", "127.0.0.1"])
            .with_allowed_origins(["http://localhost:5173"])
            .enforce_origin_validation();
        let rmcp = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        Hosts {
            inner: reached,
            rmcp: Arc::new(rmcp),
            allowed: Default::default(),
        }
    }

    /// The status and body a request with `headers` gets from `layer`.
    async fn status_of<S>(layer: &Hosts<S>, headers: &[(&str, &str)]) -> (StatusCode, String)
    where
        S: Service<Request<()>, Response = Reply, Error = std::convert::Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send,
    {
        let mut request = Request::post("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let reply = layer
            .clone()
            .oneshot(request.body(()).unwrap())
            .await
            .unwrap();
        let status = reply.status();
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// The status and body a request with `headers` gets from a new layer.
    async fn status(headers: &[(&str, &str)]) -> (StatusCode, String) {
        status_of(&layer(), headers).await
    }

    /// What rmcp allowed is remembered, at most `REMEMBERED` heads; what it refused never is.
    #[tokio::test]
    async fn allowed_heads_are_remembered_within_a_bound() {
        let layer = layer();
        for port in 0..100 {
            let host = format!("127.0.0.1:{port}");
            let reached = status_of(&layer, &[("host", &host)]).await;
            assert_eq!(reached.0, StatusCode::OK);
            let refused = status_of(&layer, &[("host", "evil.example")]).await;
            assert_eq!(refused.0, StatusCode::FORBIDDEN);
        }
        assert_eq!(layer.allowed.read().unwrap().len(), REMEMBERED);
        let again = status_of(&layer, &[("host", "127.0.0.1:3")]).await;
        assert_eq!(again.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn a_forbidden_host_or_origin_is_refused_before_the_layers_under_it() {
        let reached = (StatusCode::OK, "reached".to_owned());
        assert_eq!(status(&[("host", "127.0.0.1:8080")]).await, reached);
        assert_eq!(status(&[("host", "LOCALHOST")]).await, reached);
        let origin = [("host", "localhost"), ("origin", "http://localhost:5173")];
        assert_eq!(status(&origin).await, reached);
        let (code, told) = status(&[("host", "evil.example")]).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{told}");
        assert!(told.contains("Host"), "{told}");
        let evil = [("host", "localhost"), ("origin", "https://evil.example")];
        let (code, told) = status(&evil).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{told}");
        assert!(told.contains("Origin"), "{told}");
        // No Host and no authority: rmcp's 400.
        assert_eq!(status(&[]).await.0, StatusCode::BAD_REQUEST);
        // Two: 400 whatever they are (RFC 9112 §3.2), though rmcp would read the first alone.
        let two = [("host", "localhost"), ("host", "evil.example")];
        let (code, told) = status(&two).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{told}");
        assert!(told.contains("more than one Host"), "{told}");
        let same = [("host", "localhost"), ("host", "localhost")];
        assert_eq!(status(&same).await.0, StatusCode::BAD_REQUEST);
    }
}
