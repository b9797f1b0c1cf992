//! Bare rmcp's accept loop, the plain baseline's: each connection served by hyper's HTTP/1 with
//! nothing of this library's (no limit, no watch, no linger), so that a service measured on it
//! is measured alone. The `plain_server` serves rmcp's service on it, and the `bench_server`
//! can serve this library's on it too (`--rmcp-service`, `--mounted`), to tell what the HTTP
//! layers cost from what the handler and the accept loop do.

use hyper::body::{Body, Incoming};
use hyper::service::Service;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Serves `service` on every connection `listener` accepts, until accepting fails.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let hello = hyper::service::service_fn(|_| async {
///     Ok::<_, std::convert::Infallible>(hyper::Response::new(String::from("hello")))
/// });
/// mcp_fusion_drivers::accept::serve(listener, hello).await
/// # }
/// ```
pub async fn serve<S, B>(listener: TcpListener, service: S) -> std::io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
