//! A `Tool` written by hand, with no macro, registered on a server: the server's pipeline
//! (middleware, rate limit, concurrency, deadline, panic catching) applies to it exactly as to
//! a generated one, because the tool only runs actions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::client::parse_envelope;
use mcp_fusion::middleware::{AuthCheck, AuthDecision};
use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use mcp_fusion::tools::{ActionDef, BoxFuture, Failure, ToolDef};
use mcp_fusion::{Context, Tool};
use serde_json::{Value, json};

/// Four actions: `echo` answers, `boom` panics, `slow` never finishes, `eager` panics before
/// it returns its future.
struct Manual {
    def: ToolDef,
    ran: Arc<AtomicUsize>,
}

impl Manual {
    fn new(
        limits: impl FnOnce(mcp_fusion::tools::ToolDefBuilder) -> mcp_fusion::tools::ToolDefBuilder,
    ) -> Self {
        let def = ToolDef::new("manual")
            .description("Written by hand.")
            .action(ActionDef::without_arguments("echo").description("Echoes its action."))
            .action(ActionDef::without_arguments("boom").description("Panics."))
            .action(
                ActionDef::without_arguments("slow")
                    .description("Sleeps past its deadline.")
                    .timeout(Duration::from_millis(50)),
            )
            .action(ActionDef::without_arguments("eager").description("Panics before its future."));
        Manual {
            def: limits(def).build(),
            ran: Arc::default(),
        }
    }
}

impl Tool for Manual {
    fn definition(&self) -> &ToolDef {
        &self.def
    }

    fn invoke(
        &self,
        index: usize,
        _args: Value,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
        self.ran.fetch_add(1, Ordering::SeqCst);
        assert_ne!(index, 3, "hand-written bug outside the future");
        Box::pin(async move {
            match index {
                0 => Ok(CallToolResult::success(vec![ContentBlock::text(
                    context.action().to_owned(),
                )])),
                1 => panic!("hand-written bug with secret=hunter2"),
                _ => {
                    std::future::pending::<()>().await;
                    Ok(CallToolResult::success(vec![]))
                }
            }
        })
    }
}

fn call(action: &str) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("manual");
    params.arguments = json!({ "action": action }).as_object().cloned();
    params
}

fn text(result: &CallToolResult) -> String {
    result.content[0]
        .as_text()
        .expect("a text block")
        .text
        .clone()
}

#[tokio::test(flavor = "current_thread")]
async fn middleware_refuses_before_the_hand_written_action_runs() {
    let tool = Manual::new(|d| d);
    let ran = tool.ran.clone();
    let server = Server::builder("s", "1")
        .middleware(AuthCheck::new(|_| {
            AuthDecision::Refused("The token has expired.".into())
        }))
        .tool(tool)
        .build()
        .unwrap();
    let result = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(result.is_error, Some(true));
    let parsed = parse_envelope(&text(&result));
    assert_eq!(parsed.code, "UNAUTHORIZED");
    assert_eq!(parsed.message, "The token has expired.");
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the action never ran");
}

#[tokio::test(flavor = "current_thread")]
async fn a_hand_written_panic_is_internal_error_and_the_server_goes_on() {
    let server = Server::builder("s", "1")
        .tool(Manual::new(|d| d))
        .build()
        .unwrap();
    let result = server.call(call("boom")).await.expect("the tool exists");
    assert_eq!(result.is_error, Some(true));
    let body = text(&result);
    let parsed = parse_envelope(&body);
    assert_eq!(parsed.code, "INTERNAL_ERROR");
    assert_eq!(
        parsed.message,
        "The action \"manual.boom\" failed unexpectedly."
    );
    assert!(!body.contains("hunter2"), "{body}");
    let next = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(text(&next), "manual.echo");
    // A panic before the future exists is caught the same way.
    let eager = server.call(call("eager")).await.expect("the tool exists");
    assert_eq!(parse_envelope(&text(&eager)).code, "INTERNAL_ERROR");
    // In process, through `Tool::call`, the same rule holds.
    let tool = Manual::new(|d| d);
    for action in ["boom", "eager"] {
        let arguments = json!({ "action": action }).as_object().cloned();
        let result = tool.call(arguments).await.into_result();
        assert_eq!(
            parse_envelope(&text(&result)).code,
            "INTERNAL_ERROR",
            "{action}"
        );
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn limits_and_deadline_apply_to_a_hand_written_tool() {
    let limited = Manual::new(|d| d.rate_limit(3, Duration::from_secs(60)).concurrency(1, 0));
    let server = Server::builder("s", "1").tool(limited).build().unwrap();
    // The deadline: the slow action is cancelled after 50 ms.
    let timeout = server.call(call("slow")).await.expect("the tool exists");
    assert_eq!(parse_envelope(&text(&timeout)).code, "TIMEOUT");
    // Concurrency 1, no queue: a second call while one runs is SERVER_BUSY.
    let running = {
        let server = server.clone();
        tokio::spawn(async move { server.call(call("slow")).await })
    };
    tokio::task::yield_now().await;
    let busy = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(parse_envelope(&text(&busy)).code, "SERVER_BUSY");
    let _ = running.await;
    // The rate limit (3 per minute) was spent by the two calls that ran: the one refused for
    // want of a slot spent nothing, so one call is left.
    let third = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(third.is_error, Some(false));
    let limited = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(parse_envelope(&text(&limited)).code, "RATE_LIMITED");
}

/// A tool behind an `Arc` is served as the tool itself, and the program keeps its own handle
/// on it: the state the server's calls change is the state the program reads (as the user's
/// own handler would, beside the tools). `Arc<dyn Tool>` too.
#[tokio::test(flavor = "current_thread")]
async fn a_tool_shared_in_an_arc_is_the_same_tool_for_the_server_and_the_program() {
    let shared = Arc::new(Manual::new(|d| d));
    let server = Server::builder("s", "1")
        .tool(Arc::clone(&shared))
        .build()
        .unwrap();
    let answered = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(text(&answered), "manual.echo");
    assert_eq!(shared.ran.load(Ordering::SeqCst), 1, "one value, one count");
    // Routing and validation come with it, in process too.
    let arguments = json!({ "action": "ech" }).as_object().cloned();
    let refused = shared.call(arguments).await.into_result();
    assert_eq!(parse_envelope(&text(&refused)).code, "UNKNOWN_ACTION");

    let erased: Arc<dyn Tool> = Arc::new(Manual::new(|d| d));
    let server = Server::builder("s", "1").tool(erased).build().unwrap();
    let answered = server.call(call("echo")).await.expect("the tool exists");
    assert_eq!(text(&answered), "manual.echo");
}
