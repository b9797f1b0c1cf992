//! The typed client's connections: over stdio of a child process, in memory, over streamable
//! HTTP or any rmcp transport, each answering what the server asks with the client's
//! [`Answers`] and opening in its [`Era`](super::Era).

use rmcp::RoleClient;
use rmcp::service::ClientServiceExt;

use super::{Answers, Client, ClientError};

/// A connection kept open for a [`Client`]: dropping it closes the transport (and stops a
/// child server). It answers what the server asks with the client's [`Answers`].
pub type Connection = rmcp::service::RunningService<RoleClient, Answers>;

/// A client that answers nothing the server asks (it declares no capability).
impl Client {
    /// Starts `command` as a child process and connects to it over stdio. Keep the returned
    /// connection alive as long as the client is used.
    pub async fn spawn(
        command: tokio::process::Command,
    ) -> Result<(Client, Connection), ClientError> {
        Answers::new().spawn(command).await
    }

    /// Serves `server` in this process and connects to it, through the stdio transport over
    /// an in-memory pipe: every promise of the transport and the pipeline, no process and no
    /// socket. For tests, and for embedding a server in an application. Needs the `stdio`
    /// feature; the server stops when the connection is dropped.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_fusion::client::Client;
    /// use mcp_fusion::{Server, ToolError, tool};
    ///
    /// /// Pings.
    /// #[tool]
    /// async fn ping() -> Result<&'static str, ToolError> {
    ///     Ok("pong")
    /// }
    ///
    /// let server = Server::builder("s", "1").tool(PingTool).build()?;
    /// let (client, _connection) = Client::in_memory(server).await?;
    /// let pong: String = client.call_as("ping", serde_json::json!({})).await?;
    /// assert_eq!(pong, "pong");
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "stdio")]
    pub async fn in_memory(server: crate::Server) -> Result<(Client, Connection), ClientError> {
        Answers::new().in_memory(server).await
    }

    /// Connects over any rmcp client transport (stdio pipes, streamable HTTP, ...).
    pub async fn connect<T, E, A>(transport: T) -> Result<(Client, Connection), ClientError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Answers::new().connect(transport).await
    }

    /// Connects to a streamable HTTP endpoint (`http://127.0.0.1:8080/mcp`) with rmcp's HTTP
    /// client. Needs the `http-client` feature; TLS needs a reqwest TLS feature of your choice.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_fusion::client::ClientError> {
    /// let (client, _connection) = mcp_fusion::client::Client::connect_http("http://127.0.0.1:8080/mcp").await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "http-client")]
    pub async fn connect_http(url: &str) -> Result<(Client, Connection), ClientError> {
        Answers::new().connect_http(url).await
    }
}

impl Answers {
    /// Connects over any rmcp client transport, answering what the server asks.
    pub async fn connect<T, E, A>(self, transport: T) -> Result<(Client, Connection), ClientError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let lifecycle = self.era.lifecycle();
        let answers = self.clone();
        let connection = self
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(ClientError::transport)?;
        let client = Client::new(connection.peer().clone()).answering(answers);
        Ok((client, connection))
    }

    /// Serves `server` in this process and connects to it as [`Client::in_memory`] does,
    /// answering what the server asks. Needs the `stdio` feature.
    #[cfg(feature = "stdio")]
    pub async fn in_memory(
        self,
        server: crate::Server,
    ) -> Result<(Client, Connection), ClientError> {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_end);
        let options = crate::server::StdioOptions::default();
        tokio::spawn(async move {
            if let Err(e) = server.serve_io(read, write, options).await {
                tracing::debug!("an in-memory server stopped: {e}");
            }
        });
        self.connect(tokio::io::split(client_end)).await
    }

    /// Connects to a streamable HTTP endpoint as [`Client::connect_http`] does, answering what
    /// the server asks. Needs the `http-client` feature.
    #[cfg(feature = "http-client")]
    pub async fn connect_http(self, url: &str) -> Result<(Client, Connection), ClientError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        self.connect(transport).await
    }

    /// Starts `command` and connects to it over stdio as [`Client::spawn`] does, answering what
    /// the server asks.
    pub async fn spawn(
        self,
        command: tokio::process::Command,
    ) -> Result<(Client, Connection), ClientError> {
        let transport =
            rmcp::transport::TokioChildProcess::new(command).map_err(ClientError::transport)?;
        self.connect(transport).await
    }
}
