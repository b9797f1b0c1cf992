//! What the typed client answers when the server asks it (MCP elicitation, sampling, roots):
//! the handlers a [`Client`](super::Client) is connected with, each declaring its capability.

// Sampling and roots are deprecated by SEP-2577 in rmcp; servers still ask them.
#![allow(deprecated)]

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientInfo, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ListRootsResult, Root,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleClient};

use super::{Client, ClientError};
use crate::tool::BoxFuture;

type Elicit = dyn Fn(ElicitRequestParams) -> BoxFuture<'static, ElicitResult> + Send + Sync;
type Sample =
    dyn Fn(CreateMessageRequestParams) -> BoxFuture<'static, CreateMessageResult> + Send + Sync;

/// The client's answers to what a server asks it: a form for the user (elicitation), a
/// completion of the client's model (sampling), its roots. Each one given declares its
/// capability (`initialize`, and every 2026-07-28 request's `_meta`); a server never asks what
/// is not given. Connect with it: [`Answers::in_memory`], [`Answers::connect`],
/// [`Answers::connect_http`], [`Answers::spawn`]; a client without it declares nothing.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_fusion::client::Answers;
/// use mcp_fusion::rmcp::model::{ElicitResult, ElicitationAction};
/// use mcp_fusion::tools::ElicitForm;
/// use mcp_fusion::{Context, Server, ToolError, tool};
///
/// /// Your name.
/// #[derive(serde::Deserialize, ElicitForm)]
/// struct Name {
///     /// What you are called.
///     name: String,
/// }
///
/// /// Greets the user by the name they give.
/// #[tool]
/// async fn greet(f: Context) -> Result<String, ToolError> {
///     let name = f.elicit::<Name>("What is your name?").await?;
///     Ok(format!("Hello, {}!", name.accepted()?.name))
/// }
///
/// let server = Server::builder("s", "1").tool(GreetTool).build()?;
/// let answers = Answers::new().elicitation(|_form| async {
///     let content = serde_json::json!({"name": "Ada"});
///     ElicitResult::new(ElicitationAction::Accept).with_content(content)
/// });
/// let (client, _connection) = answers.in_memory(server).await?;
/// let said: String = client.call_as("greet", serde_json::json!({})).await?;
/// assert_eq!(said, "Hello, Ada!");
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct Answers {
    elicit: Option<Arc<Elicit>>,
    sample: Option<Arc<Sample>>,
    roots: Option<Arc<[Root]>>,
    tasks: bool,
}

impl std::fmt::Debug for Answers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answers")
            .field("elicitation", &self.elicit.is_some())
            .field("sampling", &self.sample.is_some())
            .field("roots", &self.roots)
            .field("tasks", &self.tasks)
            .finish()
    }
}

impl Answers {
    /// No answers: the client declares no capability.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers forms (MCP elicitation, form mode) with `answer`, as the user would.
    pub fn elicitation<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitResult> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |asked| Box::pin(answer(asked))));
        self
    }

    /// Answers sampling (the client's model) with `answer`.
    pub fn sampling<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CreateMessageResult> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |asked| Box::pin(answer(asked))));
        self
    }

    /// Lists `roots` when asked.
    pub fn roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.roots = Some(roots.into_iter().collect());
        self
    }

    /// Declares the tasks extension (SEP-2663): a call of an action that runs as a task is
    /// answered with a task ([`Client::start_task`]) instead of running while the call waits.
    ///
    /// ```
    /// let answers = mcp_fusion::client::Answers::new().tasks();
    /// assert!(answers.capabilities().supports_tasks());
    /// ```
    pub fn tasks(mut self) -> Self {
        self.tasks = true;
        self
    }

    /// What the client declares it can be asked.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.tasks {
            let extensions = capabilities.extensions.get_or_insert_with(Default::default);
            extensions.insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                rmcp::model::JsonObject::new(),
            );
        }
        if self.elicit.is_some() {
            let mut elicitation = rmcp::model::ElicitationCapability::default();
            elicitation.form = Some(Default::default());
            capabilities.elicitation = Some(elicitation);
        }
        if self.sample.is_some() {
            capabilities.sampling = Some(Default::default());
        }
        if self.roots.is_some() {
            capabilities.roots = Some(Default::default());
        }
        capabilities
    }
}

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
        use rmcp::ServiceExt;
        let connection = self
            .serve(transport)
            .await
            .map_err(ClientError::transport)?;
        Ok((Client::new(connection.peer().clone()), connection))
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

impl rmcp::ClientHandler for Answers {
    fn get_info(&self) -> ClientInfo {
        let mut info = ClientInfo::default();
        info.capabilities = self.capabilities();
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match &self.elicit {
            Some(answer) => Ok(answer(request).await),
            None => Err(ErrorData::method_not_found::<
                rmcp::model::ElicitationCreateRequestMethod,
            >()),
        }
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        match &self.sample {
            Some(answer) => Ok(answer(params).await),
            None => Err(ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >()),
        }
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        match &self.roots {
            Some(roots) => Ok(ListRootsResult::new(roots.to_vec())),
            None => Err(ErrorData::method_not_found::<
                rmcp::model::ListRootsRequestMethod,
            >()),
        }
    }
}
