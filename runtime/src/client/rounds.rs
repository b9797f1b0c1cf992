//! What the typed client does with a 2026-07-28 `input_required` result (SEP-2322): answers
//! each input request through its [`Answers`], and asks again, as a new request, with those
//! answers and the server's `requestState` exactly as it came (none when none came). An
//! accepted form gets its schema's defaults for the fields left out (SEP-1034).

// Sampling and roots are deprecated by SEP-2577 in rmcp; servers still ask them.
#![allow(deprecated)]

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, InputRequests, InputResponses, ProtocolVersion,
};
use serde_json::{Map, Value};

use super::{Answers, Client, ClientError};

/// At most this many rounds for one call: a server that keeps asking is an error.
pub(super) const MOST_ROUNDS: usize = 16;

impl Answers {
    /// Answers a form, the schema's defaults filling what an accepted answer leaves out.
    pub(super) async fn elicit(
        &self,
        asked: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(answer) = &self.elicit else {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ElicitationCreateRequestMethod,
            >());
        };
        let schema = match &asked {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => serde_json::to_value(requested_schema).ok(),
            _ => None,
        };
        let mut answered = answer(asked).await;
        if let (ElicitationAction::Accept, Some(schema)) = (&answered.action, schema) {
            let content = match answered.content.take() {
                Some(Value::Object(content)) => content,
                Some(other) => {
                    answered.content = Some(other);
                    return Ok(answered);
                }
                None => Map::new(),
            };
            answered.content = Some(Value::Object(with_defaults(&schema, content)));
        }
        Ok(answered)
    }

    /// Answers every input request of a round, each under its key.
    async fn fulfil(&self, requests: InputRequests) -> Result<InputResponses, ErrorData> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let response = match request {
                InputRequest::Elicitation(request) => to_value(self.elicit(request.params).await?),
                InputRequest::CreateMessage(request) => match &self.sample {
                    Some(answer) => to_value(answer(request.params).await),
                    None => Err(ErrorData::method_not_found::<
                        rmcp::model::CreateMessageRequestMethod,
                    >()),
                },
                InputRequest::ListRoots(_) => match &self.roots {
                    Some(roots) => to_value(rmcp::model::ListRootsResult::new(roots.to_vec())),
                    None => Err(ErrorData::method_not_found::<
                        rmcp::model::ListRootsRequestMethod,
                    >()),
                },
                // A kind of request a newer rmcp knows and this client cannot answer.
                _ => Err(ErrorData::invalid_params(
                    format!("the input request {key} is of a kind this client cannot answer"),
                    None,
                )),
            };
            responses.insert(key, response?);
        }
        Ok(responses)
    }
}

fn to_value(answer: impl serde::Serialize) -> Result<Value, ErrorData> {
    serde_json::to_value(answer).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// `content` with the `default` of each property of `schema` it does not have (SEP-1034):
/// what a form shows filled in and the user accepts as it is.
///
/// ```
/// use mcp_fusion::client::with_defaults;
/// use serde_json::{Map, json};
///
/// let schema = json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "Ada"},
///     "age": {"type": "integer"},
///     "verified": {"type": "boolean", "default": true},
/// }});
/// let given = Map::from_iter([("name".to_owned(), json!("Grace"))]);
/// let filled = with_defaults(&schema, given);
/// assert_eq!(serde_json::Value::Object(filled), json!({"name": "Grace", "verified": true}));
/// ```
pub fn with_defaults(schema: &Value, mut content: Map<String, Value>) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
    content
}

impl Client {
    /// Calls the tool, answering each round the server asks for with the client's answers,
    /// until the result is complete (a result without `resultType` is complete). From
    /// 2026-07-28 the tools are listed first, once: the listing says which arguments go in
    /// headers.
    pub(super) async fn call_rounds(
        &self,
        mut params: CallToolRequestParams,
    ) -> Result<CallToolResult, ClientError> {
        let info = self.peer.peer_info();
        let version = info.as_deref().map(|info| &info.protocol_version);
        if version.is_some_and(|v| *v >= ProtocolVersion::STANDARD_HEADERS) {
            let listing = self
                .listed
                .get_or_try_init(|| async { self.peer.list_all_tools().await.map(|_| ()) });
            listing.await.map_err(ClientError::transport)?;
        }
        for _ in 0..MOST_ROUNDS {
            // Each round is a request of its own: rmcp gives it a new id.
            let response = self.peer.call_tool_once(params.clone()).await;
            match response.map_err(ClientError::transport)? {
                CallToolResponse::Complete(result) => return Ok(result),
                CallToolResponse::InputRequired(asked) => {
                    let requests = asked.input_requests.unwrap_or_default();
                    if requests.is_empty() && asked.request_state.is_none() {
                        return Err(ClientError::transport(
                            rmcp::service::ServiceError::UnexpectedResponse,
                        ));
                    }
                    let answers = self.answers.fulfil(requests).await;
                    let answers = answers.map_err(|e| {
                        ClientError::transport(rmcp::service::ServiceError::McpError(e))
                    })?;
                    params.input_responses = (!answers.is_empty()).then_some(answers);
                    // Exactly as it came, and none when none came.
                    params.request_state = asked.request_state;
                }
                // A task (SEP-2663) is not something this client asked for.
                _ => {
                    return Err(ClientError::transport(
                        rmcp::service::ServiceError::UnexpectedResponse,
                    ));
                }
            }
        }
        Err(ClientError::transport(
            rmcp::service::ServiceError::InputRequiredRoundsExceeded {
                max_rounds: MOST_ROUNDS,
            },
        ))
    }
}
