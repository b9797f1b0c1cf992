//! The server as rmcp's `ServerHandler`: `initialize`, `tools/list`, `tools/call`, and the
//! answers to requests rmcp cannot decode.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::Server;

impl ServerHandler for Server {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.inner
                .tools
                .iter()
                .map(|t| t.tool.definition().to_rmcp())
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        match self.call_with(request, context.extensions).await {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool: {}", cut(&name)),
                None,
            )),
        }
    }

    /// rmcp reads a standard request whose params do not decode (`tools/call` whose
    /// `arguments` are not an object, or without a `name`) as a custom one: answer it as what it
    /// is, Invalid params, rather than Method not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        if method == "tools/call" {
            return Err(ErrorData::invalid_params(
                "tools/call takes params {\"name\": string, \"arguments\": object (optional)}",
                None,
            ));
        }
        if STANDARD_REQUESTS.contains(&method) {
            return Err(ErrorData::invalid_params(
                format!("invalid params for {method}"),
                None,
            ));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {}", cut(method)),
            None,
        ))
    }
}

/// The requests of MCP a client may send a server.
const STANDARD_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "completion/complete",
    "logging/setLevel",
];

/// A name the client sent, short enough to echo in an error.
fn cut(name: &str) -> String {
    let mut out = String::new();
    crate::envelope::text::push_cut(&mut out, name);
    out
}
