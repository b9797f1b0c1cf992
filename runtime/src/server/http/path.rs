//! The path layer, when the server owns the whole HTTP server (`Server::serve_http`): any
//! path but the endpoint's (and the OAuth metadata's, which its layer serves) is `404`. A
//! mounted service is routed to by its application instead.

use http::{Request, StatusCode};
use tower_service::Service;

use super::next::Next;
use super::reply::{Reply, text};

/// The path layer over `S`: the paths it lets through.
#[derive(Clone)]
pub(crate) struct Path<S> {
    pub(crate) inner: S,
    /// `None` lets every path through (a mounted service).
    pub(crate) paths: Option<std::sync::Arc<[String]>>,
}

impl<S, B> Service<Request<B>> for Path<S>
where
    S: Service<Request<B>, Response = Reply, Error = std::convert::Infallible>,
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
        let served = self
            .paths
            .as_ref()
            .is_none_or(|paths| paths.iter().any(|p| p == request.uri().path()));
        match served {
            true => Next::on(self.inner.call(request)),
            false => Next::now(text(StatusCode::NOT_FOUND, "Not Found")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use tower::ServiceExt;

    #[tokio::test]
    async fn only_the_endpoint_is_served() {
        let ok = tower::service_fn(|_: Request<()>| async {
            Ok::<_, std::convert::Infallible>(Reply::new(Full::default().boxed()))
        });
        let layer = Path {
            inner: ok,
            paths: Some(["/mcp".to_owned()].into()),
        };
        let status = |path: &'static str| {
            let layer = layer.clone();
            async move {
                let request = Request::get(path).body(()).unwrap();
                layer.oneshot(request).await.unwrap().status()
            }
        };
        assert_eq!(status("/mcp").await, StatusCode::OK);
        assert_eq!(status("/mcp/").await, StatusCode::NOT_FOUND);
        assert_eq!(status("/").await, StatusCode::NOT_FOUND);
        let mounted = Path {
            paths: None,
            ..layer.clone()
        };
        let request = Request::get("/anything").body(()).unwrap();
        assert_eq!(
            mounted.oneshot(request).await.unwrap().status(),
            StatusCode::OK
        );
    }
}
