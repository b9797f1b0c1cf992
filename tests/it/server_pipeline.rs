//! The server's pipeline around handlers, in process: rate limit, concurrency (FIFO, busy,
//! cancelled waiters), deadline, middleware (auth), exposed causes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::client::parse_envelope;
use mcp_fusion::middleware::{Audit, AuthCheck, AuthDecision};
use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult};
use mcp_fusion::{ToolError, tool};
use serde_json::{Value, json};

struct Slow {
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

/// A slow tool.
#[tool(
    concurrency(max_active = 2, max_queued = 2),
    rate_limit(max = 1000, window = "1s")
)]
impl Slow {
    /// Takes a while.
    async fn work(&self) -> Result<u32, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(1)
    }

    /// Takes too long.
    #[action(timeout = "50ms")]
    async fn stuck(&self) -> Result<u32, ToolError> {
        std::future::pending::<()>().await;
        Ok(0)
    }

    /// Fails with a secret.
    async fn leak(&self) -> Result<u32, std::io::Error> {
        Err(std::io::Error::other("password=hunter2"))
    }
}

struct Limited;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Who {
    #[allow(dead_code)] // read by the rate-limit key
    user: Option<String>,
}

/// A rate-limited tool.
#[tool(rate_limit(max = 2, window = "1m"))]
impl Limited {
    /// Cheap.
    async fn ping(&self, _who: Who) -> Result<&'static str, ToolError> {
        Ok("pong")
    }
}

struct Invoices;

/// A tool with one rate-limited action.
#[tool]
impl Invoices {
    /// Costly: two per minute.
    #[action(rate_limit(max = 2, window = "1m"))]
    async fn create(&self) -> Result<&'static str, ToolError> {
        Ok("created")
    }

    /// Cheap: no limit of its own.
    async fn list(&self) -> Result<&'static str, ToolError> {
        Ok("listed")
    }
}

struct Budgeted;

/// A tool with a budget of its own and an action with a smaller one.
#[tool(rate_limit(max = 4, window = "1m"))]
impl Budgeted {
    /// One per minute.
    #[action(rate_limit(max = 1, window = "1m"))]
    async fn create(&self) -> Result<&'static str, ToolError> {
        Ok("created")
    }

    /// Within the tool's budget.
    async fn list(&self) -> Result<&'static str, ToolError> {
        Ok("listed")
    }
}

fn params(tool: &'static str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool);
    params.arguments = arguments.as_object().cloned();
    params
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn slow() -> Slow {
    Slow {
        running: Arc::default(),
        peak: Arc::default(),
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_burst_is_answered_once_per_call_busy_beyond_the_queue() {
    let tool = slow();
    let peak = tool.peak.clone();
    let server = Server::builder("t", "1").tool(tool).build().unwrap();
    let calls = (0..10).map(|_| {
        let server = server.clone();
        tokio::spawn(async move {
            server
                .call(params("slow", json!({"action": "work"})))
                .await
                .unwrap()
        })
    });
    let results: Vec<CallToolResult> = futures_join(calls).await;
    let ok = results.iter().filter(|r| r.is_error == Some(false)).count();
    let busy: Vec<_> = results
        .iter()
        .filter(|r| r.is_error == Some(true))
        .map(|r| parse_envelope(&text(r)))
        .collect();
    assert_eq!(ok, 4, "2 running + 2 queued");
    assert_eq!(busy.len(), 6);
    assert!(
        busy.iter()
            .all(|b| b.code == "SERVER_BUSY" && b.retry_after == Some(1))
    );
    assert_eq!(
        busy[0].message,
        "Tool \"slow\" is at capacity (2 active, 2 queued)."
    );
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

async fn futures_join<T: Send + 'static>(
    handles: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles.collect::<Vec<_>>() {
        out.push(handle.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_cancelled_waiter_leaves_the_queue() {
    let server = Server::builder("t", "1").tool(slow()).build().unwrap();
    let running: Vec<_> = (0..2)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(
                async move { server.call(params("slow", json!({"action": "work"}))).await },
            )
        })
        .collect();
    tokio::task::yield_now().await;
    // Two waiters, cancelled before they get a slot.
    for _ in 0..2 {
        let server = server.clone();
        let waiter =
            tokio::spawn(
                async move { server.call(params("slow", json!({"action": "work"}))).await },
            );
        tokio::task::yield_now().await;
        waiter.abort();
    }
    tokio::task::yield_now().await;
    // The queue is empty again: two more calls wait instead of being refused.
    let later: Vec<_> = (0..2)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(async move {
                server
                    .call(params("slow", json!({"action": "work"})))
                    .await
                    .unwrap()
            })
        })
        .collect();
    for handle in later {
        assert_eq!(handle.await.unwrap().is_error, Some(false));
    }
    for handle in running {
        assert_eq!(handle.await.unwrap().unwrap().is_error, Some(false));
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn deadlines_cancel_the_handler() {
    let server = Server::builder("t", "1").tool(slow()).build().unwrap();
    let result = server
        .call(params("slow", json!({"action": "stuck"})))
        .await
        .unwrap();
    let parsed = parse_envelope(&text(&result));
    assert_eq!(parsed.code, "TIMEOUT");
    assert_eq!(
        parsed.message,
        "The action \"slow.stuck\" did not finish within 1 second."
    );
}

#[tokio::test(flavor = "current_thread")]
async fn rate_limits_answer_with_the_exact_wait() {
    let server = Server::builder("t", "1").tool(Limited).build().unwrap();
    for _ in 0..2 {
        let result = server
            .call(params("limited", json!({"action": "ping"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
    }
    let limited = parse_envelope(&text(
        &server
            .call(params("limited", json!({"action": "ping"})))
            .await
            .unwrap(),
    ));
    assert_eq!(limited.code, "RATE_LIMITED");
    assert_eq!(
        limited.message,
        "Rate limit exceeded: at most 2 calls per 1 minute."
    );
    assert_eq!(limited.retry_after, Some(30));
    // A malformed call is told what is wrong with it, not that it is limited.
    let invalid = parse_envelope(&text(
        &server
            .call(params("limited", json!({"action": "pong"})))
            .await
            .unwrap(),
    ));
    assert_eq!(invalid.code, "UNKNOWN_ACTION");
}

#[tokio::test(flavor = "current_thread")]
async fn keyed_rate_limits_keep_budgets_apart_and_never_echo_the_key() {
    let server = Server::builder("t", "1")
        .rate_limit_key(|info| {
            info.arguments()
                .get("user")
                .and_then(Value::as_str)
                .map(|u| format!("user-key-{u}"))
        })
        .middleware(Audit)
        .tool(Limited)
        .build()
        .unwrap();
    let call = |user: &str| params("limited", json!({"action": "ping", "user": user}));
    for _ in 0..2 {
        assert_eq!(
            server.call(call("ada")).await.unwrap().is_error,
            Some(false)
        );
    }
    let limited = text(&server.call(call("ada")).await.unwrap());
    assert!(
        limited.contains("RATE_LIMITED") && !limited.contains("user-key"),
        "{limited}"
    );
    // Another key has its own budget.
    assert_eq!(
        server.call(call("grace")).await.unwrap().is_error,
        Some(false)
    );
}

/// The key sees the arguments with no middleware registered too: a per-caller limit never
/// turns into one bucket for everyone.
#[tokio::test(flavor = "current_thread")]
async fn keyed_rate_limits_see_the_arguments_without_middleware() {
    let server = Server::builder("t", "1")
        .rate_limit_key(|info| {
            let user = info.arguments().get("user")?.as_str()?;
            Some(user.to_owned())
        })
        .tool(Limited)
        .build()
        .unwrap();
    let mut outcomes = Vec::new();
    for user in ["alice", "alice", "bob", "carol", "alice"] {
        let call = params("limited", json!({"action": "ping", "user": user}));
        let result = server.call(call).await.unwrap();
        outcomes.push(result.is_error == Some(true));
    }
    assert_eq!(outcomes, [false, false, false, false, true]);
}

/// An action's own limit spends only that action's budget.
#[tokio::test(flavor = "current_thread")]
async fn an_action_rate_limit_leaves_the_other_actions_alone() {
    let server = Server::builder("t", "1").tool(Invoices).build().unwrap();
    let call = |action: &str| params("invoices", json!({ "action": action }));
    for _ in 0..2 {
        assert_eq!(
            server.call(call("create")).await.unwrap().is_error,
            Some(false)
        );
    }
    let limited = parse_envelope(&text(&server.call(call("create")).await.unwrap()));
    assert_eq!(limited.code, "RATE_LIMITED");
    assert_eq!(
        limited.message,
        "Rate limit exceeded: at most 2 calls per 1 minute."
    );
    for _ in 0..5 {
        assert_eq!(
            server.call(call("list")).await.unwrap().is_error,
            Some(false)
        );
    }
}

/// A call the action's budget refuses costs nothing of the tool's.
#[tokio::test(flavor = "current_thread")]
async fn a_call_refused_by_the_action_budget_leaves_the_tool_budget_whole() {
    let server = Server::builder("t", "1").tool(Budgeted).build().unwrap();
    let call = |action: &str| params("budgeted", json!({ "action": action }));
    let mut refused = Vec::new();
    for action in ["create", "create", "create", "list", "list", "list", "list"] {
        let result = server.call(call(action)).await.unwrap();
        refused.push(result.is_error == Some(true));
    }
    // The tool's 4: one create and three lists; the refused creates spent none of them.
    assert_eq!(refused, [false, true, true, false, false, false, true]);
}

#[tokio::test(flavor = "current_thread")]
async fn auth_middleware_refuses_before_the_handler() {
    let server = Server::builder("t", "1")
        .middleware(Audit)
        .middleware(AuthCheck::new(|_| AuthDecision::Required))
        .tool(Limited)
        .build()
        .unwrap();
    let parsed = parse_envelope(&text(
        &server
            .call(params("limited", json!({"action": "ping"})))
            .await
            .unwrap(),
    ));
    assert_eq!(parsed.code, "AUTH_REQUIRED");
    let server = Server::builder("t", "1")
        .middleware(AuthCheck::new(|_| {
            AuthDecision::Refused("The token expired.".into())
        }))
        .tool(Limited)
        .build()
        .unwrap();
    let parsed = parse_envelope(&text(
        &server
            .call(params("limited", json!({"action": "ping"})))
            .await
            .unwrap(),
    ));
    assert_eq!(
        (parsed.code.as_str(), parsed.message.as_str()),
        ("UNAUTHORIZED", "The token expired.")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn causes_stay_in_the_log_unless_exposed() {
    let hidden = Server::builder("t", "1").tool(slow()).build().unwrap();
    let text_hidden = text(
        &hidden
            .call(params("slow", json!({"action": "leak"})))
            .await
            .unwrap(),
    );
    assert!(text_hidden.contains("INTERNAL_ERROR") && !text_hidden.contains("hunter2"));
    let exposed = Server::builder("t", "1")
        .expose_causes(true)
        .tool(slow())
        .build()
        .unwrap();
    let parsed = parse_envelope(&text(
        &exposed
            .call(params("slow", json!({"action": "leak"})))
            .await
            .unwrap(),
    ));
    assert_eq!(
        parsed.details[1],
        ("cause".to_owned(), "password=hunter2".to_owned())
    );
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_tools_are_not_envelopes() {
    let server = Server::builder("t", "1").tool(Limited).build().unwrap();
    assert!(server.call(params("nope", json!({}))).await.is_none());
}

/// Limits that cannot work are refused when the tool is registered, naming the fix: a
/// concurrency limit of 0 calls at once (no call would ever run; a Redis store would count
/// every call as an outage), and Redis leases too short to be renewed in time.
#[tokio::test(flavor = "current_thread")]
async fn limits_that_cannot_work_are_registration_errors() {
    use mcp_fusion::server::limits::{FailPolicy, RedisStore};
    use mcp_fusion::tools::{ActionDef, ToolDef};

    let none_at_once = ToolDef::new("t")
        .action(ActionDef::without_arguments("a").concurrency(0, 0))
        .build();
    let refused = Server::builder("s", "1")
        .tool(crate::support::Defined(none_at_once))
        .build()
        .unwrap_err();
    assert!(
        refused.to_string().contains("lets no call run"),
        "{refused}"
    );

    // Connects lazily: no Redis is needed to be refused.
    let store = RedisStore::builder("redis://127.0.0.1:1")
        .fail(FailPolicy::Closed)
        .leases(Duration::ZERO, Duration::from_secs(30))
        .build()
        .unwrap();
    let quick = ToolDef::new("q")
        .action(
            ActionDef::without_arguments("a")
                .timeout(Duration::from_millis(100))
                .concurrency(2, 0),
        )
        .build();
    let refused = Server::builder("s", "1")
        .limit_store(store)
        .tool(crate::support::Defined(quick))
        .build()
        .unwrap_err();
    let text = refused.to_string();
    assert!(text.contains("leases would last 100 ms"), "{text}");
    assert!(text.contains("RedisStore::leases"), "{text}");
}
