//! The everything example's own rmcp `ServerHandler`, served beside its `#[tool]` tools by
//! `ServerBuilder::handler`: the prompts (one of them asking the user for its context first,
//! from MCP 2026-07-28), resources (a template among them, and one that changes, told to
//! subscribers through the server's `Changes`), argument completion and `logging/setLevel` that
//! the official MCP conformance suite asks a server for, under the names it asks for them by.

// Logging is deprecated by SEP-2577 in rmcp; the suite (MCP 2025-11-25) still asks for it.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::RequestContext;
use mcp_fusion::rmcp::{ErrorData, RoleServer, ServerHandler};
use mcp_fusion::server::Changes;
use serde_json::json;

/// A 2×2 teal PNG, base64.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAD0lEQVR42mNgaGgAIQgFABoOBAFCl+Z5AAAAAElFTkSuQmCC";

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

/// The ids the template's completion offers (any id can be read).
const TEMPLATE_IDS: [&str; 3] = ["123", "456", "789"];
/// The values the completion offers for the arguments of `test_prompt_with_arguments`.
const ARGUMENT_VALUES: [&str; 3] = ["testValue1", "testValue2", "testValue3"];

/// The prompts and resources: cheap to clone, every clone the same state.
#[derive(Clone, Default)]
pub(crate) struct PromptsAndResources {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    /// How many times the watched resource has changed.
    version: AtomicU64,
}

impl PromptsAndResources {
    /// Changes the watched resource every `every`, and tells the server (`changes`), which
    /// tells each client subscribed to it. Runs until the server ends.
    pub(crate) async fn update_watched(self, every: Duration, changes: Changes) {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            ticks.tick().await;
            self.state.version.fetch_add(1, Ordering::Relaxed);
            changes.resource_updated(WATCHED);
        }
    }

    /// The resource at `uri` as `resources/read` answers it.
    fn read(&self, uri: &str) -> Option<ResourceContents> {
        let contents = match uri {
            STATIC_TEXT => {
                ResourceContents::text("The text of a resource that never changes.", uri)
                    .with_mime_type("text/plain")
            }
            STATIC_BINARY => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
            WATCHED => {
                let version = self.state.version.load(Ordering::Relaxed);
                ResourceContents::text(format!("Watched resource, version {version}."), uri)
                    .with_mime_type("text/plain")
            }
            _ => {
                let id = template_id(uri)?;
                let data = format!("The data of item {id}.");
                let item = json!({"id": id, "templateTest": true, "data": data});
                ResourceContents::text(item.to_string(), uri).with_mime_type("application/json")
            }
        };
        Some(contents)
    }
}

/// The `{id}` of a URI of the template `test://template/{id}/data`.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    let plain = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then_some(id)
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("No resource at {uri:?}."),
        Some(json!({"uri": uri})),
    )
}

/// A string argument of a prompt, required.
fn argument<'a>(request: &'a GetPromptRequestParams, name: &str) -> Result<&'a str, ErrorData> {
    let value = request.arguments.as_ref().and_then(|a| a.get(name));
    value.and_then(|v| v.as_str()).ok_or_else(|| {
        ErrorData::invalid_params(
            format!(
                "Prompt {:?} needs the string argument {name:?}.",
                request.name
            ),
            None,
        )
    })
}

/// The prompt that asks the user for its context first.
const INPUT_REQUIRED_PROMPT: &str = "test_input_required_result_prompt";
/// The key its question and the user's answer go under.
const USER_CONTEXT: &str = "user_context";

/// `test_input_required_result_prompt`, from MCP 2026-07-28: until the request carries the
/// user's answer (`inputResponses.user_context`, an accepted form), the answer is
/// `input_required` (SEP-2322, rmcp's MRTR types) asking for it; then the prompt, built on it.
/// The answer is all the prompt needs, so no `requestState` is kept between the rounds. Before
/// 2026-07-28 a request cannot be answered in rounds, and a client that cannot be asked for a
/// form is told the capability it lacks.
fn prompt_with_context(
    request: &GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    if (context.protocol_version()).is_none_or(|version| version.has_initialize()) {
        return Err(ErrorData::invalid_request(
            format!(
                "Prompt {INPUT_REQUIRED_PROMPT:?} asks the user in an input_required round, which needs MCP 2026-07-28."
            ),
            None,
        ));
    }
    let declared = context.client_capabilities();
    if declared.is_none_or(|declared| declared.elicitation.is_none()) {
        let elicitation = ClientCapabilities::builder().enable_elicitation().build();
        return Err(ErrorData::missing_required_client_capability(elicitation));
    }
    let answer = (request.input_responses.as_ref())
        .and_then(|responses| responses.get(USER_CONTEXT))
        .and_then(|answer| serde_json::from_value::<ElicitResult>(answer.clone()).ok());
    let Some(answer) = answer else {
        // Not answered yet, or not with a form's answer: asked (again).
        let schema = ElicitationSchema::builder()
            .required_string("context")
            .build_unchecked();
        let question = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "What context should the prompt use?".into(),
            requested_schema: schema,
        };
        let asks = InputRequests::from([(
            USER_CONTEXT.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(question)),
        )]);
        return Ok(InputRequiredResult::from_input_requests(asks).into());
    };
    let given = (answer.content.as_ref())
        .and_then(|content| content.get("context"))
        .and_then(|text| text.as_str());
    match (answer.action, given) {
        (ElicitationAction::Accept, Some(given)) => {
            let text = format!("With this context in mind: {given:?}, say what matters most.");
            let messages = vec![PromptMessage::new_text(Role::User, text)];
            Ok(GetPromptResult::new(messages).into())
        }
        (ElicitationAction::Accept, None) => Err(ErrorData::invalid_params(
            "The form came back without its string field \"context\".",
            None,
        )),
        _ => Err(ErrorData::invalid_params(
            "The user declined to give the prompt its context.",
            None,
        )),
    }
}

fn prompt_argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name)
        .with_description(description)
        .with_required(true)
}

impl ServerHandler for PromptsAndResources {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = vec![
            Prompt::new(
                "test_simple_prompt",
                Some("A prompt of one message, without arguments."),
                None,
            )
            .with_title("Simple prompt"),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt that repeats its two arguments."),
                Some(vec![
                    prompt_argument("arg1", "The first value to repeat."),
                    prompt_argument("arg2", "The second value to repeat."),
                ]),
            )
            .with_title("Prompt with arguments"),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt that embeds the resource at a URI: this server's as it is, any other as a text naming it."),
                Some(vec![prompt_argument(
                    "resourceUri",
                    "The URI of the resource to embed.",
                )]),
            )
            .with_title("Prompt with an embedded resource"),
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt that shows an image."),
                None,
            )
            .with_title("Prompt with an image"),
            Prompt::new(
                INPUT_REQUIRED_PROMPT,
                Some("A prompt that first asks the user for its context, in an input_required round (MCP 2026-07-28)."),
                None,
            )
            .with_title("Prompt that asks for its context"),
        ];
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == INPUT_REQUIRED_PROMPT {
            return prompt_with_context(&request, &context);
        }
        let user = |content| PromptMessage::new(Role::User, content);
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![PromptMessage::new_text(
                Role::User,
                "Say hello, in one short sentence.",
            )],
            "test_prompt_with_arguments" => {
                let (arg1, arg2) = (argument(&request, "arg1")?, argument(&request, "arg2")?);
                vec![PromptMessage::new_text(
                    Role::User,
                    format!("Repeat these two values: arg1 is {arg1:?}, arg2 is {arg2:?}."),
                )]
            }
            "test_prompt_with_embedded_resource" => {
                let uri = argument(&request, "resourceUri")?;
                // A resource of this server is embedded as it is; any other as a text naming it.
                let resource = self.read(uri).unwrap_or_else(|| {
                    ResourceContents::text(format!("The resource named {uri}."), uri)
                        .with_mime_type("text/plain")
                });
                vec![
                    user(ContentBlock::resource(resource)),
                    PromptMessage::new_text(Role::User, "Summarise the resource above."),
                ]
            }
            "test_prompt_with_image" => vec![
                user(ContentBlock::image(PNG, "image/png")),
                PromptMessage::new_text(Role::User, "Describe the colours of the image above."),
            ],
            other => {
                return Err(ErrorData::invalid_params(
                    format!("No prompt named {other:?}."),
                    None,
                ));
            }
        };
        Ok(GetPromptResult::new(messages).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = vec![
            Resource::new(STATIC_TEXT, "static-text")
                .with_title("Static text")
                .with_description("A text that never changes.")
                .with_mime_type("text/plain"),
            Resource::new(STATIC_BINARY, "static-binary")
                .with_title("Static binary")
                .with_description("A small PNG image, as a blob.")
                .with_mime_type("image/png"),
            Resource::new(WATCHED, "watched-resource")
                .with_title("Watched resource")
                .with_description("A text that changes every few seconds: subscribe to be told.")
                .with_mime_type("text/plain"),
        ];
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new(TEMPLATE, "template")
            .with_title("Item data")
            .with_description("The data of one item, by its id (letters, digits, - and _).")
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = self
            .read(&request.uri)
            .ok_or_else(|| not_found(&request.uri))?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let argument = request.argument.name.as_str();
        let candidates: Vec<&str> = match (&request.r#ref, argument) {
            (Reference::Prompt(p), "arg1" | "arg2") if p.name == "test_prompt_with_arguments" => {
                ARGUMENT_VALUES.to_vec()
            }
            (Reference::Prompt(p), "resourceUri")
                if p.name == "test_prompt_with_embedded_resource" =>
            {
                vec![STATIC_TEXT, STATIC_BINARY, WATCHED]
            }
            (Reference::Resource(r), "id") if r.uri == TEMPLATE => TEMPLATE_IDS.to_vec(),
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("Nothing to complete for argument {argument:?} of this reference."),
                    None,
                ));
            }
        };
        let typed = request.argument.value.as_str();
        let values = (candidates.into_iter())
            .filter(|c| c.starts_with(typed))
            .map(str::to_owned)
            .collect();
        let completion = CompletionInfo::with_all_values(values)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(completion))
    }

    /// No log message reaches the client yet (a tool cannot reach the client), so every level
    /// is honoured: the level is accepted and nothing is sent.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tracing::debug!(level = ?request.level, "the client set its log level");
        Ok(())
    }
}
