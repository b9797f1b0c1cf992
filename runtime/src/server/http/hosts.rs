//! The `Host` and `Origin` layer: a request naming a host not in `HttpOptions::allowed_hosts`,
//! or a browser's origin not in `allowed_origins`, is refused before anything else reads it
//! (its body, its token), as rmcp refuses it (DNS rebinding). rmcp checks these headers first
//! in its own service, but under the layers that read the body: a forbidden `Host` with a body
//! that is no JSON-RPC message was told 400 about the body rather than 403 about the host.
//!
//! The check is rmcp's own, not a copy: the layer asks rmcp's service about the request's head
//! alone (its `Host`, `Origin` and URI, with the method `OPTIONS`, which rmcp answers 405 once
//! the headers pass), so the rules (ports, IPv6 brackets, `null` origins, an empty list) are
//! always those of the rmcp that serves the request.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::Empty;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower_service::Service;

use super::next;
use super::reply::Reply;
use crate::server::core::Server;
use crate::tool::BoxFuture;

/// The `Host` and `Origin` layer over `S`.
#[derive(Clone)]
pub(crate) struct Hosts<S> {
    pub(crate) inner: S,
    /// The rmcp service whose rules decide (shared: a clone of it copies its settings).
    pub(crate) rmcp: Arc<StreamableHttpService<Server, LocalSessionManager>>,
}

impl<S, B> Service<Request<B>> for Hosts<S>
where
    S: Service<Request<B>, Response = Reply, Error = std::convert::Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = Reply;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<Reply, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let inner = self.inner.clone();
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
        Box::pin(async move {
            // Built from a request's own URI and header values: it cannot fail to build.
            if let Ok(head) = head {
                let told = rmcp.handle(head).await;
                if told.status() != StatusCode::METHOD_NOT_ALLOWED {
                    return Ok(told);
                }
            }
            Ok(next::call(inner, request).await)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use tower::ServiceExt;

    /// The status and body a request with `headers` gets from the layer over a service that
    /// answers `reached`.
    async fn status(headers: &[(&str, &str)]) -> (StatusCode, String) {
        let mut request = Request::post("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
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
        let layer = Hosts {
            inner: reached,
            rmcp: Arc::new(rmcp),
        };
        let reply = layer.oneshot(request.body(()).unwrap()).await.unwrap();
        let status = reply.status();
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
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
    }
}
