//! The client in a handler (`Context::elicit`, `elicit_url`, `sample`, `roots`, `log`) on both
//! protocol eras: up to 2025-11-25 a request on the session's back-channel, answered by rmcp's
//! own client through its handlers; from 2026-07-28 the `input_required` round trip
//! (SEP-2322), driven by rmcp's client and, raw, by a client that replays, alters or moves a
//! round's `requestState`. What the user declines, dismisses or cannot be asked is an envelope.

#![allow(deprecated)] // Sampling, roots and logging are legacy in rmcp (SEP-2577); still served.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::client::parse_envelope;
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::{NotificationContext, RequestContext, RunningService};
use mcp_fusion::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use mcp_fusion::server::{HttpOptions, StdioOptions};
use mcp_fusion::tools::{ElicitForm, LogLevel, Sampling};
use mcp_fusion::{Context, ToolError, tool};
use mcp_fusion_drivers::raw_http;
use serde_json::{Value, json};

/// The form `notes.delete` asks the user to fill in.
#[derive(serde::Deserialize)]
struct Confirm {
    confirm: bool,
}

impl ElicitForm for Confirm {
    fn schema() -> ElicitationSchema {
        ElicitationSchema::builder()
            .required_bool("confirm")
            .build()
            .expect("a form of one field")
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    /// The note's name.
    note: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Link {
    /// Where to send the user.
    url: String,
}

/// How many times each of `notes`' handlers ran.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Notes, whose actions ask their client.
pub(crate) struct Notes;

/// Notes kept for the user.
#[tool]
impl Notes {
    /// Deletes a note, once the user confirms.
    #[action(destructive, timeout = "1s")]
    async fn delete(&self, args: Note, f: Context) -> Result<String, ToolError> {
        RUNS.fetch_add(1, Ordering::Relaxed);
        let answer = f
            .elicit::<Confirm>(format!("Delete {}?", args.note))
            .await?;
        Ok(match answer.accepted()?.confirm {
            true => format!("Deleted {}", args.note),
            false => format!("Kept {}", args.note),
        })
    }

    /// Summarizes a note with the client's model, once the user confirms.
    #[action(read_only)]
    async fn summarize(&self, args: Note, f: Context) -> Result<String, ToolError> {
        RUNS.fetch_add(1, Ordering::Relaxed);
        let confirm = f.elicit::<Confirm>("Send the note to the model?").await?;
        if !confirm.accepted()?.confirm {
            return Ok("Not summarized".into());
        }
        let sampled =
            (f.sample(Sampling::new(64).user(format!("Summarize {}", args.note)))).await?;
        Ok(format!(
            "{} ({})",
            sampled.text().unwrap_or(""),
            sampled.model()
        ))
    }

    /// The folders the client works in.
    #[action(read_only)]
    async fn folders(&self, f: Context) -> Result<String, ToolError> {
        let roots = f.roots().await?;
        Ok(roots
            .iter()
            .map(|r| r.uri.as_str())
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// Sends the user to pay.
    #[action]
    async fn pay(&self, f: Context) -> Result<String, ToolError> {
        f.elicit_url("Pay the invoice", "https://pay.example/inv_1")
            .await?
            .accepted()?;
        Ok("Paid".into())
    }

    /// Sends the user to a link the model chose.
    #[action]
    async fn open(&self, args: Link, f: Context) -> Result<String, ToolError> {
        f.elicit_url("Open the link", args.url).await?.accepted()?;
        Ok("Opened".into())
    }

    /// Logs one long line with terminal escapes in it.
    #[action(read_only)]
    async fn loud(&self, f: Context) -> Result<String, ToolError> {
        let line = format!("\u{1b}[2J{}\r\n", "x".repeat(100_000));
        Ok(format!("sent {}", f.log(LogLevel::Error, line).await))
    }

    /// Logs as it works: one message at each of three levels, then 200 at debug.
    #[action(read_only)]
    async fn chatty(&self, f: Context) -> Result<String, ToolError> {
        let mut sent = 0;
        for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Error] {
            sent += usize::from(f.log(level, format!("at {level:?}")).await);
        }
        for n in 0..200 {
            sent += usize::from(f.log(LogLevel::Debug, json!({"line": n})).await);
        }
        Ok(format!("sent {sent}"))
    }
}

pub(crate) fn notes() -> Server {
    Server::builder("notes", "1.0.0")
        .tool(Notes)
        .ask_timeout(Duration::from_secs(60))
        .build()
        .expect("the server builds")
}

/// How the user answers a form.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Answer {
    Confirm,
    Decline,
    Dismiss,
}

/// A client with a user and a model behind it, recording what it was asked and told.
#[derive(Clone)]
pub(crate) struct Person {
    /// What it declares it can be asked.
    pub(crate) can: &'static [&'static str],
    pub(crate) answer: Answer,
    /// How long the user (or the model) thinks before answering.
    pub(crate) thinks: Duration,
    pub(crate) asked: Arc<Mutex<Vec<String>>>,
    /// The id of each URL elicitation it was asked.
    pub(crate) ids: Arc<Mutex<Vec<String>>>,
    pub(crate) logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
    /// The params of each elicitation (with its `_meta`) and sampling it was asked, as sent.
    pub(crate) params: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Person {
    pub(crate) fn new(can: &'static [&'static str], answer: Answer) -> Self {
        Person {
            can,
            answer,
            thinks: Duration::ZERO,
            asked: Arc::default(),
            ids: Arc::default(),
            logs: Arc::default(),
            params: Arc::default(),
        }
    }

    pub(crate) fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        for can in self.can {
            match *can {
                "elicitation" => {
                    let mut elicitation = ElicitationCapability::default();
                    elicitation.form = Some(FormElicitationCapability::default());
                    elicitation.url = Some(UrlElicitationCapability::new());
                    capabilities.elicitation = Some(elicitation);
                }
                "sampling" => capabilities.sampling = Some(SamplingCapability::default()),
                "roots" => capabilities.roots = Some(RootsCapabilities::default()),
                other => panic!("no capability {other}"),
            }
        }
        let mut config = ClientConfig::default();
        config.capabilities = capabilities;
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        // rmcp hands the request's `_meta` to the handler apart.
        let mut sent = serde_json::to_value(&request).unwrap();
        sent["_meta"] = serde_json::to_value(&context.meta).unwrap();
        self.params.lock().unwrap().push(sent);
        let asked = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. } => {
                format!("form: {message}")
            }
            ElicitRequestParams::UrlElicitationParams {
                url,
                elicitation_id,
                ..
            } => {
                self.ids.lock().unwrap().push(elicitation_id.clone());
                format!("url: {url}")
            }
            other => panic!("an elicitation MCP does not define: {other:?}"),
        };
        self.asked.lock().unwrap().push(asked);
        tokio::time::sleep(self.thinks).await;
        Ok(match (self.answer, request) {
            (Answer::Confirm, ElicitRequestParams::FormElicitationParams { .. }) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
            }
            (Answer::Confirm, _) => ElicitResult::new(ElicitationAction::Accept),
            (Answer::Decline, _) => ElicitResult::new(ElicitationAction::Decline),
            (Answer::Dismiss, _) => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let sent = serde_json::to_value(&params).unwrap();
        self.params.lock().unwrap().push(sent);
        let prompt = params.messages[0].content.first().and_then(|c| c.as_text());
        let prompt = prompt.map(|t| t.text.clone()).unwrap_or_default();
        self.asked.lock().unwrap().push(format!("model: {prompt}"));
        tokio::time::sleep(self.thinks).await;
        let reply = SamplingMessage::assistant_text(format!("{prompt}: short"));
        Ok(CreateMessageResult::new(reply, "small-model".into()))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.asked.lock().unwrap().push("roots".into());
        Ok(ListRootsResult::new(vec![
            mcp_fusion::rmcp::model::Root::new("file:///work/a"),
            mcp_fusion::rmcp::model::Root::new("file:///work/b"),
        ]))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

pub(crate) fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().expect("an object"))
}

pub(crate) fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

/// The envelope's code and the result's `isError`.
pub(crate) fn envelope(result: &CallToolResult) -> (String, Option<bool>) {
    (parse_envelope(text(result)).code, result.is_error)
}

/// `person` connected to `server` over stdio, in this process.
pub(crate) async fn over_stdio(
    server: Server,
    person: Person,
) -> RunningService<RoleClient, Person> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = server.serve_io(read, write, StdioOptions::default());
    tokio::spawn(serving.into_future());
    person
        .serve(client_io)
        .await
        .expect("the client initializes")
}

/// `person` connected to `server` over streamable HTTP with a session.
pub(crate) async fn over_http(
    server: Server,
    person: Person,
) -> RunningService<RoleClient, Person> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(
        server
            .serve_http(listener, HttpOptions::default())
            .into_future(),
    );
    let transport = mcp_fusion::rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    person
        .serve(transport)
        .await
        .expect("the client initializes")
}

/// Each ask of a handler, on a 2025-11-25 session: the client's handlers answer on the
/// back-channel, and the handler reads their answers.
async fn each_ask_on_a_session(client: RunningService<RoleClient, Person>, person: &Person) {
    let deleted = client.call_tool(call("notes", json!({"action": "delete", "note": "a"})));
    let deleted = deleted.await.expect("tools/call");
    assert_eq!(text(&deleted), "Deleted a");
    let summarized = client.call_tool(call("notes", json!({"action": "summarize", "note": "b"})));
    let summarized = summarized.await.expect("tools/call");
    assert_eq!(text(&summarized), "Summarize b: short (small-model)");
    let folders = client.call_tool(call("notes", json!({"action": "folders"})));
    let folders = folders.await.expect("tools/call");
    assert_eq!(text(&folders), "file:///work/a file:///work/b");
    let paid = client.call_tool(call("notes", json!({"action": "pay"})));
    assert_eq!(text(&paid.await.expect("tools/call")), "Paid");
    assert_eq!(
        person.asked(),
        [
            "form: Delete a?",
            "form: Send the note to the model?",
            "model: Summarize b",
            "roots",
            "url: https://pay.example/inv_1"
        ]
    );

    // No level set: `info` and above, two of the first three. At `info` the same; at `debug`:
    // all three, and 97 of the 200 after them (at most 100 a call).
    let chatty = || client.call_tool(call("notes", json!({"action": "chatty"})));
    assert_eq!(text(&chatty().await.expect("tools/call")), "sent 2");
    for (level, sent) in [(LoggingLevel::Info, 2), (LoggingLevel::Debug, 100)] {
        client
            .set_level(SetLevelRequestParams::new(level))
            .await
            .expect("logging/setLevel");
        let answered = chatty().await.expect("tools/call");
        assert_eq!(text(&answered), format!("sent {sent}"));
    }
    // Each message was written before the call's answer.
    let logs = person.logs.lock().unwrap().clone();
    assert_eq!(logs.len(), 104);
    assert_eq!(logs[0].level, LoggingLevel::Info);
    assert_eq!(logs[0].logger.as_deref(), Some("notes.chatty"));
    assert_eq!(logs[1].level, LoggingLevel::Error);
    assert_eq!(logs[4].data, json!("at Debug"));
    client.cancel().await.expect("closed");
}

#[tokio::test(flavor = "current_thread")]
async fn each_ask_reaches_a_2025_11_25_client_over_stdio() {
    let person = Person::new(&["elicitation", "sampling", "roots"], Answer::Confirm);
    let client = over_stdio(notes(), person.clone()).await;
    each_ask_on_a_session(client, &person).await;
}

/// A log message reaches the host with its control characters escaped, cut to 16 KiB.
#[tokio::test(flavor = "current_thread")]
async fn a_log_message_reaches_the_host_escaped_and_cut() {
    let person = Person::new(&[], Answer::Confirm);
    let client = over_stdio(notes(), person.clone()).await;
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .expect("logging/setLevel");
    let answered = client.call_tool(call("notes", json!({"action": "loud"})));
    assert_eq!(text(&answered.await.expect("tools/call")), "sent true");
    let logs = person.logs.lock().unwrap().clone();
    let line = logs[0].data.as_str().expect("a string");
    assert!(line.starts_with("\\u001b[2Jxxx"), "{}", &line[..20]);
    assert!(
        line.ends_with(" more bytes cut]"),
        "{}",
        &line[line.len() - 40..]
    );
    assert!(logs[0].data.to_string().len() <= 16 * 1024);
    assert!(!line.chars().any(char::is_control));
    client.cancel().await.expect("closed");
}

/// A link is shown only when it is https (or http to this machine); any other is refused with
/// an envelope the model can act on, the user never asked. Each ask has an id of its own.
#[tokio::test(flavor = "current_thread")]
async fn only_https_links_are_shown_each_ask_with_its_own_id() {
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_stdio(notes(), person.clone()).await;
    let open = |url: &str| client.call_tool(call("notes", json!({"action": "open", "url": url})));
    for url in [
        "javascript:alert(1)",
        "http://pay.example/",
        "file:///etc/passwd",
        "pay.example",
    ] {
        let refused = open(url).await.expect("tools/call");
        assert_eq!(
            envelope(&refused),
            ("URL_REFUSED".into(), Some(true)),
            "{url}"
        );
    }
    let refused = parse_envelope(text(
        &open("http://pay.example/").await.expect("tools/call"),
    ));
    assert_eq!(
        refused.message,
        "The link was not shown to the user: its scheme is \"http\", and only https links are shown."
    );
    assert!(
        refused
            .recovery
            .is_some_and(|r| r.contains("with an https link"))
    );
    assert!(person.asked().is_empty());
    for url in [
        "https://pay.example/inv_1",
        "https://pay.example/inv_1",
        "http://localhost:8080/cb",
    ] {
        assert_eq!(text(&open(url).await.expect("tools/call")), "Opened");
    }
    assert_eq!(
        person.asked(),
        [
            "url: https://pay.example/inv_1",
            "url: https://pay.example/inv_1",
            "url: http://localhost:8080/cb"
        ]
    );
    let ids = person.ids.lock().unwrap().clone();
    assert_eq!(ids.len(), 3);
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    client.cancel().await.expect("closed");
}

#[tokio::test(flavor = "current_thread")]
async fn each_ask_reaches_a_2025_11_25_client_over_streamable_http() {
    let person = Person::new(&["elicitation", "sampling", "roots"], Answer::Confirm);
    let client = over_http(notes(), person.clone()).await;
    each_ask_on_a_session(client, &person).await;
}

/// A declined or dismissed form, and a client that cannot be asked, are envelopes the model
/// can act on; a client that declared nothing is never asked.
#[tokio::test(flavor = "current_thread")]
async fn declined_dismissed_and_unsupported_asks_are_envelopes() {
    let delete = || call("notes", json!({"action": "delete", "note": "a"}));
    for (answer, code) in [
        (Answer::Decline, "USER_DECLINED"),
        (Answer::Dismiss, "USER_CANCELLED"),
    ] {
        let person = Person::new(&["elicitation"], answer);
        let client = over_stdio(notes(), person.clone()).await;
        let answered = client.call_tool(delete()).await.expect("tools/call");
        assert_eq!(envelope(&answered), (code.to_owned(), Some(true)));
        assert_eq!(person.asked(), ["form: Delete a?"]);
    }

    let person = Person::new(&[], Answer::Confirm);
    let client = over_stdio(notes(), person.clone()).await;
    for (arguments, what) in [
        (json!({"action": "delete", "note": "a"}), "elicitation"),
        (json!({"action": "folders"}), "roots"),
        (json!({"action": "pay"}), "elicitation"),
    ] {
        let answered = client.call_tool(call("notes", arguments));
        let answered = answered.await.expect("tools/call");
        assert_eq!(
            envelope(&answered),
            ("CLIENT_UNSUPPORTED".into(), Some(true))
        );
        assert!(text(&answered).contains(what), "{}", text(&answered));
    }
    assert!(person.asked().is_empty(), "{:?}", person.asked());

    // Stateless HTTP before 2026-07-28 has no way back to its client.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut options = HttpOptions::default();
    options.stateless = true;
    tokio::spawn(notes().serve_http(listener, options).into_future());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "notes", "arguments": {"action": "delete", "note": "a"}}});
    let headers = [("mcp-protocol-version", "2025-06-18")];
    let reply = raw_http::post(&addr, &headers, body.to_string().as_bytes()).await;
    let result = &reply.message()["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("CLIENT_UNSUPPORTED")
    );
}

/// The time the user takes is not the action's: `delete`'s deadline is 1 s, and the user
/// thinks for 5 s; past the server's `ask_timeout` (here 30 s),, TIMEOUT says the user did not
/// answer in time.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_users_time_is_not_the_actions() {
    let server = |ask_timeout| {
        Server::builder("notes", "1.0.0")
            .tool(Notes)
            .ask_timeout(ask_timeout)
            .build()
            .expect("the server builds")
    };
    let mut person = Person::new(&["elicitation"], Answer::Confirm);
    person.thinks = Duration::from_secs(5);
    let delete = || call("notes", json!({"action": "delete", "note": "a"}));
    let client = over_stdio(server(Duration::from_secs(30)), person.clone()).await;
    let answered = client.call_tool(delete()).await.expect("tools/call");
    assert_eq!(text(&answered), "Deleted a");

    person.thinks = Duration::from_secs(60);
    let client = over_stdio(server(Duration::from_secs(30)), person).await;
    let answered = client.call_tool(delete()).await.expect("tools/call");
    assert_eq!(envelope(&answered), ("TIMEOUT".into(), Some(true)));
    let said = text(&answered);
    assert!(
        said.contains("The user did not answer within 30 seconds."),
        "{said}"
    );
    assert!(!said.contains("smaller"), "{said}");
}

/// A server over stateless streamable HTTP, and its address.
pub(crate) async fn stateless(server: Server, options: HttpOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(server.serve_http(listener, options).into_future());
    addr
}

/// On 2026-07-28, rmcp's client drives the rounds: each ask the handler makes ends a round
/// `input_required`, the client answers through its handlers and retries, and the handler runs
/// again from the top, finding the answers given so far.
#[tokio::test(flavor = "current_thread")]
async fn rmcp_drives_the_rounds_of_a_2026_07_28_call() {
    let addr = stateless(notes(), HttpOptions::default()).await;
    let person = Person::new(&["elicitation", "sampling", "roots"], Answer::Confirm);
    let transport = mcp_fusion::rmcp::transport::StreamableHttpClientTransport::from_uri(format!(
        "http://{addr}/mcp"
    ));
    let lifecycle = mcp_fusion::rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    use mcp_fusion::rmcp::service::ClientServiceExt;
    let client = (person.clone())
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("the client discovers the server");
    let runs = RUNS.load(Ordering::Relaxed);
    let summarized = client.call_tool(call("notes", json!({"action": "summarize", "note": "b"})));
    let summarized = summarized.await.expect("tools/call");
    assert_eq!(text(&summarized), "Summarize b: short (small-model)");
    assert_eq!(
        person.asked(),
        ["form: Send the note to the model?", "model: Summarize b"]
    );
    // Three runs: asked the user; asked the model; answered.
    assert!(RUNS.load(Ordering::Relaxed) - runs >= 3);

    // The roots, and a URL the user is sent to, by a round each.
    let folders = client.call_tool(call("notes", json!({"action": "folders"})));
    let folders = folders.await.expect("tools/call");
    assert_eq!(text(&folders), "file:///work/a file:///work/b");
    let paid = client.call_tool(call("notes", json!({"action": "pay"})));
    assert_eq!(text(&paid.await.expect("tools/call")), "Paid");
    assert_eq!(
        person.asked()[2..],
        ["roots", "url: https://pay.example/inv_1"]
    );

    // Log messages at the level the request carries (none without one), on the call's stream.
    let chatty = client.call_tool(call("notes", json!({"action": "chatty"})));
    assert_eq!(text(&chatty.await.expect("tools/call")), "sent 0");
    let mut at_info = call("notes", json!({"action": "chatty"}));
    let mut meta = RequestMetaObject::new();
    meta.set_log_level(LoggingLevel::Info);
    at_info.meta = Some(meta);
    let chatty = client.call_tool(at_info).await.expect("tools/call");
    assert_eq!(text(&chatty), "sent 2");
    let logs = person.logs.lock().unwrap().clone();
    let levels: Vec<_> = logs.iter().map(|l| l.level).collect();
    assert_eq!(levels, [LoggingLevel::Info, LoggingLevel::Error]);
}

/// A 2026-07-28 `tools/call` as its client sends it over HTTP.
pub(crate) fn call_2026(
    arguments: Value,
    retry: Option<(&Value, &str)>,
    capabilities: Value,
) -> Value {
    let mut params = json!({"name": "notes", "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }});
    if let Some((answers, state)) = retry {
        params["inputResponses"] = answers.clone();
        params["requestState"] = json!(state);
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
}

pub(crate) async fn post_2026(addr: &str, body: &Value, bearer: Option<&str>) -> Value {
    post_2026_whole(addr, body, bearer).await["result"].clone()
}

/// The whole JSON-RPC answer to a 2026-07-28 call.
pub(crate) async fn post_2026_whole(addr: &str, body: &Value, bearer: Option<&str>) -> Value {
    let authorization = bearer.map(|token| format!("Bearer {token}"));
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "notes"),
    ];
    if let Some(authorization) = &authorization {
        headers.push(("authorization", authorization));
    }
    let reply = raw_http::post(addr, &headers, body.to_string().as_bytes()).await;
    reply.message()
}

/// What the client reads in a refused round: a JSON-RPC error (invalid params).
pub(crate) fn refused(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let text = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(text.starts_with("This call cannot go on"), "{text}");
    text.to_owned()
}

/// An MRTR round trip as a client sees it, and the states it cannot carry on with: used
/// already, altered, made for other arguments, expired.
#[tokio::test(flavor = "current_thread")]
async fn a_round_trip_and_the_states_it_refuses() {
    let server = Server::builder("notes", "1.0.0")
        .tool(Notes)
        .request_state_secret([7u8; 32])
        .request_state_ttl(Duration::from_millis(200))
        .build()
        .unwrap();
    let addr = stateless(server, HttpOptions::default()).await;
    let can = json!({"elicitation": {"form": {}}});
    let delete = json!({"action": "delete", "note": "a"});

    let first = post_2026(&addr, &call_2026(delete.clone(), None, can.clone()), None).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let asked = &first["inputRequests"]["elicitation-1"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    assert_eq!(asked["params"]["message"], "Delete a?");
    assert_eq!(
        asked["params"]["requestedSchema"]["required"],
        json!(["confirm"])
    );
    let state = first["requestState"].as_str().expect("a state").to_owned();
    let answers = json!({"elicitation-1": {"action": "accept", "content": {"confirm": true}}});

    // Other arguments, or an altered state: refused, and the state is still good.
    let other = json!({"action": "delete", "note": "b"});
    let moved = call_2026(other, Some((&answers, &state)), can.clone());
    assert!(refused(&post_2026_whole(&addr, &moved, None).await).contains("made for another call"));
    let mut altered = state.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'A' { 'B' } else { 'A' });
    let altered = call_2026(delete.clone(), Some((&answers, &altered)), can.clone());
    assert!(refused(&post_2026_whole(&addr, &altered, None).await).contains("altered"));
    let retried = call_2026(delete.clone(), Some((&answers, &state)), can.clone());
    let done = post_2026(&addr, &retried, None).await;
    assert_eq!(done["content"][0]["text"], "Deleted a", "{done}");
    assert_eq!(done["isError"], false);
    // Replayed.
    assert!(refused(&post_2026_whole(&addr, &retried, None).await).contains("used already"));

    // Expired: the state is good for 200 ms, by the wall clock every replica reads.
    let first = post_2026(&addr, &call_2026(delete.clone(), None, can.clone()), None).await;
    let state = first["requestState"].as_str().unwrap().to_owned();
    let sealed = std::time::SystemTime::now();
    while sealed.elapsed().unwrap_or_default() <= Duration::from_millis(250) {
        tokio::task::yield_now().await;
        std::thread::yield_now();
    }
    let late = call_2026(delete, Some((&answers, &state)), can);
    assert!(refused(&post_2026_whole(&addr, &late, None).await).contains("expired"));
}

/// A round's state is bound to the verified caller: another subject's token cannot carry it on.
#[tokio::test(flavor = "current_thread")]
async fn another_subjects_state_is_refused() {
    use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
    use mcp_fusion_drivers::issuer::Issuer;

    const AUDIENCE: &str = "https://notes.example/mcp";
    let issuer = Issuer::start().await.unwrap();
    let mut options = HttpOptions::default();
    options.oauth = Some(OAuth::jwt(JwtVerifier::new(&issuer.url, AUDIENCE)));
    let addr = stateless(notes(), options).await;
    let (ada, bob) = (
        issuer.token(AUDIENCE, "ada", ""),
        issuer.token(AUDIENCE, "bob", ""),
    );
    let can = json!({"elicitation": {"form": {}}});
    let delete = json!({"action": "delete", "note": "a"});
    let first = post_2026(
        &addr,
        &call_2026(delete.clone(), None, can.clone()),
        Some(&ada),
    )
    .await;
    let state = first["requestState"].as_str().expect("a state").to_owned();
    let answers = json!({"elicitation-1": {"action": "accept", "content": {"confirm": true}}});
    let retried = call_2026(delete, Some((&answers, &state)), can);
    assert!(refused(&post_2026_whole(&addr, &retried, Some(&bob)).await).contains("another call"));
    let done = post_2026(&addr, &retried, Some(&ada)).await;
    assert_eq!(done["content"][0]["text"], "Deleted a", "{done}");
}
