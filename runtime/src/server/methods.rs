//! The one table of the requests a client may send: every variant of rmcp's `ClientRequest`,
//! with who answers it. Everything that must know the standard methods derives from it: the
//! names (`MCP_REQUESTS`, so that a malformed standard request is told "Invalid params" rather
//! than "Method not found"), the route a transport checks as it reads a message ([`route`],
//! whose `_` arm answers what rmcp knows and this table does not), the object-safe view of the
//! user's handler (`user`) and the server's delegation to it (`dispatch`).
//!
//! rmcp's `ClientRequest` is `#[non_exhaustive]`: a release of rmcp that adds a request adds a
//! variant this table lacks. The test `every_request_rmcp_knows_has_a_route` reads rmcp's own
//! list of methods (its JSON Schema of `ClientRequest`) and fails until the table names it.

use rmcp::model::*;

/// Calls `$callback!` with the table: the requests the server answers itself, those of the
/// tool pipeline, and those of the user's handler, each with its parameters and result.
macro_rules! client_requests {
    ($callback:ident) => {
        $callback! {
            server {
                PingRequest: PingRequestMethod,
                InitializeRequest: InitializeResultMethod,
                DiscoverRequest: DiscoverRequestMethod,
                SetLevelRequest: SetLevelRequestMethod,
                SubscriptionsListenRequest: SubscriptionsListenRequestMethod,
                SubscribeRequest: SubscribeRequestMethod,
                UnsubscribeRequest: UnsubscribeRequestMethod,
                GetTaskRequest: GetTaskMethod,
                UpdateTaskRequest: UpdateTaskMethod,
                CancelTaskRequest: CancelTaskMethod,
            }
            tools {
                CallToolRequest: CallToolRequestMethod,
                ListToolsRequest: ListToolsRequestMethod,
            }
            user {
                CompleteRequest: CompleteRequestMethod
                    => complete(request: CompleteRequestParams) -> CompleteResult;
                GetPromptRequest: GetPromptRequestMethod
                    => get_prompt(request: GetPromptRequestParams) -> GetPromptResponse;
                ListPromptsRequest: ListPromptsRequestMethod
                    => list_prompts(request: Option<PaginatedRequestParams>) -> ListPromptsResult;
                ListResourcesRequest: ListResourcesRequestMethod
                    => list_resources(request: Option<PaginatedRequestParams>) -> ListResourcesResult;
                ListResourceTemplatesRequest: ListResourceTemplatesRequestMethod
                    => list_resource_templates(request: Option<PaginatedRequestParams>)
                        -> ListResourceTemplatesResult;
                ReadResourceRequest: ReadResourceRequestMethod
                    => read_resource(request: ReadResourceRequestParams) -> ReadResourceResponse;
                ListSkillsRequest: ListSkillsRequestMethod
                    => list_skills(request: Option<PaginatedRequestParams>) -> ListSkillsResult;
                GetSkillRequest: GetSkillRequestMethod
                    => get_skill(request: GetSkillRequestParams) -> GetSkillResult;
                ReadResourceDirectoryRequest: ReadResourceDirectoryRequestMethod
                    => read_resource_directory(request: ReadResourceDirectoryRequestParams)
                        -> ReadResourceDirectoryResult;
            }
        }
    };
}
pub(crate) use client_requests;

/// Who answers a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// The server itself (the lifecycle, logging, subscriptions, tasks).
    Server,
    /// The tool pipeline.
    Tools,
    /// The user's handler.
    User,
    /// A method MCP does not define (or a standard one whose params did not decode): the
    /// server's answer for the standard ones, the user's handler for the rest.
    Custom,
    /// A request rmcp reads that this table does not name: answered "Method not found".
    Unknown,
}

macro_rules! routes {
    (
        server { $($server:ident: $server_method:ident,)* }
        tools { $($tools:ident: $tools_method:ident,)* }
        user { $($user:ident: $user_method:ident => $_f:ident($($_a:ident: $_t:ty),*) -> $_o:ty;)* }
    ) => {
        /// Who answers `request`.
        pub(crate) fn route(request: &ClientRequest) -> Route {
            match request {
                $(ClientRequest::$server(_))|* => Route::Server,
                $(ClientRequest::$tools(_))|* => Route::Tools,
                $(ClientRequest::$user(_))|* => Route::User,
                ClientRequest::CustomRequest(_) => Route::Custom,
                _ => Route::Unknown,
            }
        }

        /// The name of every request of the table.
        pub(crate) const MCP_REQUESTS: &[&str] = &[
            $(<$server_method as ConstString>::VALUE,)*
            $(<$tools_method as ConstString>::VALUE,)*
            $(<$user_method as ConstString>::VALUE,)*
        ];
    };
}
client_requests!(routes);

/// The requests MCP 2026-07-28 removed: a request of that revision naming one is told "Method
/// not found" (HTTP 404), whatever its params.
pub(crate) const REMOVED_IN_2026_07_28: &[&str] = &[
    <InitializeResultMethod as ConstString>::VALUE,
    <PingRequestMethod as ConstString>::VALUE,
    <SetLevelRequestMethod as ConstString>::VALUE,
    <SubscribeRequestMethod as ConstString>::VALUE,
    <UnsubscribeRequestMethod as ConstString>::VALUE,
];

/// Whether a request carrying `version` (its `_meta`'s, else the session's) is of MCP
/// 2026-07-28 or later.
pub(crate) fn stateless(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// The answer to a request no one serves.
pub(crate) fn not_found(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {}", cut(method)),
        None,
    )
}

/// A name the client sent, short enough to echo in an error.
pub(crate) fn cut(name: &str) -> String {
    let mut out = String::new();
    crate::envelope::text::push_cut(&mut out, name);
    out
}

/// The refusal of a request whose id a request in flight holds; `scope` says where (empty on
/// stdio, a connection being one client's).
#[cfg(any(feature = "stdio", feature = "http"))]
pub(crate) fn id_in_flight(id: &RequestId, scope: &str) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "Invalid request: id {} is already used by a request in flight{scope}",
            cut(&id.to_string())
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every method of rmcp's `ClientRequest`, read from rmcp's own JSON Schema of it (each
    /// variant's `method` is a `const`): a new rmcp request is a new name here.
    fn rmcp_methods() -> Vec<String> {
        let schema = serde_json::to_value(schemars::schema_for!(ClientRequest)).unwrap();
        let resolve = |value: &serde_json::Value| -> Option<String> {
            let value = match value.get("$ref").and_then(|r| r.as_str()) {
                Some(reference) => schema.pointer(reference.strip_prefix('#')?)?,
                None => value,
            };
            value.get("const")?.as_str().map(str::to_owned)
        };
        let mut methods = Vec::new();
        let mut stack = vec![&schema];
        while let Some(value) = stack.pop() {
            match value {
                serde_json::Value::Object(map) => {
                    let method = map.get("properties").and_then(|p| p.get("method"));
                    methods.extend(method.and_then(resolve));
                    stack.extend(map.values());
                }
                serde_json::Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        methods.sort();
        methods.dedup();
        methods
    }

    /// A request rmcp knows and this table does not reach neither the pipeline nor the user's
    /// handler: it would be answered "Method not found" by `route`'s `_` arm.
    #[test]
    fn every_request_rmcp_knows_has_a_route() {
        let known = rmcp_methods();
        assert!(known.len() >= 21, "rmcp's schema named only {known:?}");
        let missing: Vec<_> = (known.iter())
            .filter(|m| !MCP_REQUESTS.contains(&m.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "rmcp's ClientRequest has requests server/methods.rs does not route: {missing:?}"
        );
    }

    /// Each name of the table reads as the variant the table gives it.
    #[test]
    fn every_route_is_the_request_it_names() {
        let request = |method: &str, params: serde_json::Value| {
            let message =
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            match serde_json::from_value::<rmcp::service::RxJsonRpcMessage<rmcp::RoleServer>>(
                message,
            ) {
                Ok(JsonRpcMessage::Request(request)) => route(&request.request),
                other => panic!("{method}: {other:?}"),
            }
        };
        assert_eq!(request("tools/list", serde_json::json!({})), Route::Tools);
        assert_eq!(
            request("tools/call", serde_json::json!({"name": "t"})),
            Route::Tools
        );
        assert_eq!(request("prompts/list", serde_json::json!({})), Route::User);
        assert_eq!(
            request("resources/subscribe", serde_json::json!({"uri": "u"})),
            Route::Server
        );
        assert_eq!(request("vendor/x", serde_json::json!({})), Route::Custom);
    }
}
