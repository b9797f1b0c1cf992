//! An upstream MCP server written with rmcp that misbehaves without bound, for the gateway's
//! tests, served on loopback streamable HTTP (rmcp's own service, under axum). It lists `echo`
//! and `flood` whole until it is told to [`storm`](Hostile::storm): from then on, every page of
//! `tools/list` it answers holds one tool (of a description as long as asked), says there is a
//! next page, and says that its tools changed again (a `notifications/tools/list_changed` for
//! each page asked for, so they never stop while it is listed). `flood` sends progress
//! notifications as fast as it can, then answers. It records the page each `tools/list` asked
//! for. `ask` asks the gateway's client whatever request its arguments hold (`{"method",
//! "params", "times"}`), ignoring the capabilities the gateway declared, and answers what came
//! back of each; it records the capabilities the gateway declared.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::{NotificationContext, RequestContext};
use mcp_fusion::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use mcp_fusion::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use mcp_fusion::rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::json;
use tokio::sync::watch;

/// How many progress notifications `flood` sends before it answers.
pub(crate) const FLOOD: u32 = 5_000;
/// The most pages recorded (what a test reads of a storm is far fewer).
const RECORDED: usize = 100_000;

/// The server, served until dropped.
pub(crate) struct Hostile {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    state: Arc<State>,
    serving: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct State {
    storming: AtomicBool,
    /// The length of the description of each page's tool, during the storm.
    description: AtomicUsize,
    /// The page each `tools/list` asked for during the storm (0 for one without a cursor), in
    /// the order they came.
    pages: Mutex<Vec<u64>>,
    /// How many pages were asked for during the storm, to wait on.
    asked: watch::Sender<usize>,
    /// The session that began last (the gateway's), to tell.
    peer: Mutex<Option<Peer<RoleServer>>>,
}

/// What the gateway declared it can be asked, on its last session.
pub(crate) fn declared(hostile: &Hostile) -> ClientCapabilities {
    let peer = hostile.state.peer.lock().unwrap().clone();
    let info = peer.expect("the gateway connected").peer_info();
    info.expect("the gateway initialized").capabilities.clone()
}

impl Hostile {
    /// Serves on a free loopback port.
    pub(crate) async fn start() -> Hostile {
        let state = Arc::new(State::default());
        let handler = Handler(Arc::clone(&state));
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let app = axum::Router::new().nest_service("/mcp", service);
        let serving = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Hostile {
            url,
            state,
            serving,
        }
    }

    /// From now on every listing is endless, each page's tool described in `description`
    /// bytes, and says the tools changed; the gateway is told once to begin.
    pub(crate) async fn storm(&self, description: usize) {
        self.state.description.store(description, Ordering::SeqCst);
        self.state.storming.store(true, Ordering::SeqCst);
        let peer = self.state.peer.lock().unwrap().clone();
        let peer = peer.expect("the gateway connected");
        peer.notify_tool_list_changed().await.expect("told");
    }

    /// Waits until `pages` pages were asked for during the storm.
    pub(crate) async fn asked(&self, pages: usize) {
        let mut asked = self.state.asked.subscribe();
        asked.wait_for(|asked| *asked >= pages).await.unwrap();
    }

    /// The page each `tools/list` asked for during the storm so far, in order.
    pub(crate) fn pages(&self) -> Vec<u64> {
        self.state.pages.lock().unwrap().clone()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.state.storming.store(false, Ordering::SeqCst);
        self.serving.abort();
    }
}

#[derive(Clone)]
struct Handler(Arc<State>);

fn tool(name: &str, description: String) -> Tool {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let schema = schema.as_object().cloned().unwrap();
    Tool::new(name.to_owned(), description, schema)
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        *self.0.peer.lock().unwrap_or_else(PoisonError::into_inner) = Some(context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if !self.0.storming.load(Ordering::SeqCst) {
            let tools = vec![
                tool("echo", "Echoes text.".to_owned()),
                tool("flood", "Floods progress, then answers.".to_owned()),
                tool("ask", "Asks the client.".to_owned()),
            ];
            return Ok(ListToolsResult::with_all_items(tools));
        }
        let cursor = request.and_then(|r| r.cursor);
        let page = cursor.and_then(|c| c.parse::<u64>().ok()).unwrap_or(0);
        {
            let mut pages = self.0.pages.lock().unwrap_or_else(PoisonError::into_inner);
            if pages.len() < RECORDED {
                pages.push(page);
            }
        }
        self.0.asked.send_modify(|asked| *asked += 1);
        let _ = context.peer.notify_tool_list_changed().await;
        let description = "x".repeat(self.0.description.load(Ordering::SeqCst));
        let page_tool = tool(&format!("page{page}"), description);
        let mut listed = ListToolsResult::with_all_items(vec![page_tool]);
        listed.next_cursor = Some((page + 1).to_string());
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = match request.name.as_ref() {
            "echo" => (request.arguments.as_ref())
                .and_then(|a| a.get("text")?.as_str().map(str::to_owned))
                .unwrap_or_default(),
            "flood" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for progress in 1..=FLOOD {
                        let note = ProgressNotificationParam::new(token.clone(), progress.into());
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
                "flooded".to_owned()
            }
            "ask" => ask(&context.peer, request.arguments.unwrap_or_default()).await,
            other => {
                let message = format!("unknown tool: {other}");
                return Err(ErrorData::invalid_params(message, None));
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Sends the request `arguments` hold (`method`, `params`) `times` times (1 by default), one
/// after the other: what came back of each, `ok: {result}` or `error: {message}`, a line each.
async fn ask(peer: &Peer<RoleServer>, arguments: JsonObject) -> String {
    let times = arguments.get("times").and_then(|t| t.as_u64()).unwrap_or(1);
    let request = json!({"method": arguments["method"], "params": arguments.get("params")});
    let mut answers = Vec::new();
    for _ in 0..times {
        let request: ServerRequest = serde_json::from_value(request.clone()).expect("a request");
        answers.push(match peer.send_request(request).await {
            Ok(result) => format!("ok: {}", serde_json::to_string(&result).unwrap()),
            Err(mcp_fusion::rmcp::ServiceError::McpError(error)) => {
                format!("error: {}", error.message)
            }
            Err(other) => format!("error: {other}"),
        });
    }
    answers.join("\n")
}
