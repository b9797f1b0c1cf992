//! The `bench` tool of workload 4 served by plain rmcp, without this library (no routing
//! tables, no schema validation, no envelopes): the baseline of the `load` driver
//! (`plain_server`) and of the `http_stack` bench.
//!
//! `ServerHandler` by hand: `call_tool` reads `action`, decodes `{id, limit}` with serde and
//! answers `{"id", "limit"}` as one text block. It accepts 2026-07-28 `subscriptions/listen`
//! streams of tool listing changes (rmcp's own `listen`: held until cancelled). Its `confirm`
//! tool (action `item`) is a 2026-07-28 round (SEP-2322) as an rmcp server writes one: the
//! first call answers `input_required`, asking the user to confirm the item, with a
//! `requestState` sealed by rmcp's `RequestStateCodec`; the retry carries the answer and the
//! state, opened and checked against the call.
//!
//! Both servers of the driver offer the same prompt and resource ([`Documents`], a plain rmcp
//! handler: `Plain` answers with it, this library's `bench_server` serves it by
//! `ServerBuilder::handler`), the requests that take rmcp's path in either.

use std::sync::Arc;

use mcp_fusion::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, InitializeResult,
    InputRequest, InputRequests, InputRequiredResult, JsonObject, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    RequestStateCodec, Resource, ResourceContents, Role, SealOptions, ServerCapabilities,
    SubscriptionFilter, Tool,
};
use mcp_fusion::rmcp::service::RequestContext;
use mcp_fusion::rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The arguments of every action.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    id: String,
    limit: Option<u32>,
}

/// What every action answers.
#[derive(Serialize)]
struct Echo {
    id: String,
    limit: Option<u32>,
}

/// What a `confirm` round's sealed state holds: the item asked about.
#[derive(Serialize, Deserialize)]
struct Asked {
    id: String,
}

/// The plain rmcp server of the `bench` tool (and of `confirm`, a round).
#[derive(Clone)]
pub struct Plain {
    tools: Arc<Vec<Tool>>,
    /// Seals and opens `confirm`'s round state.
    codec: Arc<RequestStateCodec>,
    /// What `confirm` asks the user.
    form: Arc<ElicitationSchema>,
}

impl std::fmt::Debug for Plain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plain").field("tools", &self.tools).finish()
    }
}

impl Default for Plain {
    fn default() -> Self {
        Plain::new()
    }
}

impl Plain {
    /// The server, its one tool listed.
    pub fn new() -> Self {
        let actions: Vec<String> = (0..20).map(|i| format!("op{i:02}")).collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": actions},
                "id": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["action", "id"]
        });
        let Value::Object(schema) = schema else {
            unreachable!("the schema is an object")
        };
        let schema: JsonObject = schema;
        let tool = Tool::new("bench", "Benchmark tool with 20 actions.", schema);
        let confirm = json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["item"]},
                "id": {"type": "string", "minLength": 1}
            },
            "required": ["action", "id"]
        });
        let Value::Object(confirm) = confirm else {
            unreachable!("the schema is an object")
        };
        let confirm = Tool::new("confirm", "Items confirmed by the user.", confirm);
        let form = ElicitationSchema::builder()
            .required_bool_with("confirm", |b| b.description("Whether to go ahead."))
            .build_unchecked();
        // The benchmark's own signing key (a server keeps its secret elsewhere).
        let key = b"plain-server: confirm's state key".to_vec();
        Plain {
            tools: Arc::new(vec![tool, confirm]),
            codec: Arc::new(RequestStateCodec::try_new(key).expect("a key of 32 bytes or more")),
            form: Arc::new(form),
        }
    }

    /// `confirm`: a call without a state asks the user to confirm the item (`input_required`,
    /// the item sealed in the state); its retry carries the user's answer and the state,
    /// which must open and name the same item.
    fn confirm(&self, request: CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.as_ref();
        let id = arguments.and_then(|a| a.get("id")?.as_str());
        let action = arguments.and_then(|a| a.get("action")?.as_str());
        let (Some("item"), Some(id)) = (action, id) else {
            return Err(ErrorData::invalid_params(
                "action item and id are required",
                None,
            ));
        };
        let Some(state) = request.request_state else {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!("Go ahead with {id}?"),
                requested_schema: self.form.as_ref().clone(),
            };
            let ask = InputRequest::Elicitation(ElicitRequest::new(params));
            let asks = InputRequests::from([("confirm".to_owned(), ask)]);
            let asked = Asked { id: id.to_owned() };
            let options = SealOptions::new().ttl(std::time::Duration::from_secs(15 * 60));
            let state = (self.codec.seal_json_with(&asked, &options))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            return Ok(InputRequiredResult::new(Some(asks), Some(state)).into());
        };
        let asked: Asked = (self.codec.open_json(&state))
            .map_err(|e| ErrorData::invalid_params(format!("requestState: {e}"), None))?;
        if asked.id != id {
            return Err(ErrorData::invalid_params(
                "requestState is another call's",
                None,
            ));
        }
        let answer = (request.input_responses)
            .and_then(|mut responses| responses.remove("confirm"))
            .and_then(|answer| serde_json::from_value::<ElicitResult>(answer).ok());
        let confirmed = match answer {
            Some(ElicitResult {
                action: ElicitationAction::Accept,
                content: Some(content),
                ..
            }) => content.get("confirm").and_then(Value::as_bool),
            _ => None,
        };
        let result = match confirmed {
            Some(confirmed) => CallToolResult::success(vec![ContentBlock::text(format!(
                "{id} confirmed: {confirmed}"
            ))]),
            None => CallToolResult::error(vec![ContentBlock::text("not confirmed")]),
        };
        Ok(result.into())
    }
}

/// The handler: the action must be `op00` … `op19`; the rest decodes into [`Args`].
fn bench(mut arguments: JsonObject) -> Result<String, String> {
    let action = match arguments.remove("action") {
        Some(Value::String(action)) => action,
        _ => return Err("missing action".into()),
    };
    let known = action.len() == 4
        && action.starts_with("op")
        && action[2..].parse::<u8>().is_ok_and(|n| n < 20);
    if !known {
        return Err(format!("unknown action: {action}"));
    }
    let args: Args = serde_json::from_value(Value::Object(arguments)).map_err(|e| e.to_string())?;
    let echo = Echo {
        id: args.id,
        limit: args.limit,
    };
    serde_json::to_string(&echo).map_err(|e| e.to_string())
}

impl ServerHandler for Plain {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_resources()
            .build();
        InitializeResult::new(capabilities).with_server_info(Implementation::new(
            "plain-server",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "confirm" {
            return self.confirm(request);
        }
        if request.name != "bench" {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        }
        let result = match bench(request.arguments.unwrap_or_default()) {
            Ok(json) => CallToolResult::success(vec![ContentBlock::text(json)]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Documents.list_prompts(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Documents.get_prompt(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Documents.list_resources(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Documents.read_resource(request, context).await
    }
}

/// The prompt `brief` (argument `topic`: "Brief on {topic}.") and the resource
/// [`Documents::ITEM`] ("item 42, limit 10"): what the `load` driver's `prompt` and `resource`
/// kinds ask both servers for.
///
/// ```
/// use mcp_fusion::rmcp::ServerHandler;
/// use mcp_fusion_drivers::plain::Documents;
///
/// assert!(Documents.get_info().capabilities.prompts.is_some());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Documents;

impl Documents {
    /// The URI of the one resource.
    pub const ITEM: &'static str = "bench://items/42";
}

impl ServerHandler for Documents {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .build();
        InitializeResult::new(capabilities)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let topic = PromptArgument::new("topic")
            .with_description("What to brief on.")
            .with_required(true);
        let brief = Prompt::new("brief", Some("A one-line brief."), Some(vec![topic]));
        Ok(ListPromptsResult::with_all_items(vec![brief]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let topic =
            (request.arguments.as_ref()).and_then(|arguments| arguments.get("topic")?.as_str());
        match (request.name.as_str(), topic) {
            ("brief", Some(topic)) => {
                let brief = PromptMessage::new_text(Role::User, format!("Brief on {topic}."));
                Ok(GetPromptResult::new(vec![brief]).into())
            }
            ("brief", None) => Err(ErrorData::invalid_params("topic is required", None)),
            (other, _) => Err(ErrorData::invalid_params(
                format!("unknown prompt: {other}"),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let item = Resource::new(Self::ITEM, "item-42").with_mime_type("text/plain");
        Ok(ListResourcesResult::with_all_items(vec![item]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != Self::ITEM {
            let missing = format!("no resource at {}", request.uri);
            return Err(ErrorData::resource_not_found(missing, None));
        }
        let item = ResourceContents::text("item 42, limit 10", Self::ITEM);
        Ok(ReadResourceResult::new(vec![item.with_mime_type("text/plain")]).into())
    }
}
