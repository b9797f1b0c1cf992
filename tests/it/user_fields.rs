//! Fields only the user can give (`#[action(ask_user(..))]`) at run time: a call that leaves
//! one out has the server ask the user for it, through the same way to the client a handler's
//! `Context::elicit` takes (a 2025-11-25 session's back-channel, a 2026-07-28 `input_required`
//! round), then runs with the answer; a question declined or dismissed is the envelope
//! `elicit` gives. The model never gives such a field: it is not in the schema it reads, a call
//! that carries it is refused (USER_ONLY_FIELD), and a client that cannot be asked never lets
//! the call run (CLIENT_UNSUPPORTED, telling the model not to fill the field in; -32021 at
//! 2026-07-28). The client is rmcp's, with `client::Person` behind it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_fusion::Server;
use mcp_fusion::client::parse_envelope;
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use mcp_fusion::rmcp::transport::StreamableHttpClientTransport;
use mcp_fusion::server::HttpOptions;
use mcp_fusion::{Tool, ToolError, tool};
use mcp_fusion_drivers::raw_http;
use serde_json::{Value, json};

use super::client::{Answer, Person, call, envelope, over_http, over_stdio, stateless, text};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Delete {
    /// The note's name.
    note: String,
    /// Delete the note for good.
    confirm: Option<bool>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sign {
    /// The note's name.
    note: String,
    /// The name to sign the note with.
    #[schemars(length(min = 2))]
    confirm: Option<String>,
}

/// A desk of notes, counting the runs of its actions.
#[derive(Clone, Default)]
struct Desk {
    runs: Arc<AtomicUsize>,
}

/// Notes the user keeps.
#[tool]
impl Desk {
    /// Deletes a note, once the user confirms.
    #[action(destructive, ask_user(confirm))]
    async fn delete(&self, args: Delete) -> Result<String, ToolError> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        Ok(match args.confirm {
            Some(true) => format!("Deleted {}", args.note),
            Some(false) => format!("Kept {}", args.note),
            None => "Never asked".to_owned(),
        })
    }

    /// Archives a note, once the user confirms; once a minute at most.
    #[action(ask_user(confirm), rate_limit(max = 1, window = "1m"))]
    async fn archive(&self, args: Delete) -> Result<String, ToolError> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        Ok(format!("Archived {} ({:?})", args.note, args.confirm))
    }

    /// Signs a note with the user's name.
    #[action(ask_user(confirm))]
    async fn sign(&self, args: Sign) -> Result<String, ToolError> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        Ok(format!("{} signed by {:?}", args.note, args.confirm))
    }
}

impl Desk {
    fn runs(&self) -> usize {
        self.runs.load(Ordering::Relaxed)
    }

    fn server(&self) -> Server {
        Server::builder("desk", "1.0.0")
            .tool(self.clone())
            .build()
            .expect("the server builds")
    }
}

fn delete(arguments: Value) -> CallToolRequestParams {
    let mut arguments = arguments;
    arguments["action"] = json!("delete");
    call("desk", arguments)
}

/// What the user reads above the form that asks for `confirm`: the action named for a person.
const ASKED: &str = "form: \u{201c}Delete\u{201d} needs your answer before it goes on.";

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_field_left_out_is_asked_of_the_user_on_a_2025_11_25_session() {
    let desk = Desk::default();
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_stdio(desk.server(), person.clone()).await;
    let answered = client.call_tool(delete(json!({"note": "a"}))).await;
    assert_eq!(text(&answered.expect("tools/call")), "Deleted a");
    assert_eq!(person.asked(), [ASKED]);
    assert_eq!(desk.runs(), 1);
    client.cancel().await.expect("closed");

    // The same over streamable HTTP with a session.
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_http(desk.server(), person.clone()).await;
    let answered = client.call_tool(delete(json!({"note": "b", "confirm": null})));
    assert_eq!(text(&answered.await.expect("tools/call")), "Deleted b");
    assert_eq!(person.asked(), [ASKED]);
}

/// The model cannot give what only the user may: the field is not in the schema it reads, and
/// a call that carries it anyway is refused before anything runs, the user not asked.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_that_gives_the_field_is_refused_and_it_is_not_listed() {
    let desk = Desk::default();
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_stdio(desk.server(), person.clone()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let listed = serde_json::to_value(&tools[0].input_schema).unwrap();
    assert!(listed["properties"].get("note").is_some(), "{listed}");
    assert!(listed["properties"].get("confirm").is_none(), "{listed}");
    for confirm in [json!(true), json!(false)] {
        let given = client.call_tool(delete(json!({"note": "a", "confirm": confirm})));
        let given = given.await.expect("tools/call");
        assert_eq!(given.is_error, Some(true));
        let told = parse_envelope(text(&given));
        assert_eq!(told.code, "USER_ONLY_FIELD");
        assert_eq!(
            told.message,
            "Only the user can give \"confirm\"; the call may not carry it."
        );
        assert_eq!(
            told.recovery.as_deref(),
            Some("Call again without \"confirm\": the server asks the user for it.")
        );
    }
    assert!(person.asked().is_empty(), "{:?}", person.asked());

    // Over streamable HTTP at 2026-07-28, from a client that can be asked: refused all the same.
    let addr = stateless(desk.server(), HttpOptions::default()).await;
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
    "params": {"name": "desk", "arguments": {"action": "delete", "note": "a", "confirm": true},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "desk"),
    ];
    let reply = raw_http::post(&addr, &headers, body.to_string().as_bytes()).await;
    let result = &reply.message()["result"];
    let told = parse_envelope(result["content"][0]["text"].as_str().unwrap_or_default());
    assert_eq!(told.code, "USER_ONLY_FIELD", "{result}");
    assert_eq!(desk.runs(), 0);
}

/// The question comes after the call's limits: a call they hold back never reaches the user.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_held_back_by_its_limits_is_not_asked() {
    let desk = Desk::default();
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_stdio(desk.server(), person.clone()).await;
    let archive = || call("desk", json!({"action": "archive", "note": "a"}));
    let archived = client.call_tool(archive()).await.expect("tools/call");
    assert_eq!(text(&archived), "Archived a (Some(true))");
    let held = client.call_tool(archive()).await.expect("tools/call");
    assert_eq!(envelope(&held), ("RATE_LIMITED".into(), Some(true)));
    assert_eq!(
        person.asked(),
        ["form: \u{201c}Archive\u{201d} needs your answer before it goes on."]
    );
    assert_eq!(desk.runs(), 1);
}

/// Declined or dismissed, the question is the envelope `Context::elicit` propagation gives, and
/// the action does not run.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_declined_or_dismissed_question_is_the_envelope_elicit_gives() {
    let desk = Desk::default();
    for (answer, code) in [
        (Answer::Decline, "USER_DECLINED"),
        (Answer::Dismiss, "USER_CANCELLED"),
    ] {
        let person = Person::new(&["elicitation"], answer);
        let client = over_stdio(desk.server(), person.clone()).await;
        let answered = client.call_tool(delete(json!({"note": "a"}))).await;
        let answered = answered.expect("tools/call");
        assert_eq!(envelope(&answered), (code.to_owned(), Some(true)));
        assert_eq!(person.asked(), [ASKED]);
    }
    assert_eq!(desk.runs(), 0);
}

/// What the user gives is validated as the model's arguments are: Person signs with `true`,
/// which is no name.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn what_the_user_gives_is_validated_as_the_arguments_are() {
    let desk = Desk::default();
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_stdio(desk.server(), person.clone()).await;
    let signed = client.call_tool(call("desk", json!({"action": "sign", "note": "a"})));
    let signed = signed.await.expect("tools/call");
    assert_eq!(envelope(&signed), ("VALIDATION_ERROR".into(), Some(true)));
    assert!(
        text(&signed).contains(r#"<field name="confirm">"#),
        "{}",
        text(&signed)
    );
    assert_eq!(desk.runs(), 0);
}

/// A client without elicitation, stateless HTTP before 2026-07-28, and a call in process
/// without a client: the call never runs, and the model is told the truth (this needs a client
/// that can ask the user; do not fill the field in), never invited to give it.
#[tokio::test(flavor = "current_thread")]
async fn a_client_that_cannot_be_asked_never_lets_the_call_run() {
    let desk = Desk::default();
    let expected = "This action needs the user's own answer (\"confirm\"), and the client cannot ask them (no elicitation).";
    let check = |result: &CallToolResult| {
        assert_eq!(result.is_error, Some(true));
        let told = parse_envelope(text(result));
        assert_eq!(told.code, "CLIENT_UNSUPPORTED");
        assert_eq!(told.message, expected);
        assert_eq!(
            told.recovery.as_deref(),
            Some(
                "Do not retry with \"confirm\": tell the user this action needs a client that can ask them."
            )
        );
    };

    let person = Person::new(&[], Answer::Confirm);
    let client = over_stdio(desk.server(), person.clone()).await;
    let answered = client.call_tool(delete(json!({"note": "a"}))).await;
    check(&answered.expect("tools/call"));
    assert!(person.asked().is_empty());

    let mut options = HttpOptions::default();
    options.stateless = true;
    let addr = stateless(desk.server(), options).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "desk", "arguments": {"action": "delete", "note": "a"}}});
    let headers = [("mcp-protocol-version", "2025-06-18")];
    let reply = raw_http::post(&addr, &headers, body.to_string().as_bytes()).await;
    let result: CallToolResult = serde_json::from_value(reply.message()["result"].clone()).unwrap();
    check(&result);

    // At 2026-07-28 the request says what its client can do: -32021, HTTP 400.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
    "params": {"name": "desk", "arguments": {"action": "delete", "note": "a"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "desk"),
    ];
    let reply = raw_http::post(&addr, &headers, body.to_string().as_bytes()).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let error = &reply.message()["error"];
    assert_eq!(error["code"], -32021, "{error}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );

    let in_process = desk.server().call(delete(json!({"note": "a"}))).await;
    check(&in_process.expect("a tool of the server"));
    let arguments = json!({"action": "delete", "note": "a"});
    let alone = desk
        .call(arguments.as_object().cloned())
        .await
        .into_result();
    check(&alone);
    assert_eq!(desk.runs(), 0);
}

/// A 2026-07-28 `tools/call` of `desk.delete` as a client sends it over HTTP.
async fn post_2026(addr: &str, retry: Option<(&Value, &str)>) -> Value {
    let mut params = json!({"name": "desk", "arguments": {"action": "delete", "note": "a"},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }});
    if let Some((answers, state)) = retry {
        params["inputResponses"] = answers.clone();
        params["requestState"] = json!(state);
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "desk"),
    ];
    let reply = raw_http::post(addr, &headers, body.to_string().as_bytes()).await;
    reply.message()["result"].clone()
}

/// On 2026-07-28 the question ends a round: the call is answered `input_required` with the
/// form, before the action runs; retried with the answer, it runs with it. rmcp's client
/// drives the same round trip through Person.
#[tokio::test(flavor = "current_thread")]
async fn a_field_left_out_is_asked_through_an_input_required_round_on_2026_07_28() {
    let desk = Desk::default();
    let addr = stateless(desk.server(), HttpOptions::default()).await;
    let first = post_2026(&addr, None).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let asked = &first["inputRequests"]["elicitation-1"];
    assert_eq!(asked["method"], "elicitation/create", "{first}");
    assert_eq!(
        ASKED.strip_prefix("form: "),
        asked["params"]["message"].as_str()
    );
    assert_eq!(
        asked["params"]["requestedSchema"],
        json!({"type": "object", "required": ["confirm"], "properties": {
            "confirm": {"type": "boolean", "description": "Delete the note for good."},
        }})
    );
    assert_eq!(desk.runs(), 0);
    let state = first["requestState"].as_str().expect("a state");
    let answers = json!({"elicitation-1": {"action": "accept", "content": {"confirm": false}}});
    let done = post_2026(&addr, Some((&answers, state))).await;
    assert_eq!(done["content"][0]["text"], "Kept a", "{done}");
    assert_eq!(desk.runs(), 1);

    let person = Person::new(&["elicitation"], Answer::Confirm);
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = (person.clone())
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("the client discovers the server");
    let deleted = client.call_tool(delete(json!({"note": "b"}))).await;
    assert_eq!(text(&deleted.expect("tools/call")), "Deleted b");
    assert_eq!(person.asked(), [ASKED]);
    assert_eq!(desk.runs(), 2);
}
