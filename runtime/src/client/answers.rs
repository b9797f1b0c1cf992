//! What the typed client answers when the server asks it (MCP elicitation, sampling, roots):
//! the handlers a [`Client`](super::Client) is connected with, each declaring its capability.

// Sampling and roots are deprecated by SEP-2577 in rmcp; servers still ask them.
#![allow(deprecated)]

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientInfo, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsResult, ProtocolVersion, Root,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleClient};

use super::Era;
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
    pub(super) elicit: Option<Arc<Elicit>>,
    pub(super) sample: Option<Arc<Sample>>,
    pub(super) roots: Option<Arc<[Root]>>,
    tasks: bool,
    pub(super) era: Era,
    named: Option<Implementation>,
}

impl std::fmt::Debug for Answers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answers")
            .field("elicitation", &self.elicit.is_some())
            .field("sampling", &self.sample.is_some())
            .field("roots", &self.roots)
            .field("tasks", &self.tasks)
            .field("era", &self.era)
            .field("named", &self.named)
            .finish()
    }
}

impl Answers {
    /// No answers: the client declares no capability.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens connections in `era` ([`Era::Initialize`] by default).
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// The name and version the client gives of itself (`clientInfo`; rmcp's by default).
    pub fn named(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.named = Some(Implementation::new(name, version));
        self
    }

    /// Answers forms (MCP elicitation, form mode) with `answer`, as the user would. An
    /// accepted form is given the schema's defaults for the fields the answer leaves out
    /// (SEP-1034), before it is sent.
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
    /// answered with a task ([`Client::start_task`](super::Client::start_task)) instead of running while the call waits.
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

impl rmcp::ClientHandler for Answers {
    fn get_info(&self) -> ClientInfo {
        let mut info = ClientInfo::default();
        info.capabilities = self.capabilities();
        // `initialize` names the newest version that has it (rmcp's default is one that
        // does not); discovery chooses its own.
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        if let Some(named) = &self.named {
            info.client_info = named.clone();
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicit(request).await
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
