//! Serving streamable HTTP.

use std::sync::Arc;

use super::{ServeError, Server};

/// How [`Server::serve_http`] serves streamable HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so replicas can sit behind a load balancer.
    pub stateless: bool,
    /// The path the MCP endpoint is mounted at.
    pub path: String,
    /// Host names accepted in `Host` (DNS-rebinding protection); loopback names by default.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
        }
    }
}

impl Server {
    /// Serves streamable HTTP on `listener` (bind it to loopback unless you mean otherwise)
    /// until the process ends.
    ///
    /// ```no_run
    /// # async fn run(server: mcp_fusion::server::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// server.serve_http(listener, Default::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
    ) -> Result<(), ServeError> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };

        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts)
            .with_legacy_session_mode(!options.stateless);
        if options.stateless {
            config = config.with_json_response(true);
        }
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service(&options.path, service);
        axum::serve(listener, router)
            .await
            .map_err(|e| ServeError::new("the HTTP listener failed", e))
    }
}
