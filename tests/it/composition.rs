//! A whole MCP server: the user's own rmcp `ServerHandler` (a prompt, resources) beside
//! mcp-fusion tools (`ServerBuilder::handler`), served by the same stdio and streamable HTTP
//! fronts. rmcp's own client lists and gets the prompt, reads the resource and calls the tools
//! on both; the body limit, the Origin check, the session cap and OAuth hold for prompts and
//! resources as for calls; a `resources/read` in flight is drained by a graceful shutdown.

use std::sync::Arc;
use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::RequestContext;
use mcp_fusion::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
use mcp_fusion::server::{HttpOptions, StdioOptions};
use mcp_fusion::{ToolError, tool};
use mcp_fusion_drivers::issuer::Issuer;
use mcp_fusion_drivers::raw_http;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

/// The user's own handler: a prompt, two resources (one that waits until it is let go).
#[derive(Clone, Default)]
struct Desk {
    /// Lets a read of `note://slow` finish.
    release: Arc<Notify>,
    /// Told when a read of `note://slow` began.
    reading: Arc<Notify>,
}

impl ServerHandler for Desk {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities).with_instructions("The desk's own instructions.")
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let name = PromptArgument::new("name").with_required(true);
        let greet = Prompt::new("greet", Some("Greets someone by name."), Some(vec![name]));
        Ok(ListPromptsResult::with_all_items(vec![greet]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = (request.arguments.as_ref())
            .and_then(|arguments| arguments.get("name")?.as_str().map(str::to_owned))
            .ok_or_else(|| ErrorData::invalid_params("greet takes a name", None))?;
        let text = format!("Say hello to {name}.");
        let message = PromptMessage::new_text(Role::User, text);
        Ok(GetPromptResult::new(vec![message]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let welcome = Resource::new("note://welcome", "welcome");
        Ok(ListResourcesResult::with_all_items(vec![welcome]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = match request.uri.as_str() {
            "note://welcome" => "Welcome to the desk.",
            "note://slow" => {
                self.reading.notify_one();
                self.release.notified().await;
                "Read slowly."
            }
            other => {
                let message = format!("no resource {other}");
                return Err(ErrorData::resource_not_found(message, None));
            }
        };
        let contents = ResourceContents::text(text, request.uri.as_str());
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

struct Clock;

/// The time.
#[tool]
impl Clock {
    /// Seconds since the epoch.
    #[action(read_only)]
    async fn now(&self) -> Result<u64, ToolError> {
        Ok(1_764_000_000)
    }
}

fn desk_server(desk: Desk) -> Server {
    Server::builder("desk", "1.0.0")
        .tool(Clock)
        .handler(desk)
        .build()
        .expect("the server builds")
}

/// What rmcp's own client sees of the whole server, over any transport.
async fn use_everything<T, E, A>(transport: T)
where
    T: mcp_fusion::rmcp::transport::IntoTransport<mcp_fusion::rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = ().serve(transport).await.expect("the client initializes");
    let info = client.peer_info().expect("the server's info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("desk")
    );
    let capabilities = &info.capabilities;
    assert!(capabilities.tools.is_some(), "{capabilities:?}");
    assert!(capabilities.prompts.is_some(), "{capabilities:?}");
    assert!(capabilities.resources.is_some(), "{capabilities:?}");
    assert_eq!(
        info.instructions.as_deref(),
        Some("The desk's own instructions.")
    );

    let prompts = client.list_all_prompts().await.expect("prompts/list");
    assert_eq!(prompts[0].name, "greet");
    let mut arguments = serde_json::Map::new();
    arguments.insert("name".into(), json!("Ada"));
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("greet").with_arguments(arguments))
        .await
        .expect("prompts/get");
    let text = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(text["content"]["text"], "Say hello to Ada.");

    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(resources[0].uri, "note://welcome");
    let read = client
        .read_resource(ReadResourceRequestParams::new("note://welcome"))
        .await
        .expect("resources/read");
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(contents["text"], "Welcome to the desk.");
    let missing = client
        .read_resource(ReadResourceRequestParams::new("note://nothing"))
        .await
        .expect_err("no such resource");
    assert!(missing.to_string().contains("no resource"), "{missing}");

    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools[0].name, "clock");
    let called = client
        .call_tool(
            CallToolRequestParams::new("clock")
                .with_arguments(json!({"action": "now"}).as_object().cloned().unwrap()),
        )
        .await
        .expect("tools/call");
    assert_eq!(called.is_error, Some(false), "{called:?}");
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn a_handler_beside_tools_over_stdio() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = desk_server(Desk::default()).serve_io(read, write, StdioOptions::default());
    let serving = tokio::spawn(serving.into_future());
    use_everything(client_io).await;
    serving.await.unwrap().expect("served");
}

#[tokio::test]
async fn a_handler_beside_tools_over_streamable_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = desk_server(Desk::default()).serve_http(listener, HttpOptions::default());
    let serving = tokio::spawn(serving.into_future());
    let transport = mcp_fusion::rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    use_everything(transport).await;
    serving.abort();
}

/// The request of `method` with `params`, as a client of 2025-06-18 without a session sends it.
fn request(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

fn initialize() -> Vec<u8> {
    request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "1"}}),
    )
}

/// The HTTP limits hold for the handler's requests as for calls.
#[tokio::test]
async fn the_http_limits_hold_for_prompts_and_resources() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.max_body_bytes = 4096;
    let serving = desk_server(Desk::default()).serve_http(listener, options);
    let serving = tokio::spawn(serving.into_future());
    let version = ("MCP-Protocol-Version", "2025-06-18");

    let read = request("resources/read", json!({"uri": "note://welcome"}));
    let reply = raw_http::post(&addr, &[version], &read).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("Welcome to the desk."), "{reply:?}");

    // Over the body limit: refused before the handler sees it.
    let long = "x".repeat(8192);
    let greet = request(
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": long}}),
    );
    let reply = raw_http::post(&addr, &[version], &greet).await;
    assert_eq!(reply.status, 413, "{reply:?}");

    // An origin that is not allowed: refused by the endpoint, whatever the method.
    let origin = ("Origin", "http://evil.example");
    let reply = raw_http::post(&addr, &[version, origin], &read).await;
    assert_eq!(reply.status, 403, "{reply:?}");
    serving.abort();
}

#[tokio::test]
async fn the_session_cap_holds_whatever_a_session_is_for() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut options = HttpOptions::default();
    options.max_sessions = 1;
    let serving = desk_server(Desk::default()).serve_http(listener, options);
    let serving = tokio::spawn(serving.into_future());
    let first = raw_http::post(&addr, &[], &initialize()).await;
    assert_eq!(first.status, 200, "{first:?}");
    let session = first
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let second = raw_http::post(&addr, &[], &initialize()).await;
    assert_eq!(second.status, 503, "{second:?}");
    // The session there is serves the handler's requests.
    let read = request("resources/read", json!({"uri": "note://welcome"}));
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let reply = raw_http::post(&addr, &headers, &read).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("Welcome to the desk."), "{reply:?}");
    serving.abort();
}

#[tokio::test]
async fn oauth_guards_the_handlers_requests() {
    const AUDIENCE: &str = "https://desk.example/mcp";
    let issuer = Issuer::start().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.oauth = Some(OAuth::jwt(JwtVerifier::new(&issuer.url, AUDIENCE)));
    let serving = desk_server(Desk::default()).serve_http(listener, options);
    let serving = tokio::spawn(serving.into_future());
    let version = ("MCP-Protocol-Version", "2025-06-18");
    let read = request("resources/read", json!({"uri": "note://welcome"}));
    let refused = raw_http::post(&addr, &[version], &read).await;
    assert_eq!(refused.status, 401, "{refused:?}");
    let prompts = request("prompts/list", json!({}));
    assert_eq!(
        raw_http::post(&addr, &[version], &prompts).await.status,
        401
    );
    let bearer = format!("Bearer {}", issuer.token(AUDIENCE, "ada", ""));
    let reply = raw_http::post(&addr, &[version, ("Authorization", &bearer)], &read).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("Welcome to the desk."), "{reply:?}");
    serving.abort();
}

/// A graceful shutdown drains a `resources/read` in flight, and refuses a request read after
/// it began.
#[tokio::test(start_paused = true)]
async fn a_shutdown_drains_a_read_in_flight() {
    let desk = Desk::default();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let stop = Arc::new(Notify::new());
    let stopped = Arc::clone(&stop);
    let mut options = StdioOptions::default();
    options.drain = Some(Duration::from_secs(60));
    let serving = desk_server(desk.clone())
        .serve_io(read, write, options)
        .with_graceful_shutdown(async move { stopped.notified().await });
    let serving = tokio::spawn(serving.into_future());
    let (replies, mut requests) = tokio::io::split(client_io);
    let mut replies = BufReader::new(replies).lines();
    let send = |message: Value| format!("{message}\n");
    for message in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
               "params": {"uri": "note://slow"}}),
    ] {
        requests.write_all(send(message).as_bytes()).await.unwrap();
    }
    let initialized = replies.next_line().await.unwrap().unwrap();
    assert!(initialized.contains("\"id\":0"), "{initialized}");
    desk.reading.notified().await;
    stop.notify_one();
    tokio::task::yield_now().await;
    // Read once the shutdown began: refused, with its id.
    let late = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                      "params": {"uri": "note://welcome"}});
    requests.write_all(send(late).as_bytes()).await.unwrap();
    let refused: Value =
        serde_json::from_str(&replies.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    // The read in flight finishes and is answered; then serving ends.
    desk.release.notify_one();
    let answered: Value =
        serde_json::from_str(&replies.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answered["id"], 1);
    assert_eq!(answered["result"]["contents"][0]["text"], "Read slowly.");
    serving.await.unwrap().expect("served");
}

/// Tools are this crate's: a handler that declares the tools capability is refused.
#[test]
fn a_handler_that_serves_tools_is_a_build_error() {
    struct Tools;
    impl ServerHandler for Tools {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }
    }
    let refused = Server::builder("s", "1")
        .tool(Clock)
        .handler(Tools)
        .build()
        .unwrap_err();
    assert!(
        refused.problems()[0].starts_with("handler: its get_info declares the tools capability"),
        "{refused}"
    );
}
