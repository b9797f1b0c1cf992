//! Tasks (MCP tasks extension, SEP-2663) as a hostile or careless client meets them, over
//! stateless streamable HTTP in process on tokio's paused clock: a flood of creations meets the
//! per-caller cap, unknown ids and answers to questions never asked are told apart from
//! mistakes of the server, cancel storms settle once, a client that never polls loses its
//! result after `ttlMs`, a task past its ttl is stopped, a running task holds its action's
//! concurrency place, and the error contract is a direct call's. Another OAuth subject's id is
//! unknown (real time: a real issuer on loopback).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_fusion::rmcp::ErrorData;
use mcp_fusion::server::{HttpOptions, HttpService};
use mcp_fusion::tools::ElicitForm;
use mcp_fusion::{Context, ErrorCode, Server, ToolError, tool};
use serde_json::{Value, json};

/// Please confirm.
#[derive(serde::Deserialize, ElicitForm)]
struct Confirm {
    /// Whether you confirm.
    confirm: bool,
}

/// Jobs, counting the runs of `sleep` that got past their sleep.
#[derive(Default, Clone)]
struct Jobs {
    woke: Arc<AtomicUsize>,
}

/// Jobs that run as tasks.
#[tool]
impl Jobs {
    /// Sleeps a minute, then answers.
    #[action(task, read_only)]
    async fn sleep(&self) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_secs(60)).await;
        self.woke.fetch_add(1, Ordering::SeqCst);
        Ok("slept".into())
    }

    /// Asks to confirm, then answers.
    #[action(task, destructive)]
    async fn confirm(&self, f: Context) -> Result<String, ToolError> {
        let Confirm { confirm } = f.elicit::<Confirm>("Sure?").await?.accepted()?;
        Ok(format!("confirmed: {confirm}"))
    }

    /// Fails with a tool error.
    #[action(task, read_only)]
    async fn refuse(&self) -> Result<String, ToolError> {
        Err(ToolError::new(ErrorCode::NOT_FOUND, "No such thing.").suggest("Ask for another."))
    }

    /// Succeeds with a warning.
    #[action(task, read_only)]
    async fn warn(&self, f: Context) -> Result<String, ToolError> {
        f.warn(
            ToolError::new(ErrorCode::DEPRECATED, "Old.").severity(mcp_fusion::Severity::Warning),
        );
        Ok("done".into())
    }

    /// Panics.
    #[action(task, read_only)]
    async fn panic(&self) -> Result<String, ToolError> {
        panic!("secret internals 0xdeadbeef")
    }

    /// Answers with a JSON-RPC error.
    #[action(task, read_only)]
    async fn protocol(&self) -> Result<String, ErrorData> {
        Err(ErrorData::invalid_params(
            "the job refuses these params",
            None,
        ))
    }

    /// Runs as a task, twice a minute.
    #[action(task, read_only, rate_limit(max = 2, window = "1m"))]
    async fn rare(&self) -> Result<String, ToolError> {
        Ok("rare".into())
    }

    /// Runs only as a task; one at a time.
    #[action(
        task = "required",
        read_only,
        concurrency(max_active = 1, max_queued = 0)
    )]
    async fn single(&self) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok("single done".into())
    }
}

type Builder = mcp_fusion::server::ServerBuilder;

fn endpoint(builder: impl FnOnce(Builder) -> Builder) -> HttpService {
    endpoint_of(Jobs::default(), builder)
}

fn endpoint_of(jobs: Jobs, builder: impl FnOnce(Builder) -> Builder) -> HttpService {
    let server = builder(Server::builder("jobs", "1").tool(jobs))
        .build()
        .unwrap();
    let mut options = HttpOptions::default();
    options.stateless = true;
    server.http_service(options)
}

/// What a 2026-07-28 request's `_meta` says, with the tasks extension declared or not.
fn meta(tasks: bool) -> Value {
    let mut can = json!({"elicitation": {"form": {}}});
    if tasks {
        can["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": can,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1"},
    })
}

/// The JSON-RPC message answering `method` with `params` (their `_meta` added).
async fn rpc(endpoint: &HttpService, method: &str, mut params: Value, tasks: bool) -> Value {
    use tower::ServiceExt;
    params["_meta"] = meta(tasks);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let name = params["name"].as_str().or(params["taskId"].as_str());
    let mut request = axum::http::Request::post("/mcp")
        .header("host", "127.0.0.1:3000")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let request = request
        .body(axum::body::Body::from(message.to_string()))
        .unwrap();
    let reply = endpoint.clone().oneshot(request).await.unwrap();
    let body = axum::body::to_bytes(axum::body::Body::new(reply.into_body()), usize::MAX)
        .await
        .unwrap();
    let text = String::from_utf8(body.to_vec()).unwrap();
    (text.lines().filter_map(|l| l.strip_prefix("data: ")))
        .chain(std::iter::once(text.as_str()))
        .find_map(|data| serde_json::from_str::<Value>(data).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message: {text}"))
}

async fn call(endpoint: &HttpService, action: &str) -> Value {
    let params = json!({"name": "jobs", "arguments": {"action": action}});
    rpc(endpoint, "tools/call", params, true).await
}

/// Calls `action` as a task; its id.
async fn start(endpoint: &HttpService, action: &str) -> String {
    let created = call(endpoint, action).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(endpoint: &HttpService, id: &str) -> Value {
    rpc(endpoint, "tasks/get", json!({"taskId": id}), true).await
}

/// The task once its status is `status` (the clock runs on while it waits).
async fn once(endpoint: &HttpService, id: &str, status: &str) -> Value {
    for _ in 0..2_000 {
        let read = get(endpoint, id).await;
        if read["result"]["status"] == status {
            return read["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never read {status}: {}", get(endpoint, id).await)
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_creations_meets_the_per_caller_cap_until_ttls_pass() {
    let ttl = Duration::from_secs(120);
    let endpoint = endpoint(|b| b.max_tasks_per_caller(3).task_ttl(ttl));
    for _ in 0..3 {
        start(&endpoint, "sleep").await;
    }
    for _ in 0..20 {
        let refused = call(&endpoint, "sleep").await;
        let result = &refused["result"];
        assert_eq!(result["isError"], true, "{refused}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("<tool_error code=\"RATE_LIMITED\""),
            "{text}"
        );
        assert!(text.contains("at most 3 at once"), "{text}");
    }
    tokio::time::sleep(ttl).await;
    start(&endpoint, "sleep").await;
}

#[tokio::test(start_paused = true)]
async fn creating_a_task_spends_its_rate_limit_once_and_mistakes_make_no_task() {
    let endpoint = endpoint(|b| b);
    for _ in 0..2 {
        let id = start(&endpoint, "rare").await;
        once(&endpoint, &id, "completed").await;
    }
    let refused = call(&endpoint, "rare").await;
    assert!(
        refused["result"].get("taskId").is_none(),
        "no task: {refused}"
    );
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("<tool_error code=\"RATE_LIMITED\""),
        "{text}"
    );
    // A misspelt action or bad arguments are answered at once, as a direct call's are.
    let misspelt = call(&endpoint, "sleeep").await;
    assert!(misspelt["result"].get("taskId").is_none(), "{misspelt}");
    assert_eq!(misspelt["result"]["isError"], true);
    let params = json!({"name": "jobs", "arguments": {"action": "sleep", "extra": 1}});
    let invalid = rpc(&endpoint, "tools/call", params, true).await;
    assert!(invalid["result"].get("taskId").is_none(), "{invalid}");
    let text = invalid["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("<validation_error action=\"jobs.sleep\">"),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_ids_are_invalid_params_whatever_their_shape() {
    let endpoint = endpoint(|b| b);
    let long = "x".repeat(1_000);
    for id in [
        "",
        "0123456789abcdef0123456789abcdef",
        "../../etc",
        long.as_str(),
    ] {
        for method in ["tasks/get", "tasks/cancel"] {
            let answer = rpc(&endpoint, method, json!({"taskId": id}), true).await;
            assert_eq!(
                answer["error"]["code"], -32602,
                "{method} {id:.20}: {answer}"
            );
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.len() < 400, "the id is cut: {message}");
        }
        let update = json!({"taskId": id, "inputResponses": {}});
        let answer = rpc(&endpoint, "tasks/update", update, true).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
    // Without the extension declared, rmcp refuses first.
    let refused = rpc(&endpoint, "tasks/get", json!({"taskId": "x"}), false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    // Methods the extension removed.
    for method in ["tasks/result", "tasks/list"] {
        let answer = rpc(&endpoint, method, json!({"taskId": "x"}), true).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}

#[tokio::test(start_paused = true)]
async fn answers_to_questions_never_asked_are_dropped() {
    let endpoint = endpoint(|b| b);
    let id = start(&endpoint, "confirm").await;
    let asked = once(&endpoint, &id, "input_required").await;
    let keys: Vec<&String> = asked["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 1, "{asked}");
    let key = keys[0].clone();
    // Keys it did not ask, many and large: acknowledged, dropped.
    let mut strangers = serde_json::Map::new();
    for n in 0..100 {
        strangers.insert(
            format!("never-{n}"),
            json!({"action": "accept", "content": {"confirm": true}}),
        );
    }
    strangers.insert("x".repeat(5_000), json!("y".repeat(5_000)));
    let update = json!({"taskId": id, "inputResponses": strangers});
    let ack = rpc(&endpoint, "tasks/update", update, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let still = get(&endpoint, &id).await["result"].clone();
    assert_eq!(still["status"], "input_required");
    assert_eq!(still["inputRequests"].as_object().unwrap().len(), 1);
    // The question it asked, answered.
    let answer = json!({key.clone(): {"action": "accept", "content": {"confirm": true}}});
    let ack = rpc(
        &endpoint,
        "tasks/update",
        json!({"taskId": id, "inputResponses": answer}),
        true,
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = once(&endpoint, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "confirmed: true",
        "{done}"
    );
    // An update of a finished task is acknowledged and changes nothing.
    let late = json!({"taskId": id, "inputResponses": {key: {"action": "decline"}}});
    rpc(&endpoint, "tasks/update", late, true).await;
    assert_eq!(get(&endpoint, &id).await["result"]["status"], "completed");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_storm_stops_the_handler_once_and_leaves_finished_tasks_alone() {
    let jobs = Jobs::default();
    let endpoint = endpoint_of(jobs.clone(), |b| b);
    let id = start(&endpoint, "sleep").await;
    let storm: Vec<_> = (0..50)
        .map(|_| {
            let (endpoint, id) = (endpoint.clone(), id.clone());
            tokio::spawn(async move {
                rpc(&endpoint, "tasks/cancel", json!({"taskId": id}), true).await
            })
        })
        .collect();
    for ack in storm {
        let ack = ack.await.unwrap();
        assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    }
    let cancelled = get(&endpoint, &id).await["result"].clone();
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("result").is_none() && cancelled.get("error").is_none());
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(
        jobs.woke.load(Ordering::SeqCst),
        0,
        "the handler was stopped"
    );

    let done = start(&endpoint, "refuse").await;
    once(&endpoint, &done, "completed").await;
    for _ in 0..50 {
        rpc(&endpoint, "tasks/cancel", json!({"taskId": done}), true).await;
    }
    assert_eq!(get(&endpoint, &done).await["result"]["status"], "completed");
}

#[tokio::test(start_paused = true)]
async fn a_client_that_never_polls_loses_the_result_after_ttl_ms() {
    let ttl = Duration::from_secs(60);
    let endpoint = endpoint(|b| b.task_ttl(ttl));
    let created = call(&endpoint, "refuse").await;
    assert_eq!(created["result"]["ttlMs"], 60_000, "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    tokio::time::sleep(ttl - Duration::from_millis(1)).await;
    assert_eq!(get(&endpoint, &id).await["result"]["status"], "completed");
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(get(&endpoint, &id).await["error"]["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn a_task_still_running_at_its_ttl_is_stopped_and_reads_failed_then_goes() {
    let ttl = Duration::from_secs(10);
    let jobs = Jobs::default();
    let endpoint = endpoint_of(jobs.clone(), |b| {
        b.task_ttl(ttl)
            .task_poll_interval(Duration::from_millis(500))
    });
    let id = start(&endpoint, "sleep").await;
    tokio::time::sleep(ttl - Duration::from_millis(500)).await;
    let failed = get(&endpoint, &id).await["result"].clone();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(
        failed["error"]["message"].as_str().unwrap().contains("ttl"),
        "{failed}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(get(&endpoint, &id).await["error"]["code"], -32602);
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(
        jobs.woke.load(Ordering::SeqCst),
        0,
        "the handler was stopped"
    );
}

#[tokio::test(start_paused = true)]
async fn a_running_task_holds_its_concurrency_place() {
    let endpoint = endpoint(|b| b);
    let first = start(&endpoint, "single").await;
    let second = start(&endpoint, "single").await;
    let busy = once(&endpoint, &second, "completed").await;
    assert_eq!(busy["result"]["isError"], true);
    let text = busy["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("<tool_error code=\"SERVER_BUSY\""),
        "{text}"
    );
    let done = once(&endpoint, &first, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "single done");
    // Without the extension declared, a task-only action is refused as the extension asks.
    let params = json!({"name": "jobs", "arguments": {"action": "single"}});
    let refused = rpc(&endpoint, "tools/call", params, false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let required = &refused["error"]["data"]["requiredCapabilities"]["extensions"];
    assert!(
        required.get("io.modelcontextprotocol/tasks").is_some(),
        "{refused}"
    );
    // An action that may run as a task runs inline for such a client.
    let params = json!({"name": "jobs", "arguments": {"action": "refuse"}});
    let inline = rpc(&endpoint, "tools/call", params, false).await;
    assert_eq!(inline["result"]["isError"], true, "{inline}");
    assert!(inline["result"].get("taskId").is_none());
}

#[tokio::test(start_paused = true)]
async fn the_error_contract_of_a_task_is_a_direct_calls() {
    let endpoint = endpoint(|b| b);
    for action in ["refuse", "warn", "panic"] {
        let id = start(&endpoint, action).await;
        let task = once(&endpoint, &id, "completed").await;
        let params = json!({"name": "jobs", "arguments": {"action": action}});
        let direct = rpc(&endpoint, "tools/call", params, false).await["result"].clone();
        let in_task = &task["result"];
        assert_eq!(
            in_task["isError"], direct["isError"],
            "{action}: {task} {direct}"
        );
        let text = in_task["content"][0]["text"].as_str().unwrap();
        match action {
            "refuse" => {
                assert_eq!(in_task, &direct, "the same envelope and mirror");
                assert!(text.starts_with("<tool_error code=\"NOT_FOUND\""), "{text}");
                assert_eq!(in_task["_meta"], direct["_meta"]);
            }
            "warn" => {
                assert_eq!(in_task["isError"], false);
                assert_eq!(in_task["content"], direct["content"], "the warning kept");
            }
            _ => {
                assert!(
                    text.starts_with("<tool_error code=\"INTERNAL_ERROR\""),
                    "{text}"
                );
                assert!(!text.contains("0xdeadbeef"), "no internals: {text}");
            }
        }
    }
    // A protocol error fails the task (no result), as a direct call answers it.
    let id = start(&endpoint, "protocol").await;
    let failed = once(&endpoint, &id, "failed").await;
    assert_eq!(failed["error"]["code"], -32602, "{failed}");
    assert_eq!(failed["error"]["message"], "the job refuses these params");
    assert!(failed.get("result").is_none());
    let params = json!({"name": "jobs", "arguments": {"action": "protocol"}});
    let direct = rpc(&endpoint, "tools/call", params, false).await;
    assert_eq!(direct["error"]["code"], -32602, "{direct}");
}

#[tokio::test]
async fn another_subjects_task_is_an_unknown_id() {
    use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
    use mcp_fusion_drivers::issuer::Issuer;
    use mcp_fusion_drivers::raw_http;

    let issuer = Issuer::start().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let verifier =
        JwtVerifier::new(&issuer.url, &resource).jwks_url(format!("{}/jwks", issuer.url));
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.oauth = Some(OAuth::jwt(verifier));
    let server = Server::builder("jobs", "1")
        .tool(Jobs::default())
        .build()
        .unwrap();
    let serving = tokio::spawn(server.serve_http(listener, options).into_future());
    let post = async |subject: &str, method: &str, params: Value| {
        let bearer = format!("Bearer {}", issuer.token(&resource, subject, ""));
        let mut params = params;
        params["_meta"] = meta(true);
        let name = params["name"]
            .as_str()
            .or(params["taskId"].as_str())
            .unwrap()
            .to_owned();
        let headers = [
            ("Authorization", bearer.as_str()),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name.as_str()),
        ];
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        raw_http::post(&addr, &headers, message.to_string().as_bytes())
            .await
            .message()
    };
    let created = post(
        "alice",
        "tools/call",
        json!({"name": "jobs", "arguments": {"action": "sleep"}}),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let mine = post("alice", "tasks/get", json!({"taskId": id})).await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    for method in ["tasks/get", "tasks/cancel"] {
        let theirs = post("mallory", method, json!({"taskId": id})).await;
        assert_eq!(theirs["error"]["code"], -32602, "{method}: {theirs}");
    }
    let update = json!({"taskId": id, "inputResponses": {}});
    assert_eq!(
        post("mallory", "tasks/update", update).await["error"]["code"],
        -32602
    );
    // Still alice's, still running.
    let mine = post("alice", "tasks/get", json!({"taskId": id})).await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    post("alice", "tasks/cancel", json!({"taskId": id})).await;
    serving.abort();
}

#[tokio::test(start_paused = true)]
async fn ids_are_unguessable() {
    // 128 bits of the operating system's random source, in hex.
    let endpoint = endpoint(|b| b);
    let a = start(&endpoint, "refuse").await;
    let b = start(&endpoint, "refuse").await;
    assert_eq!((a.len(), b.len()), (32, 32));
    assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a[..16], b[..16]);
}

#[tokio::test(start_paused = true)]
async fn the_typed_client_starts_waits_answers_and_cancels_tasks() {
    use mcp_fusion::client::{Answers, Started};
    use mcp_fusion::rmcp::model::{
        ElicitResult, ElicitationAction, InputResponses, TaskPayload, TaskStatus,
    };

    let server = Server::builder("jobs", "1")
        .tool(Jobs::default())
        .task_poll_interval(Duration::from_millis(200))
        .build()
        .unwrap();
    // It can be asked (elicitation); a task's questions are answered with tasks/update.
    let answers = Answers::new()
        .tasks()
        .elicitation(|_| async { ElicitResult::new(ElicitationAction::Decline) });
    let (client, _connection) = answers.in_memory(server).await.unwrap();
    let Started::Task(task) = client.start_task("jobs.confirm", json!({})).await.unwrap() else {
        panic!("jobs.confirm runs as a task");
    };
    assert_eq!(task.poll_interval_ms, Some(200));
    let asking = client.wait_task(&task).await.unwrap();
    let TaskPayload::InputRequired { input_requests } = &asking.payload else {
        panic!("it asks: {asking:?}");
    };
    let answers: InputResponses = (input_requests.keys())
        .map(|key| {
            (
                key.clone(),
                json!({"action": "accept", "content": {"confirm": true}}),
            )
        })
        .collect();
    client.answer_task(&task.task_id, answers).await.unwrap();
    let done = client.wait_task(&task).await.unwrap();
    let TaskPayload::Completed { result } = &done.payload else {
        panic!("it completes: {done:?}");
    };
    assert_eq!(result["content"][0]["text"], "confirmed: true");

    let Started::Task(sleeping) = client.start_task("jobs.sleep", json!({})).await.unwrap() else {
        panic!("jobs.sleep runs as a task");
    };
    client.cancel_task(&sleeping.task_id).await.unwrap();
    let cancelled = client.wait_task(&sleeping).await.unwrap();
    assert_eq!(cancelled.status(), TaskStatus::Cancelled);

    // Without the extension declared, the same call runs inline.
    let server = Server::builder("jobs", "1")
        .tool(Jobs::default())
        .build()
        .unwrap();
    let (plain, _connection) = Answers::new().in_memory(server).await.unwrap();
    let started = plain.start_task("jobs.refuse", json!({})).await.unwrap();
    assert!(matches!(started, Started::Done(result) if result.is_error == Some(true)));
}

/// Two replicas share one store; the one running a task is killed (its runtime shut down, no
/// goodbye): once its lease lapses the other reads the task `failed`, saying to start it again.
/// Real time (two runtimes, one clock): the lease is short, and the wait is for the event.
#[test]
fn a_killed_replicas_task_reads_failed_through_the_other() {
    use mcp_fusion::server::tasks::MemoryTaskStore;

    let store = MemoryTaskStore::new();
    let replica = |store: MemoryTaskStore| {
        endpoint(move |b| b.task_store(store).task_lease(Duration::from_millis(300)))
    };
    let doomed = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let first = replica(store.clone());
    let id = doomed.block_on(start(&first, "sleep"));
    let other = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let second = replica(store);
    other.block_on(async {
        let read = get(&second, &id).await;
        assert_eq!(read["result"]["status"], "working", "{read}");
    });
    doomed.shutdown_background();
    let failed = other.block_on(crate::support::eventually(
        "the orphan reads failed",
        async || {
            let read = get(&second, &id).await;
            (read["result"]["status"] == "failed").then_some(read)
        },
    ));
    let error = &failed["result"]["error"];
    assert_eq!(error["code"], -32603, "{failed}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("replica") && message.contains("again"),
        "{message}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hand_written_action_runs_as_a_task_as_a_macro_one_does() {
    use mcp_fusion::tools::{ActionDef, TaskSupport, ToolDef};

    let def = ToolDef::new("export")
        .description("Exports.")
        .action(
            ActionDef::without_arguments("all")
                .description("Exports everything.")
                .task(TaskSupport::Required),
        )
        .build();
    let server = Server::builder("hand", "1")
        .tool(crate::support::Defined(def))
        .build()
        .unwrap();
    let mut options = HttpOptions::default();
    options.stateless = true;
    let endpoint = server.http_service(options);
    let params = json!({"name": "export", "arguments": {"action": "all"}});
    let created = rpc(&endpoint, "tools/call", params.clone(), true).await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"));
    let done = once(&endpoint, id, "completed").await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    let refused = rpc(&endpoint, "tools/call", params, false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}
