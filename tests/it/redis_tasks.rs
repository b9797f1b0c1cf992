//! Tasks shared by a fleet on one Redis, started by the test on a free loopback port
//! (`redis-server` must be installed; the test fails, never skips, when it cannot start).
//! Two stores on one Redis stand for two replicas; Redis's own clock keeps leases and
//! expiries, so those tests take real time, kept short, and wait for what they expect.

use std::time::Duration;

use mcp_fusion::rmcp::model::{
    DetailedTask, ElicitRequest, ElicitRequestParams, InputRequest, InputRequests, InputResponses,
    JsonObject, TaskPayload, TaskStatus,
};
use mcp_fusion::server::tasks::{
    Held, NewTask, ORPHANED, RedisTaskStore, TaskStore, TaskStoreError, TaskUpdate,
};
use mcp_fusion_drivers::redis_server::{self, RedisServer};
use serde_json::json;
use sha2::Digest;

use crate::support::eventually;

const SECRET: &str = "a test secret of more than sixteen bytes";
const TTL: Duration = Duration::from_secs(60);

fn redis() -> RedisServer {
    RedisServer::start().unwrap_or_else(|e| panic!("these tests need a Redis of their own: {e}"))
}

/// A replica's store on `redis`.
fn store(redis: &RedisServer) -> RedisTaskStore {
    RedisTaskStore::builder(redis.url())
        .prefix("fleet")
        .key_secret(SECRET)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

/// A fresh task id of 32 hex digits, as a server mints them (unique here, not unguessable).
fn fresh_id() -> String {
    static MINTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = MINTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seed = format!(
        "{n} {:?} {}",
        std::time::SystemTime::now(),
        std::process::id()
    );
    sha2::Sha256::digest(seed)[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn question(message: &str) -> InputRequest {
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    }))
    .unwrap();
    InputRequest::Elicitation(ElicitRequest::new(params))
}

fn result(text: &str) -> JsonObject {
    serde_json::from_value(json!({"content": [{"type": "text", "text": text}], "isError": false}))
        .unwrap()
}

async fn read(store: &RedisTaskStore, caller: Option<&str>, id: &str) -> Option<DetailedTask> {
    store.get(caller, id).await.unwrap()
}

async fn status(store: &RedisTaskStore, caller: Option<&str>, id: &str) -> Option<TaskStatus> {
    read(store, caller, id).await.map(|task| task.status())
}

#[tokio::test]
async fn a_task_created_through_one_replica_is_read_answered_and_finished_through_another() {
    let redis = redis();
    let (first, second) = (store(&redis), store(&redis));
    let id = fresh_id();
    let alice = Some("alice@example.com");
    // The server's own clock names its createdAt, as its task-creation result said.
    let created = std::time::UNIX_EPOCH + Duration::from_millis(1_785_234_600_123);
    let new = NewTask::new(&id, alice, TTL).created(created);
    first.create(new).await.unwrap();
    // Readable at once through the other replica, and only by its caller.
    let seen = read(&second, alice, &id).await.expect("readable at once");
    assert_eq!(seen.status(), TaskStatus::Working);
    assert_eq!(seen.task.task_id, id);
    assert_eq!(seen.task.ttl_ms, Some(60_000));
    assert_eq!(seen.task.created_at, "2026-07-28T10:30:00.123Z");
    assert_eq!(seen.task.last_updated_at, seen.task.created_at);
    assert_eq!(status(&second, Some("mallory"), &id).await, None);
    assert_eq!(status(&second, None, &id).await, None, "nor the anonymous");
    assert!(!second.cancel(Some("mallory"), &id).await.unwrap());
    let stranger = InputResponses::from([("a".to_owned(), json!(true))]);
    assert!(!second.answer(Some("mallory"), &id, stranger).await.unwrap());

    // The running replica asks two questions; the other replica reads them and answers in
    // parts, an answer to a question never asked dropped.
    let asks = InputRequests::from([("a".into(), question("A?")), ("b".into(), question("B?"))]);
    let held = first
        .record(&id, TaskUpdate::InputRequired(asks))
        .await
        .unwrap();
    assert_eq!(held, Held::Running);
    let seen = read(&second, alice, &id).await.unwrap();
    let TaskPayload::InputRequired { input_requests } = &seen.payload else {
        panic!("asking: {seen:?}");
    };
    assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(input_requests["a"], question("A?"));
    // A late progress report of the run that asked takes nothing back.
    let late = TaskUpdate::Working {
        message: Some("late".into()),
    };
    assert_eq!(first.record(&id, late).await.unwrap(), Held::Running);
    let part = InputResponses::from([("a".into(), json!({"ok": true})), ("zzz".into(), json!(1))]);
    assert!(second.answer(alice, &id, part).await.unwrap());
    assert_eq!(first.take_answers(&id).await.unwrap(), None, "b is pending");
    let seen = read(&first, alice, &id).await.unwrap();
    let TaskPayload::InputRequired { input_requests } = &seen.payload else {
        panic!("still asking b: {seen:?}");
    };
    assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["b"]);
    let rest = InputResponses::from([("b".into(), json!({"ok": false}))]);
    assert!(second.answer(alice, &id, rest).await.unwrap());
    assert_eq!(status(&second, alice, &id).await, Some(TaskStatus::Working));
    let taken = first.take_answers(&id).await.unwrap().unwrap();
    let expected = InputResponses::from([
        ("a".into(), json!({"ok": true})),
        ("b".into(), json!({"ok": false})),
    ]);
    assert_eq!(taken, expected, "the stranger dropped");
    assert_eq!(
        first.take_answers(&id).await.unwrap(),
        Some(InputResponses::new())
    );

    // Progress, then the end, read through the other replica; a cancel storm leaves it.
    let progress = TaskUpdate::Working {
        message: Some("part 2 of 5".into()),
    };
    first.record(&id, progress).await.unwrap();
    let seen = read(&second, alice, &id).await.unwrap();
    assert_eq!(seen.task.status_message.as_deref(), Some("part 2 of 5"));
    first
        .record(&id, TaskUpdate::Completed(result("done")))
        .await
        .unwrap();
    for _ in 0..50 {
        assert!(second.cancel(alice, &id).await.unwrap());
    }
    let seen = read(&second, alice, &id).await.unwrap();
    assert_eq!(
        seen.payload,
        TaskPayload::Completed {
            result: result("done")
        }
    );
    assert_eq!(seen.task.status_message, None);
    let late = first
        .record(&id, TaskUpdate::Completed(result("again")))
        .await;
    assert_eq!(late.unwrap(), Held::Gone, "a terminal status is final");
    assert_eq!(first.renew(&id, TTL).await.unwrap(), Held::Gone);
}

#[tokio::test]
async fn a_cancel_through_another_replica_wakes_the_running_one_at_once() {
    let redis = redis();
    let (running, other) = (store(&redis), store(&redis));
    let id = fresh_id();
    running.create(NewTask::new(&id, None, TTL)).await.unwrap();
    let asks = InputRequests::from([("sure".into(), question("Sure?"))]);
    running
        .record(&id, TaskUpdate::InputRequired(asks))
        .await
        .unwrap();
    // The running replica listens once it first waits for its task.
    drop(running.changed(&id));
    eventually("the running replica to listen", async || {
        let subscribers = redis_server::query(&redis, &["PUBSUB", "NUMSUB", "fleet:tasks:changed"]);
        (subscribers.ok()?.ends_with(",1")).then_some(())
    })
    .await;
    let woken = running.changed(&id);
    let started = std::time::Instant::now();
    assert!(other.cancel(None, &id).await.unwrap());
    woken.await;
    // Without the announcement the running side would read the store after a second.
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(running.renew(&id, TTL).await.unwrap(), Held::Cancelled);
    let late = running
        .record(&id, TaskUpdate::Completed(result("late")))
        .await;
    assert_eq!(late.unwrap(), Held::Cancelled);
    let seen = read(&other, None, &id).await.unwrap();
    assert_eq!(
        seen.payload,
        TaskPayload::Cancelled,
        "its questions are gone too"
    );
}

#[tokio::test]
async fn a_task_whose_lease_lapses_reads_failed_and_says_to_start_it_again() {
    let redis = redis();
    let (running, other) = (store(&redis), store(&redis));
    let id = fresh_id();
    let lease = Duration::from_millis(300);
    running
        .create(NewTask::new(&id, None, TTL).lease(lease))
        .await
        .unwrap();
    assert_eq!(running.renew(&id, lease).await.unwrap(), Held::Running);
    // The replica stops renewing (it died): the task reads failed once the lease lapses.
    let seen = eventually("the lease to lapse", async || {
        let seen = read(&other, None, &id).await?;
        (seen.status() == TaskStatus::Failed).then_some(seen)
    })
    .await;
    let TaskPayload::Failed { error } = &seen.payload else {
        unreachable!()
    };
    assert_eq!(error["code"], -32603);
    assert_eq!(error["message"], ORPHANED);
    assert!(ORPHANED.contains("start it anew"));
    assert_eq!(seen.task.status_message.as_deref(), Some(ORPHANED));
    // The replica comes back to it: nothing more is recorded.
    assert_eq!(running.renew(&id, lease).await.unwrap(), Held::Gone);
    let late = running
        .record(&id, TaskUpdate::Completed(result("late")))
        .await;
    assert_eq!(late.unwrap(), Held::Gone);
    assert_eq!(status(&other, None, &id).await, Some(TaskStatus::Failed));
}

#[tokio::test]
async fn callers_are_capped_and_every_key_is_gone_with_the_ttl() {
    let redis = redis();
    let (first, second) = (store(&redis), store(&redis));
    let ttl = Duration::from_millis(400);
    let new = |id| NewTask::new(id, Some("alice"), ttl).max_per_caller(2);
    let ids: Vec<String> = (0..3).map(|_| fresh_id()).collect();
    first.create(new(&ids[0])).await.unwrap();
    second.create(new(&ids[1])).await.unwrap();
    // The cap is the fleet's: the third, through either replica, is refused.
    let refused = first.create(new(&ids[2])).await;
    assert_eq!(refused, Err(TaskStoreError::TooMany { max: 2 }));
    assert_eq!(status(&first, Some("alice"), &ids[2]).await, None);
    // Another caller has places of its own.
    second
        .create(NewTask::new(&ids[2], Some("bob"), ttl))
        .await
        .unwrap();
    let asks = InputRequests::from([("q".into(), question("Q?"))]);
    first
        .record(&ids[0], TaskUpdate::InputRequired(asks))
        .await
        .unwrap();
    let answer = InputResponses::from([("q".into(), json!(1))]);
    second.answer(Some("alice"), &ids[0], answer).await.unwrap();
    // A client that never polls: the tasks, their questions, answers and the counts expire.
    eventually("every key to expire", async || {
        (redis.integer(&["DBSIZE"]) == 0).then_some(())
    })
    .await;
    for id in &ids[..2] {
        assert_eq!(status(&second, Some("alice"), id).await, None);
    }
    let (again, more) = (fresh_id(), fresh_id());
    first.create(new(&again)).await.unwrap();
    first.create(new(&more)).await.unwrap();

    // The store's own cap, all callers together, is the fleet's too.
    let capped = |redis: &RedisServer| {
        RedisTaskStore::builder(redis.url())
            .prefix("capped")
            .key_secret(SECRET)
            .max_tasks(3)
            .build()
            .unwrap()
    };
    let (first, second) = (capped(&redis), capped(&redis));
    let ids: Vec<String> = (0..4).map(|_| fresh_id()).collect();
    for (i, caller) in ["a", "b", "c"].into_iter().enumerate() {
        let tasks = if i % 2 == 0 { &first } else { &second };
        tasks
            .create(NewTask::new(&ids[i], Some(caller), TTL))
            .await
            .unwrap();
    }
    let refused = second.create(NewTask::new(&ids[3], Some("d"), TTL)).await;
    assert_eq!(refused, Err(TaskStoreError::TooMany { max: 3 }));
}

#[tokio::test]
async fn nothing_in_redis_names_a_task_id_or_a_caller() {
    use redis::Commands;
    let redis = redis();
    let tasks = store(&redis);
    let callers = ["alice@example.com", "bob@example.com"];
    let mut ids = Vec::new();
    for caller in callers {
        let id = fresh_id();
        tasks
            .create(NewTask::new(&id, Some(caller), TTL))
            .await
            .unwrap();
        let asks = InputRequests::from([("q".into(), question("Q?"))]);
        tasks
            .record(&id, TaskUpdate::InputRequired(asks))
            .await
            .unwrap();
        ids.push(id);
    }
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let keys: Vec<String> = connection
        .scan_match::<_, String>("fleet*")
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        keys.len(),
        7,
        "two tasks, their questions, two callers' counts and the store's: {keys:?}"
    );
    let secrets: Vec<String> = callers
        .iter()
        .map(|c| c.to_string())
        .chain(ids.iter().cloned())
        .collect();
    for key in &keys {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut connection).unwrap();
        let dump = String::from_utf8_lossy(&dump);
        for secret in &secrets {
            let plain: String = sha2::Sha256::digest(secret.as_bytes())[..16]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            for text in [secret.as_str(), plain.as_str()] {
                assert!(!key.contains(text), "{key} names {secret}");
                assert!(!dump.contains(text), "{key}'s value names {secret}");
            }
        }
    }
}

#[tokio::test]
async fn redis_gone_mid_task_is_answered_within_the_timeout_then_unknown_once_back_empty() {
    let mut redis = redis();
    let tasks = store(&redis);
    let id = fresh_id();
    tasks.create(NewTask::new(&id, None, TTL)).await.unwrap();
    redis.stop();
    let started = std::time::Instant::now();
    let unavailable =
        |r: &Result<_, TaskStoreError>| matches!(r, Err(TaskStoreError::Unavailable { .. }));
    assert!(unavailable(&tasks.get(None, &id).await.map(|_| ())));
    assert!(unavailable(&tasks.renew(&id, TTL).await.map(|_| ())));
    let done = tasks
        .record(&id, TaskUpdate::Completed(result("lost")))
        .await;
    assert!(unavailable(&done.map(|_| ())));
    assert!(unavailable(&tasks.cancel(None, &id).await.map(|_| ())));
    let other = fresh_id();
    assert!(unavailable(
        &tasks.create(NewTask::new(&other, None, TTL)).await
    ));
    // Five operations, each bounded by the store's timeout (300 ms) and a reconnection.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    redis.restart().unwrap();
    let back = eventually("the store to reach Redis again", async || {
        tasks.get(None, &id).await.ok()
    })
    .await;
    assert_eq!(back, None, "a restarted Redis lost the task: an unknown id");
    assert_eq!(tasks.renew(&id, TTL).await.unwrap(), Held::Gone);
}

#[tokio::test]
async fn identified_callers_need_a_key_secret() {
    let redis = redis();
    let unkeyed = RedisTaskStore::builder(redis.url()).build().unwrap();
    let why = unkeyed.refuses_caller_keys().expect("refused");
    assert!(why.contains("RedisTaskStoreBuilder::key_secret"), "{why}");
    assert_eq!(store(&redis).refuses_caller_keys(), None);
    let id = fresh_id();
    let refused = unkeyed.create(NewTask::new(&id, Some("alice"), TTL)).await;
    assert!(
        matches!(refused, Err(TaskStoreError::Unavailable { .. })),
        "{refused:?}"
    );
    // The anonymous caller has no key to hide.
    unkeyed.create(NewTask::new(&id, None, TTL)).await.unwrap();
    let short = RedisTaskStore::builder(redis.url())
        .key_secret("short")
        .build();
    assert!(short.is_err());
    let braces = RedisTaskStore::builder(redis.url()).prefix("a{b}").build();
    assert!(braces.is_err());
}

#[tokio::test]
async fn unknown_ids_read_as_unknown_everywhere() {
    let redis = redis();
    let tasks = store(&redis);
    let id = fresh_id();
    assert_eq!(read(&tasks, None, &id).await, None);
    assert!(!tasks.cancel(None, &id).await.unwrap());
    let answers = InputResponses::from([("q".into(), json!(1))]);
    assert!(!tasks.answer(None, &id, answers).await.unwrap());
    assert_eq!(tasks.renew(&id, TTL).await.unwrap(), Held::Gone);
    let done = tasks.record(&id, TaskUpdate::Completed(result("x"))).await;
    assert_eq!(done.unwrap(), Held::Gone);
    assert_eq!(tasks.take_answers(&id).await.unwrap(), None);
    assert_eq!(redis.integer(&["DBSIZE"]), 0, "nothing written for them");
}

// Two servers on one Redis, over streamable HTTP: what a client of a fleet meets.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The form `bench.sign` asks.
#[derive(serde::Deserialize)]
struct Sure {
    sure: bool,
}

impl mcp_fusion::tools::ElicitForm for Sure {
    fn schema() -> mcp_fusion::rmcp::model::ElicitationSchema {
        mcp_fusion::rmcp::model::ElicitationSchema::builder()
            .required_bool("sure")
            .build()
            .expect("a form of one field")
    }
}

/// Counts its `hold` handlers stopped before their end (dropped).
struct Bench(Arc<AtomicUsize>);

/// Long work, run as tasks.
#[mcp_fusion::tool]
impl Bench {
    /// Signs once the user is sure.
    #[action(task)]
    async fn sign(&self, f: mcp_fusion::Context) -> Result<String, mcp_fusion::ToolError> {
        let sure = f.elicit::<Sure>("Sign it?").await?;
        Ok(format!("signed: {}", sure.accepted()?.sure))
    }

    /// Holds on until stopped.
    #[action(task)]
    async fn hold(&self) -> Result<String, mcp_fusion::ToolError> {
        struct Stopped(Arc<AtomicUsize>);
        impl Drop for Stopped {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let _stopped = Stopped(Arc::clone(&self.0));
        std::future::pending::<()>().await;
        unreachable!()
    }
}

/// A replica serving `Bench` on a loopback port, its tasks on `redis`: its address.
async fn bench_replica(redis: &RedisServer, stopped: &Arc<AtomicUsize>) -> String {
    bench_replica_capped(redis, stopped, 100).await
}

/// The same, each caller holding at most `max` tasks.
async fn bench_replica_capped(
    redis: &RedisServer,
    stopped: &Arc<AtomicUsize>,
    max: usize,
) -> String {
    let server = mcp_fusion::Server::builder("bench", "1")
        .tool(Bench(Arc::clone(stopped)))
        .task_store(store(redis))
        .max_tasks_per_caller(max)
        .build()
        .unwrap();
    crate::client::stateless(server, mcp_fusion::server::HttpOptions::default()).await
}

/// A 2026-07-28 request of a client that declared tasks and forms; its answer.
async fn ask(addr: &str, method: &str, mut params: serde_json::Value) -> serde_json::Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "elicitation": {"form": {}},
        },
        "io.modelcontextprotocol/clientInfo": {"name": "fleet", "version": "1"},
    });
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or_default();
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("mcp-name", name),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    mcp_fusion_drivers::raw_http::post(addr, &headers, body.to_string().as_bytes())
        .await
        .message()
}

/// Starts `action` of `bench` through `addr` as a task: its id.
async fn start_task(addr: &str, tool: &str, arguments: serde_json::Value) -> String {
    let created = ask(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working", "{created}");
    result["taskId"].as_str().expect("a task id").to_owned()
}

/// `tasks/get` of `id` through `addr`, once its status is `status`.
async fn task_reads(addr: &str, id: &str, status: &str) -> serde_json::Value {
    let what = format!("task {id} to read {status} through {addr}");
    eventually(&what, async || {
        let read = ask(addr, "tasks/get", json!({"taskId": id})).await;
        (read["result"]["status"] == status).then_some(read["result"].clone())
    })
    .await
}

#[tokio::test]
async fn two_replicas_serve_one_task_end_to_end() {
    let redis = redis();
    let stopped = Arc::new(AtomicUsize::new(0));
    let first = bench_replica(&redis, &stopped).await;
    let second = bench_replica(&redis, &stopped).await;

    // Created through the first, asked and answered through the second.
    let id = start_task(&first, "bench", json!({"action": "sign"})).await;
    let asking = task_reads(&second, &id, "input_required").await;
    let (key, asked) = asking["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(asked["params"]["message"], "Sign it?", "{asking}");
    let answers = json!({key.clone(): {"action": "accept", "content": {"sure": true}}, "never": 1});
    let ack = ask(
        &second,
        "tasks/update",
        json!({"taskId": id, "inputResponses": answers}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = task_reads(&second, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "signed: true",
        "{done}"
    );
    assert_eq!(done["result"]["isError"], false, "{done}");

    // Cancelled through the second: the handler stops on the first, where it runs.
    let id = start_task(&first, "bench", json!({"action": "hold"})).await;
    task_reads(&second, &id, "working").await;
    let ack = ask(&second, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    task_reads(&first, &id, "cancelled").await;
    eventually("the handler to stop on the first replica", async || {
        (stopped.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;

    // An id neither replica made is unknown to both.
    let unknown = ask(&second, "tasks/get", json!({"taskId": fresh_id()})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

/// Billing replicas as processes of their own on `redis`, their exports taking `export`
/// seconds (in five parts), their task leases 1 s.
async fn billing_fleet(
    redis: &RedisServer,
    count: usize,
    export: &str,
) -> Vec<mcp_fusion_drivers::raw_http::Billing> {
    let url = redis.url();
    let args = [
        "--stateless",
        "--no-audit",
        "--redis",
        &url,
        "--export-seconds",
        export,
        "--task-lease",
        "1",
    ];
    let mut fleet = Vec::new();
    for _ in 0..count {
        let billing = mcp_fusion_drivers::artifacts::billing();
        let replica = mcp_fusion_drivers::raw_http::Billing::start(&billing, &args).await;
        fleet.push(replica.expect("a billing replica starts"));
    }
    fleet
}

const EXPORT_SLOTS: &str = "billing:slots:billing.export_invoices";

#[tokio::test]
async fn a_killed_replicas_task_reads_failed_through_another_and_says_to_start_it_again() {
    let redis = redis();
    let mut fleet = billing_fleet(&redis, 2, "30").await;
    let (doomed, survivor) = (fleet[0].addr.clone(), fleet[1].addr.clone());
    let export = json!({"action": "export_invoices", "format": "csv"});
    let id = start_task(&doomed, "billing", export).await;
    task_reads(&survivor, &id, "working").await;
    eventually("the export to hold its slot", async || {
        (redis.integer(&["ZCARD", EXPORT_SLOTS]) == 1).then_some(())
    })
    .await;
    // Killed, not shut down: nothing of it says goodbye.
    fleet[0].child.start_kill().unwrap();
    fleet[0].child.wait().await.unwrap();
    let failed = task_reads(&survivor, &id, "failed").await;
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert_eq!(failed["error"]["message"], ORPHANED, "{failed}");
    assert_eq!(failed["statusMessage"], ORPHANED, "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");
    // Started again, through the survivor, it runs.
    let again = start_task(
        &survivor,
        "billing",
        json!({"action": "export_invoices", "format": "csv"}),
    )
    .await;
    task_reads(&survivor, &again, "working").await;
}

#[tokio::test]
async fn a_cancel_through_one_billing_replica_stops_the_export_on_the_other() {
    let redis = redis();
    // Exports of 5 s: a part done each second, each the task's progress, read anywhere.
    let fleet = billing_fleet(&redis, 2, "5").await;
    let (running, other) = (fleet[0].addr.clone(), fleet[1].addr.clone());
    let id = start_task(
        &running,
        "billing",
        json!({"action": "export_invoices", "format": "csv"}),
    )
    .await;
    eventually("the export to hold its slot", async || {
        (redis.integer(&["ZCARD", EXPORT_SLOTS]) == 1).then_some(())
    })
    .await;
    let working = task_reads(&other, &id, "working").await;
    eventually(
        "the export's progress, read through the other replica",
        async || {
            let read = ask(&other, "tasks/get", json!({"taskId": id})).await;
            (read["result"]["statusMessage"] == "part 1 of 5 (1/5)").then_some(())
        },
    )
    .await;
    assert_eq!(working["pollIntervalMs"], 500, "{working}");
    let ack = ask(&other, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    task_reads(&running, &id, "cancelled").await;
    // The handler stopped where it ran: its slot is given back long before the export's end.
    let started = std::time::Instant::now();
    eventually("the export's slot to be given back", async || {
        (redis.integer(&["ZCARD", EXPORT_SLOTS]) == 0).then_some(())
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_flood_of_task_creations_meets_the_fleets_cap_per_caller() {
    let redis = redis();
    let stopped = Arc::new(AtomicUsize::new(0));
    let fleet = [
        bench_replica_capped(&redis, &stopped, 3).await,
        bench_replica_capped(&redis, &stopped, 3).await,
    ];
    let mut held = Vec::new();
    for i in 0..3 {
        held.push(start_task(&fleet[i % 2], "bench", json!({"action": "hold"})).await);
    }
    // The fourth, through either replica, is refused with an envelope; nothing more is stored.
    let keys = redis.integer(&["DBSIZE"]);
    for addr in &fleet {
        for _ in 0..20 {
            let refused = ask(
                addr,
                "tools/call",
                json!({"name": "bench", "arguments": {"action": "hold"}}),
            )
            .await;
            let result = &refused["result"];
            assert_eq!(result["isError"], true, "{refused}");
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(
                text.contains("code=\"RATE_LIMITED\"") && text.contains("at most 3"),
                "{text}"
            );
        }
    }
    assert_eq!(
        redis.integer(&["DBSIZE"]),
        keys,
        "refused creations store nothing"
    );
    // A place comes back once a task ends and its ttl passes: cancelled, it still counts.
    for id in &held {
        ask(&fleet[0], "tasks/cancel", json!({"taskId": id})).await;
    }
    let refused = ask(
        &fleet[1],
        "tools/call",
        json!({"name": "bench", "arguments": {"action": "hold"}}),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
}

#[tokio::test]
async fn redis_gone_mid_task_answers_clearly_and_the_handler_stops_once_it_is_back_empty() {
    let mut redis = redis();
    let stopped = Arc::new(AtomicUsize::new(0));
    let replica = bench_replica(&redis, &stopped).await;
    let id = start_task(&replica, "bench", json!({"action": "hold"})).await;
    redis.stop();
    let started = std::time::Instant::now();
    let read = ask(&replica, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(read["error"]["code"], -32603, "{read}");
    assert!(
        read["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unavailable"),
        "{read}"
    );
    let cancel = ask(&replica, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel["error"]["code"], -32603, "{cancel}");
    let create = ask(
        &replica,
        "tools/call",
        json!({"name": "bench", "arguments": {"action": "hold"}}),
    )
    .await;
    assert_eq!(create["error"]["code"], -32603, "{create}");
    assert!(
        create["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not be created"),
        "{create}"
    );
    // Each answered within the store's timeout (300 ms) and a reconnection: nothing hangs.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Redis back, empty: the task is unknown, and the replica running it stops its handler.
    redis.restart().unwrap();
    eventually("the handler to stop once its task is gone", async || {
        (stopped.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    let read = ask(&replica, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(read["error"]["code"], -32602, "{read}");
}

/// A verified caller's tasks are counted under its subject: a server running tasks in a Redis
/// task store without a key secret is refused when served with OAuth, and serves with one, or
/// without OAuth.
#[tokio::test]
async fn verified_callers_tasks_on_redis_need_a_key_secret() {
    use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
    let with_oauth = || {
        let mut options = mcp_fusion::server::HttpOptions::default();
        options.stateless = true;
        let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp");
        options.oauth = Some(OAuth::jwt(verifier));
        options
    };
    // Connected lazily: nothing listens there, and nothing needs to.
    let url = "redis://127.0.0.1:1";
    let bench = |store: RedisTaskStore| {
        let stopped = Arc::new(AtomicUsize::new(0));
        mcp_fusion::Server::builder("bench", "1")
            .tool(Bench(stopped))
            .task_store(store)
            .build()
            .unwrap()
    };
    let unkeyed = bench(RedisTaskStore::builder(url).build().unwrap());
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        unkeyed.http_service(with_oauth())
    }))
    .expect_err("verified callers' tasks are not kept unkeyed");
    let refused = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        refused.contains("RedisTaskStoreBuilder::key_secret"),
        "{refused}"
    );
    let _ = unkeyed.http_service(mcp_fusion::server::HttpOptions::default());
    let keyed = bench(
        RedisTaskStore::builder(url)
            .key_secret(SECRET)
            .build()
            .unwrap(),
    );
    let _ = keyed.http_service(with_oauth());
}

/// On a Redis Cluster each script runs on the node of its task's slot (a task's keys share a
/// hash tag), the caller's count on its own: two stores serve one task as on one node.
#[tokio::test]
async fn a_cluster_serves_tasks_as_one_node_does() {
    let cluster = mcp_fusion_drivers::redis_server::RedisCluster::start(3)
        .unwrap_or_else(|e| panic!("this test needs a Redis Cluster of its own: {e}"));
    let nodes: Vec<String> = cluster.nodes.iter().map(RedisServer::url).collect();
    let on_cluster = || {
        RedisTaskStore::cluster(nodes.clone())
            .prefix("fleet")
            .key_secret(SECRET)
            .build()
            .unwrap()
    };
    let (first, second) = (on_cluster(), on_cluster());
    for _ in 0..8 {
        let id = fresh_id();
        first
            .create(NewTask::new(&id, Some("alice"), TTL))
            .await
            .unwrap();
        let asks = InputRequests::from([("q".into(), question("Q?"))]);
        first
            .record(&id, TaskUpdate::InputRequired(asks))
            .await
            .unwrap();
        let answer = InputResponses::from([("q".into(), json!(true))]);
        assert!(second.answer(Some("alice"), &id, answer).await.unwrap());
        let taken = first.take_answers(&id).await.unwrap().unwrap();
        assert_eq!(taken["q"], json!(true));
        assert!(second.cancel(Some("alice"), &id).await.unwrap());
        assert_eq!(first.renew(&id, TTL).await.unwrap(), Held::Cancelled);
        assert_eq!(
            status(&second, Some("alice"), &id).await,
            Some(TaskStatus::Cancelled)
        );
    }
}

#[tokio::test]
async fn a_cancel_storm_through_both_replicas_stops_the_handler_once() {
    let redis = redis();
    let stopped = Arc::new(AtomicUsize::new(0));
    let fleet = [
        bench_replica(&redis, &stopped).await,
        bench_replica(&redis, &stopped).await,
    ];
    let id = start_task(&fleet[0], "bench", json!({"action": "hold"})).await;
    let mut storm = tokio::task::JoinSet::new();
    for i in 0..40 {
        let (addr, id) = (fleet[i % 2].clone(), id.clone());
        storm.spawn(async move { ask(&addr, "tasks/cancel", json!({"taskId": id})).await });
    }
    while let Some(ack) = storm.join_next().await {
        let ack = ack.unwrap();
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    }
    task_reads(&fleet[1], &id, "cancelled").await;
    eventually("the handler to stop", async || {
        (stopped.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    // Cancels of a terminal task change nothing, nor do answers to questions never asked.
    let stray = json!({"taskId": id, "inputResponses": {"elicitation-1": {"action": "accept"}}});
    let ack = ask(&fleet[1], "tasks/update", stray).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(
        task_reads(&fleet[0], &id, "cancelled").await["status"],
        "cancelled"
    );
    assert_eq!(stopped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_client_that_never_polls_leaves_nothing_after_the_ttl() {
    let redis = redis();
    let server = mcp_fusion::Server::builder("bench", "1")
        .tool(Bench(Arc::new(AtomicUsize::new(0))))
        .task_store(store(&redis))
        .task_ttl(Duration::from_millis(600))
        .build()
        .unwrap();
    let replica =
        crate::client::stateless(server, mcp_fusion::server::HttpOptions::default()).await;
    let asking = start_task(&replica, "bench", json!({"action": "sign"})).await;
    let holding = start_task(&replica, "bench", json!({"action": "hold"})).await;
    // Nobody polls, answers or cancels: every key (tasks, questions, the count) expires.
    eventually("every key to expire", async || {
        (redis.integer(&["DBSIZE"]) == 0).then_some(())
    })
    .await;
    for id in [asking, holding] {
        let read = ask(&replica, "tasks/get", json!({"taskId": id})).await;
        assert_eq!(read["error"]["code"], -32602, "{read}");
    }
    // The handlers' ends found their tasks gone and wrote nothing back.
    assert_eq!(redis.integer(&["DBSIZE"]), 0);
}

#[tokio::test]
async fn the_master_a_sentinel_names_keeps_tasks() {
    let redis = mcp_fusion_drivers::redis_server::RedisSentinel::start()
        .unwrap_or_else(|e| panic!("this test needs a Redis master, replica and Sentinel: {e}"));
    let name = mcp_fusion_drivers::redis_server::RedisSentinel::NAME;
    let on_sentinel = || {
        RedisTaskStore::sentinel([redis.url()], name)
            .build()
            .unwrap()
    };
    let (first, second) = (on_sentinel(), on_sentinel());
    let id = fresh_id();
    first.create(NewTask::new(&id, None, TTL)).await.unwrap();
    first
        .record(&id, TaskUpdate::Completed(result("kept")))
        .await
        .unwrap();
    let seen = read(&second, None, &id).await.unwrap();
    assert_eq!(
        seen.payload,
        TaskPayload::Completed {
            result: result("kept")
        }
    );
    let on_master = redis_server::query(&redis.nodes[0], &["DBSIZE"]).unwrap();
    assert_eq!(
        on_master, "3",
        "the task, the anonymous count and the store's, on the master"
    );
}
