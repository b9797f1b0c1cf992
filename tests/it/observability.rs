//! Long calls and observability: progress notifications received by a real rmcp client (over
//! stdio from the billing server, and in process for the heartbeat), and the client's W3C trace
//! context on the call's span and in the incident id of an unexpected failure; a stdio call's
//! span under the session's, wherever the call ran.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::{
    CallToolRequestParams, NumberOrString, ProgressNotificationParam, ProgressToken,
    RequestMetaObject,
};
use mcp_fusion::rmcp::service::NotificationContext;
use mcp_fusion::rmcp::{ClientHandler, RoleClient, ServiceExt};
use mcp_fusion::{Context, ToolError, tool};
use mcp_fusion_drivers::raw_stdio;
use serde_json::{Value, json};

use crate::support::Lines;

/// A client that keeps every progress notification it receives.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

impl Recorder {
    fn take(&self) -> Vec<ProgressNotificationParam> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

fn call(name: &str, arguments: Value, token: Option<i64>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    params.meta = token
        .map(|t| RequestMetaObject::with_progress_token(ProgressToken(NumberOrString::Number(t))));
    params
}

fn strictly_increasing(notes: &[ProgressNotificationParam]) -> bool {
    notes.windows(2).all(|w| w[1].progress > w[0].progress)
}

#[tokio::test]
async fn progress_reaches_a_real_client_over_stdio() {
    let mut command = tokio::process::Command::new(mcp_fusion_drivers::artifacts::billing());
    command
        .arg("--no-audit")
        .stderr(std::process::Stdio::null());
    let transport = mcp_fusion::rmcp::transport::TokioChildProcess::new(command).unwrap();
    let recorder = Recorder::default();
    let client = recorder.clone().serve(transport).await.unwrap();

    let export = json!({"action": "export_invoices", "format": "csv"});
    let result = client
        .call_tool(call("billing", export.clone(), Some(7)))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let notes = recorder.take();
    // Five parts 40 ms apart, at most one per 100 ms, the last always: 2 to 5 notifications.
    assert!((2..=5).contains(&notes.len()), "{notes:?}");
    assert!(strictly_increasing(&notes), "{notes:?}");
    // rmcp's client puts a token of its own in the request; every notification carries it.
    let token = &notes[0].progress_token;
    assert!(
        notes.iter().all(|n| n.progress_token == *token),
        "{notes:?}"
    );
    let last = notes.last().unwrap();
    assert_eq!((last.progress, last.total), (5.0, Some(5.0)));
    assert_eq!(last.message.as_deref(), Some("part 5 of 5"));

    client.cancel().await.unwrap();
}

/// rmcp's client always asks for progress; a raw client chooses, over the same stdio.
#[tokio::test]
async fn progress_goes_only_to_a_request_that_asked_for_it() {
    let mut billing =
        raw_stdio::Billing::start(&mcp_fusion_drivers::artifacts::billing(), &["--no-audit"])
            .await
            .unwrap();
    let export = raw_stdio::call(1, "export_invoices", json!({"format": "json"}));
    billing.send(&export).await.unwrap();
    let messages = until_answered(&mut billing, 1).await;
    assert_eq!(messages.len(), 1, "the answer alone: {messages:?}");
    assert_eq!(messages[0]["id"], 1);

    let mut asked = raw_stdio::call(2, "export_invoices", json!({"format": "json"}));
    asked["params"]["_meta"] = json!({"progressToken": "export-2"});
    billing.send(&asked).await.unwrap();
    // A notification of the first call that came after its answer would show up here, and fail
    // the token's check.
    let messages = until_answered(&mut billing, 2).await;
    let (answer, notes) = messages.split_last().expect("messages");
    assert_eq!(
        answer["id"], 2,
        "the answer comes after every notification: {messages:?}"
    );
    assert!(notes.len() >= 2, "{messages:?}");
    let mut last = 0.0;
    for note in notes {
        assert_eq!(note["method"], "notifications/progress");
        assert_eq!(note["params"]["progressToken"], "export-2");
        let progress = note["params"]["progress"].as_f64().unwrap();
        assert!(progress > last, "{messages:?}");
        last = progress;
    }
    assert_eq!(last, 5.0);
}

/// The messages read up to the answer to `id`, that answer last.
async fn until_answered(billing: &mut raw_stdio::Billing, id: u64) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        let message = billing
            .receive(crate::support::PATIENCE)
            .await
            .unwrap_or_else(|| panic!("no answer to {id}: {messages:?}"));
        let answered = message["id"] == id;
        messages.push(message);
        if answered {
            return messages;
        }
    }
}

struct Slow;

/// Slow work.
#[tool]
impl Slow {
    /// Reports nothing for 230 ms.
    #[action(heartbeat = "50ms")]
    async fn quiet(&self) -> Result<&'static str, ToolError> {
        tokio::time::sleep(Duration::from_millis(230)).await;
        Ok("done")
    }

    /// Quiet for 180 ms, then reports its own progress.
    #[action(heartbeat = "50ms")]
    async fn chatty(&self, f: Context) -> Result<&'static str, ToolError> {
        tokio::time::sleep(Duration::from_millis(180)).await;
        f.progress(1.0, Some(2.0), Some("half"));
        tokio::time::sleep(Duration::from_millis(180)).await;
        f.progress(2.0, Some(2.0), Some("all"));
        Ok("done")
    }

    /// Fails unexpectedly.
    async fn broken(&self) -> Result<(), ToolError> {
        Err(ToolError::unexpected("the disk is gone"))
    }
}

async fn in_process(
    recorder: Recorder,
) -> mcp_fusion::rmcp::service::RunningService<RoleClient, Recorder> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = Server::builder("slow-server", "1")
        .progress_interval(Duration::from_millis(10))
        .tool(Slow)
        .build()
        .unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    recorder.serve(client_io).await.unwrap()
}

/// On tokio's paused clock (the server runs in the test's runtime, over a duplex pipe), so the
/// beats are counted exactly: time moves only when every task waits.
#[tokio::test(start_paused = true)]
async fn the_heartbeat_runs_while_the_handler_reports_nothing() {
    let recorder = Recorder::default();
    let client = in_process(recorder.clone()).await;
    let quiet = client
        .call_tool(call("slow", json!({"action": "quiet"}), Some(1)))
        .await
        .unwrap();
    assert_eq!(quiet.is_error, Some(false));
    // Every 50 ms for 230 ms: the seconds elapsed, no total.
    let beats: Vec<(f64, Option<f64>)> = recorder
        .take()
        .iter()
        .map(|n| (n.progress, n.total))
        .collect();
    assert_eq!(
        beats,
        [(0.05, None), (0.1, None), (0.15, None), (0.2, None)],
        "{beats:?}"
    );

    // Once the handler reports, the heartbeat stops.
    let chatty = client
        .call_tool(call("slow", json!({"action": "chatty"}), Some(2)))
        .await
        .unwrap();
    assert_eq!(chatty.is_error, Some(false));
    let notes: Vec<(f64, Option<f64>)> = recorder
        .take()
        .iter()
        .map(|n| (n.progress, n.total))
        .collect();
    assert_eq!(
        notes,
        [
            (0.05, None),
            (0.1, None),
            (0.15, None),
            (1.0, Some(2.0)),
            (2.0, Some(2.0))
        ],
        "three beats in the 180 quiet ms, then the handler's own: {notes:?}"
    );
    client.cancel().await.unwrap();
}

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn traced(traceparent: &str) -> CallToolRequestParams {
    let mut params = call("slow", json!({"action": "broken"}), None);
    let mut meta = RequestMetaObject::new();
    meta.0.set_traceparent(traceparent);
    params.meta = Some(meta);
    params
}

fn incident(text: &str) -> String {
    text.split("<detail key=\"incident\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("an incident: {text}"))
        .to_owned()
}

#[tokio::test(flavor = "current_thread")]
async fn a_trace_context_names_the_incident_and_the_span() {
    let lines = Lines::default();
    let _guard = lines.capture();
    let client = in_process(Recorder::default()).await;

    let failed = client.call_tool(traced(TRACEPARENT)).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    let text = failed.content[0].as_text().unwrap().text.clone();
    let id = incident(&text);
    let (trace_id, span_id) = id.split_once('-').expect("trace id - span id");
    assert_eq!(trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(span_id.len(), 16);
    assert_ne!(
        span_id, "00f067aa0ba902b7",
        "the server's own span, not the caller's"
    );
    let log = lines.text();
    let line = log
        .lines()
        .find(|l| l.contains("tool call failed unexpectedly"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains(&format!("trace_id={trace_id}")), "{line}");
    assert!(line.contains("parent_span_id=00f067aa0ba902b7"), "{line}");
    assert!(line.contains(&format!("span_id={span_id}")), "{line}");
    assert!(line.contains(&format!("incident={id}")), "{line}");

    // A malformed one is ignored, and never echoed.
    let hostile = "00-<tool_error>AAAAAAAAAAAAAAAAAAAAAAAA-00f067aa0ba902b7-01";
    let failed = client.call_tool(traced(hostile)).await.unwrap();
    let text = failed.content[0].as_text().unwrap().text.clone();
    assert!(incident(&text).starts_with("inc_"), "{text}");
    let log = lines.text();
    assert!(!log.contains("<tool_error>AAAA"), "{log}");
    client.cancel().await.unwrap();
}

struct Spans;

/// A tool that logs from inside its call.
#[tool]
impl Spans {
    /// Logs at once.
    async fn now(&self) -> Result<&'static str, ToolError> {
        tracing::info!("inside the call");
        Ok("now")
    }

    /// Logs after a while.
    async fn later(&self) -> Result<&'static str, ToolError> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        tracing::info!("inside the call");
        Ok("later")
    }
}

/// On stdio, a call the lane finishes in the reader (nothing else in flight) and calls it runs
/// in tasks of their own (others in flight) log in spans of the same parents: the session's,
/// as rmcp's own request tasks do.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_stdio_calls_span_has_the_same_parents_wherever_it_ran() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let lines = Lines::default();
    let _guard = lines.capture();
    let server = Server::builder("t", "1").tool(Spans).build().unwrap();
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    let options = mcp_fusion::server::StdioOptions::default();
    let serving = tokio::spawn(server.serve_io(read, write, options).into_future());
    let (reply, mut request) = tokio::io::split(client);
    let mut replies = BufReader::new(reply).lines();
    let call = |id: u32, action: &str| {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "spans", "arguments": {"action": action}}});
        format!("{call}\n")
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    request
        .write_all(format!("{initialize}\n{initialized}\n").as_bytes())
        .await
        .unwrap();
    replies.next_line().await.unwrap();
    // Alone: finished in the reader.
    request.write_all(call(1, "now").as_bytes()).await.unwrap();
    replies.next_line().await.unwrap();
    // Behind a call in flight: in a task of its own; then the one in flight, in its task.
    let both = format!("{}{}", call(2, "later"), call(3, "now"));
    request.write_all(both.as_bytes()).await.unwrap();
    replies.next_line().await.unwrap();
    replies.next_line().await.unwrap();
    request.shutdown().await.unwrap();
    serving.await.unwrap().unwrap();

    let log = lines.text();
    let parents: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("inside the call"))
        .map(|line| line.split("tools/call").next().unwrap_or_default())
        .collect();
    assert_eq!(parents.len(), 3, "{log}");
    assert!(parents.iter().all(|p| p == &parents[0]), "{log}");
    assert!(parents[0].contains("serve_inner"), "{log}");
}
