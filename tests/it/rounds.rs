//! The rounds of a 2026-07-28 call (SEP-2322) as a raw client drives them: answers sent
//! without a `requestState` are that run's answers, one of the wrong kind is asked again, a
//! state carries one retry however many are sent at once, and an answer counts only for the
//! question it was given to; on a fleet sharing a secret and a Redis, once in the fleet; and
//! the secret rotates through a keyring.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::ElicitationSchema;
use mcp_fusion::server::HttpOptions;
use mcp_fusion::server::limits::RedisStore;
use mcp_fusion::tools::ElicitForm;
use mcp_fusion::{Context, ToolError, tool};
use mcp_fusion_drivers::raw_http;
use mcp_fusion_drivers::redis_server::RedisServer;
use serde_json::{Value, json};

use crate::client::{call_2026, post_2026, refused, stateless};

/// The form `desk` asks.
#[derive(serde::Deserialize)]
struct Sure {
    sure: bool,
}

impl ElicitForm for Sure {
    fn schema() -> ElicitationSchema {
        ElicitationSchema::builder()
            .required_bool("sure")
            .build()
            .expect("a form of one field")
    }
}

/// How many times `desk.wipe` acted.
static WIPED: AtomicUsize = AtomicUsize::new(0);
/// How many times `desk.drift` ran.
static DRIFTS: AtomicUsize = AtomicUsize::new(0);

struct Desk;

/// A desk whose actions ask first.
#[tool]
impl Desk {
    /// Wipes the desk once the user is sure; takes its time doing it.
    #[action(destructive)]
    async fn wipe(&self, f: Context) -> Result<String, ToolError> {
        let sure = f.elicit::<Sure>("Wipe the desk?").await?;
        if !sure.accepted()?.sure {
            return Ok("Kept".into());
        }
        WIPED.fetch_add(1, Ordering::SeqCst);
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        Ok("Wiped".into())
    }

    /// Asks a question that changes from one run to the next.
    #[action(destructive)]
    async fn drift(&self, f: Context) -> Result<String, ToolError> {
        let run = DRIFTS.fetch_add(1, Ordering::SeqCst);
        let sure = f.elicit::<Sure>(format!("Question {run}?")).await?;
        Ok(format!("answered {}", sure.accepted()?.sure))
    }
}

fn desk() -> Server {
    Server::builder("desk", "1.0.0").tool(Desk).build().unwrap()
}

/// A `desk` call, retried with `answers` and `state` when given.
fn call(action: &str, answers: Option<Value>, state: Option<&str>) -> Value {
    let can = json!({"elicitation": {"form": {}}});
    let mut body = call_2026(json!({"action": action}), None, can);
    body["params"]["name"] = json!("desk");
    if let Some(answers) = answers {
        body["params"]["inputResponses"] = answers;
    }
    if let Some(state) = state {
        body["params"]["requestState"] = json!(state);
    }
    body
}

async fn post(addr: &str, body: &Value) -> Value {
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "desk"),
    ];
    raw_http::post(addr, &headers, body.to_string().as_bytes())
        .await
        .message()
}

const YES: &str = r#"{"action": "accept", "content": {"sure": true}}"#;

fn yes() -> Value {
    serde_json::from_str(YES).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn answers_without_a_state_are_this_runs_and_the_wrong_kind_is_asked_again() {
    let addr = stateless(desk(), HttpOptions::default()).await;
    // An answer under the key the handler asks: it runs with it.
    let bare = call("drift", Some(json!({"elicitation-1": yes()})), None);
    let done = post(&addr, &bare).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "answered true",
        "{done}"
    );
    // Under another key: asked again, as a new round.
    let wrong_key = call("drift", Some(json!({"wrong_key": yes()})), None);
    let again = post(&addr, &wrong_key).await["result"].clone();
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert!(
        again["inputRequests"]["elicitation-1"].is_object(),
        "{again}"
    );
    // No ElicitResult: asked again too, never read as a complete answer.
    for wrong in [
        json!(12345),
        json!({"content": {"sure": true}}),
        json!("yes"),
    ] {
        let bad = call("drift", Some(json!({"elicitation-1": wrong})), None);
        let again = post(&addr, &bad).await["result"].clone();
        assert_eq!(again["resultType"], "input_required", "{again}");
    }
    // The same through the notes tool's helpers: a bare answer confirms.
    let can = json!({"elicitation": {"form": {}}});
    let delete = json!({"action": "delete", "note": "a"});
    let mut bare = call_2026(delete, None, can);
    bare["params"]["inputResponses"] =
        json!({"elicitation-1": {"action": "accept", "content": {"confirm": true}}});
    let notes = stateless(crate::client::notes(), HttpOptions::default()).await;
    let done = post_2026(&notes, &bare, None).await;
    assert_eq!(done["content"][0]["text"], "Deleted a", "{done}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_state_sent_many_times_at_once_acts_once() {
    let addr = stateless(desk(), HttpOptions::default()).await;
    let first = post(&addr, &call("wipe", None, None)).await["result"].clone();
    let state = first["requestState"].as_str().expect("a state").to_owned();
    let retry = call("wipe", Some(json!({"elicitation-1": yes()})), Some(&state));
    let before = WIPED.load(Ordering::SeqCst);
    let answers = tokio::join!(
        post(&addr, &retry),
        post(&addr, &retry),
        post(&addr, &retry),
        post(&addr, &retry),
        post(&addr, &retry),
        post(&addr, &retry),
        post(&addr, &retry),
        post(&addr, &retry),
    );
    let answers = [
        answers.0, answers.1, answers.2, answers.3, answers.4, answers.5, answers.6, answers.7,
    ];
    assert_eq!(WIPED.load(Ordering::SeqCst) - before, 1);
    let wiped = answers
        .iter()
        .filter(|a| a["result"]["content"][0]["text"] == "Wiped")
        .count();
    assert_eq!(wiped, 1, "{answers:?}");
    for answer in answers.iter().filter(|a| a.get("error").is_some()) {
        assert!(refused(answer).contains("used already"), "{answer}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_answer_counts_only_for_the_question_it_was_given_to() {
    let addr = stateless(desk(), HttpOptions::default()).await;
    let first = post(&addr, &call("drift", None, None)).await["result"].clone();
    let asked = &first["inputRequests"]["elicitation-1"]["params"]["message"];
    let state = first["requestState"].as_str().expect("a state").to_owned();
    // The next run asks something else under the same key: the "accept" given to the first
    // question is not its answer, and it is asked.
    let retry = call("drift", Some(json!({"elicitation-1": yes()})), Some(&state));
    let again = post(&addr, &retry).await["result"].clone();
    assert_eq!(again["resultType"], "input_required", "{again}");
    let asked_now = &again["inputRequests"]["elicitation-1"]["params"]["message"];
    assert_ne!(asked_now, asked);
}

/// A safe whose opening each replica counts on the same counter.
struct Safe(Arc<AtomicUsize>);

/// A safe that asks before it opens.
#[tool]
impl Safe {
    /// Opens the safe once the user is sure.
    #[action(destructive)]
    async fn open(&self, f: Context) -> Result<String, ToolError> {
        let sure = f.elicit::<Sure>("Open the safe?").await?;
        if !sure.accepted()?.sure {
            return Ok("Kept".into());
        }
        self.0.fetch_add(1, Ordering::SeqCst);
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        Ok("Opened".into())
    }
}

/// A replica of the `vault` server: the fleet's secret, its limits (and so its record of used
/// states) on `store`.
fn vault(opened: &Arc<AtomicUsize>, store: Option<RedisStore>) -> Server {
    let builder = Server::builder("vault", "1.0.0")
        .tool(Safe(Arc::clone(opened)))
        .request_state_secret([7; 32]);
    match store {
        Some(store) => builder.limit_store(store),
        None => builder,
    }
    .build()
    .unwrap()
}

fn open_safe(answers: Option<Value>, state: Option<&str>) -> Value {
    let mut body = call("open", answers, state);
    body["params"]["name"] = json!("safe");
    body
}

async fn post_safe(addr: &str, body: &Value) -> Value {
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "safe"),
    ];
    raw_http::post(addr, &headers, body.to_string().as_bytes())
        .await
        .message()
}

/// Two replicas sharing a secret and a Redis: a state sent to both at once, many times, opens
/// the safe once in the fleet, and every other retry is told the state was used.
#[tokio::test(flavor = "current_thread")]
async fn a_state_sent_to_two_replicas_sharing_a_redis_acts_once_in_the_fleet() {
    let redis =
        RedisServer::start().unwrap_or_else(|e| panic!("this test needs a Redis of its own: {e}"));
    let store = || Some(RedisStore::builder(redis.url()).build().unwrap());
    let opened = Arc::new(AtomicUsize::new(0));
    let one = stateless(vault(&opened, store()), HttpOptions::default()).await;
    let two = stateless(vault(&opened, store()), HttpOptions::default()).await;
    let first = post_safe(&one, &open_safe(None, None)).await["result"].clone();
    let state = first["requestState"].as_str().expect("a state").to_owned();
    let retry = open_safe(Some(json!({"elicitation-1": yes()})), Some(&state));
    let mut retries = tokio::task::JoinSet::new();
    for i in 0..8 {
        let (addr, retry) = (if i % 2 == 0 { &one } else { &two }.clone(), retry.clone());
        retries.spawn(async move { post_safe(&addr, &retry).await });
    }
    let answers = retries.join_all().await;
    assert_eq!(opened.load(Ordering::SeqCst), 1, "{answers:?}");
    let done = (answers.iter())
        .filter(|a| a["result"]["content"][0]["text"] == "Opened")
        .count();
    assert_eq!(done, 1, "{answers:?}");
    for answer in answers.iter().filter(|a| a.get("error").is_some()) {
        assert!(refused(answer).contains("used already"), "{answer}");
    }
    // The record names no caller and lasts as long as the state.
    let count = "return #redis.call('KEYS', '*:used:*')";
    assert_eq!(redis.integer(&["EVAL", count, "0"]), 1);
    let lasts = "return redis.call('PTTL', redis.call('KEYS', '*:used:*')[1])";
    let ttl = redis.integer(&["EVAL", lasts, "0"]);
    assert!(ttl > 0 && ttl <= 15 * 60 * 1000, "{ttl}");

    // Redis gone: a retry is refused (it may have run), and says why.
    let second = post_safe(&two, &open_safe(None, None)).await["result"].clone();
    let state = second["requestState"].as_str().expect("a state").to_owned();
    drop(redis);
    let retry = open_safe(Some(json!({"elicitation-1": yes()})), Some(&state));
    let answer = post_safe(&one, &retry).await;
    assert!(refused(&answer).contains("cannot be reached"), "{answer}");
    assert_eq!(opened.load(Ordering::SeqCst), 1);
}

/// Without a shared store, the secret alone makes a state run once per replica: building
/// such a server says so.
#[tokio::test(flavor = "current_thread")]
async fn a_shared_secret_without_a_shared_store_warns_when_built() {
    let lines = crate::support::Lines::default();
    let _guard = lines.capture();
    let opened = Arc::new(AtomicUsize::new(0));
    let _ = vault(&opened, None);
    let text = lines.text();
    assert!(text.contains("runs once per replica"), "{text}");
    // With one, nothing to say.
    let redis =
        RedisServer::start().unwrap_or_else(|e| panic!("this test needs a Redis of its own: {e}"));
    let lines = crate::support::Lines::default();
    let _guard = lines.capture();
    let _ = vault(
        &opened,
        Some(RedisStore::builder(redis.url()).build().unwrap()),
    );
    assert!(!lines.text().contains("runs once per replica"));
}

/// A keyring: states sealed under the old active key still open once the new key is active,
/// and a ring that cannot seal is a build error.
#[tokio::test(flavor = "current_thread")]
async fn keys_rotate_without_refusing_a_round_in_flight() {
    let opened = Arc::new(AtomicUsize::new(0));
    let ring = |active: &str, keys: &[(&str, u8)]| {
        Server::builder("vault", "1.0.0")
            .tool(Safe(Arc::clone(&opened)))
            .request_state_keys(active, keys.iter().map(|(id, k)| (*id, vec![*k; 32])))
            .build()
    };
    let before = stateless(
        ring("old", &[("old", 1), ("new", 2)]).unwrap(),
        HttpOptions::default(),
    )
    .await;
    let after = stateless(
        ring("new", &[("old", 1), ("new", 2)]).unwrap(),
        HttpOptions::default(),
    )
    .await;
    let retired = stateless(ring("new", &[("new", 2)]).unwrap(), HttpOptions::default()).await;
    let first = post_safe(&before, &open_safe(None, None)).await["result"].clone();
    let state = first["requestState"].as_str().expect("a state").to_owned();
    let retry = open_safe(Some(json!({"elicitation-1": yes()})), Some(&state));
    // The old key's state is refused once that key is gone...
    let answer = post_safe(&retired, &retry).await;
    assert!(refused(&answer).contains("altered"), "{answer}");
    // ...and opens where the ring still holds it.
    let done = post_safe(&after, &retry).await;
    assert_eq!(done["result"]["content"][0]["text"], "Opened", "{done}");
    for bad in [
        ring("gone", &[("old", 1)]),
        ring("old", &[("old", 1), ("old", 2)]),
        ring("", &[]),
    ] {
        let problem = bad.expect_err("a ring that cannot seal").to_string();
        assert!(problem.contains("request_state_secret"), "{problem}");
    }
}
