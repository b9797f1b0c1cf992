//! Bare rmcp's accept loop, the plain baseline's: each connection served by hyper's HTTP/1 with
//! nothing of this library's (no limit, no watch, no linger), so that a service measured on it
//! is measured alone. The `plain_server` serves rmcp's service on it ([`serve_rmcp`]), and the
//! `bench_server` can serve this library's server the same way, or its whole HTTP endpoint
//! (`--rmcp-service`, `--mounted`), to tell what the HTTP endpoint costs from what the handler and
//! the accept loop do.

use std::sync::Arc;

use hyper::body::{Body, Incoming};
use hyper::service::Service;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use mcp_fusion::rmcp::ServerHandler;
use mcp_fusion::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use mcp_fusion::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
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

/// `handler` on rmcp's streamable HTTP service alone, on this loop: stateless and answering
/// JSON, or with sessions (rmcp's own default: answers as event streams).
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let plain = mcp_fusion_drivers::plain::Plain::new();
/// mcp_fusion_drivers::accept::serve_rmcp(listener, plain, false).await
/// # }
/// ```
pub async fn serve_rmcp<H>(listener: TcpListener, handler: H, sessions: bool) -> std::io::Result<()>
where
    H: ServerHandler + Clone,
{
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(sessions)
        .with_json_response(!sessions);
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let handle = hyper::service::service_fn(move |request| {
        let service = service.clone();
        async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
    });
    serve(listener, handle).await
}
