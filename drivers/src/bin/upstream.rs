//! An upstream MCP server for the gateway's tests, written by hand on stdio so that it can
//! misbehave on purpose: each tool does one thing a real upstream may do.
//!
//! - `echo {"text"}`: answers the text.
//! - `slow {"ms"}`: answers after `ms` milliseconds, with a progress notification every 50 ms
//!   when the call has a progress token; stops early when the call is cancelled.
//! - `refuse`: a JSON-RPC error -32602 (Invalid params); `fail`: -32603 with internals.
//! - `garbage`: a line that is no JSON, and no answer; `silent`: no answer ever.
//! - `twice`: answers twice; `die`: exits mid-call.
//! - `grow`: lists one more tool (`extra`) from now on, and says so
//!   (`notifications/tools/list_changed`).
//!
//! - `ask` (listed with `--asks`): asks the gateway's client for a form (`elicitation/create`)
//!   and answers `answered`, or `error: {message}` when the gateway refused.
//!
//! `--start-delay-ms N` waits before reading anything (a slow start); `--pidfile PATH` writes
//! its process id there; `--log PATH` appends each `notifications/cancelled` it receives and
//! each call's name with the `traceparent` of its `_meta`.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    if let Some(path) = flag("--pidfile") {
        std::fs::write(path, std::process::id().to_string()).expect("the pidfile is written");
    }
    let log = flag("--log");
    let asks = args.iter().any(|a| a == "--asks");
    if let Some(ms) = flag("--start-delay-ms").and_then(|ms| ms.parse().ok()) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let (lines_out, mut to_write) = tokio::sync::mpsc::unbounded_channel::<String>();
    // One writer, so that lines never interleave.
    tokio::spawn(async move {
        while let Some(line) = to_write.recv().await {
            // `die`: everything before it is written, then the process exits mid-call.
            if line == EXIT {
                std::process::exit(3);
            }
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    });
    let cancelled = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let mut grown = false;
    // The call `ask` is answering, until its request to the gateway's client is answered.
    let mut asking = Value::Null;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message["id"].clone();
        let method = message["method"].as_str().unwrap_or_default();
        let send = {
            let out = lines_out.clone();
            move |value: Value| {
                let _ = out.send(value.to_string());
            }
        };
        if method.is_empty() && id == json!("ask-1") {
            // The answer to `ask`'s request: what came back, as the call's answer.
            let answer = match message.get("error") {
                Some(error) => format!("error: {}", error["message"].as_str().unwrap_or("")),
                None => "answered".to_owned(),
            };
            send(json!({"jsonrpc": "2.0", "id": asking.take(), "result": {
                "content": [{"type": "text", "text": answer}], "isError": false}}));
            continue;
        }
        match method {
            "initialize" => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "test-upstream", "version": "1.0.0"}}})),
            "tools/list" => {
                send(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools(grown, asks)}}));
            }
            "notifications/cancelled" => {
                let request = message["params"]["requestId"].clone();
                cancelled.lock().unwrap().push(request.clone());
                if let Some(path) = &log {
                    append(path, &format!("cancelled {request}"));
                }
            }
            "tools/call" => {
                let name = message["params"]["name"].as_str().unwrap_or_default();
                if let Some(path) = &log {
                    let trace = &message["params"]["_meta"]["traceparent"];
                    append(path, &format!("call {name} traceparent={trace}"));
                }
                let arguments = message["params"]["arguments"].clone();
                let token = message["params"]["_meta"]["progressToken"].clone();
                let ok = |text: &str| {
                    json!({"jsonrpc": "2.0", "id": id, "result": {
                        "content": [{"type": "text", "text": text}], "isError": false}})
                };
                match name {
                    "echo" => send(ok(arguments["text"].as_str().unwrap_or_default())),
                    "slow" => {
                        let ms = arguments["ms"].as_u64().unwrap_or(1000);
                        let cancelled = cancelled.clone();
                        tokio::spawn(async move {
                            let started = tokio::time::Instant::now();
                            let mut tick = 0;
                            while started.elapsed() < Duration::from_millis(ms) {
                                tokio::time::sleep(Duration::from_millis(50)).await;
                                if cancelled.lock().unwrap().contains(&id) {
                                    return;
                                }
                                tick += 1;
                                if !token.is_null() {
                                    send(json!({"jsonrpc": "2.0",
                                        "method": "notifications/progress",
                                        "params": {"progressToken": token, "progress": tick}}));
                                }
                            }
                            send(json!({"jsonrpc": "2.0", "id": id, "result": {
                                "content": [{"type": "text", "text": "slept"}], "isError": false}}));
                        });
                    }
                    "refuse" => send(json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32602, "message": "missing field `invoice_id`"}})),
                    "fail" => send(json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32603, "message": "panicked at src/db.rs:42: password=hunter2"}})),
                    "garbage" => send(Value::String("this is not JSON-RPC {".into())),
                    "silent" => {}
                    "twice" => {
                        send(ok("first"));
                        send(ok("second"));
                    }
                    "grow" => {
                        grown = true;
                        send(ok("grown"));
                        send(
                            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                        );
                    }
                    "ask" => {
                        asking = id.clone();
                        send(json!({"jsonrpc": "2.0", "id": "ask-1",
                            "method": "elicitation/create", "params": {
                            "mode": "form", "message": "Your password?",
                            "requestedSchema": {"type": "object", "properties": {}}}}));
                    }
                    "die" => {
                        let _ = lines_out.send(EXIT.to_owned());
                    }
                    _ => send(json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32602, "message": format!("unknown tool: {name}")}})),
                }
            }
            _ if id.is_null() => {}
            _ => send(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": "Method not found"}})),
        }
    }
}

/// Appends a line to the log at `path`.
fn append(path: &str, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the log opens");
    let _ = writeln!(file, "{line}");
}

/// Not a line: tells the writer to exit.
const EXIT: &str = "\0exit";

fn tools(grown: bool, asks: bool) -> Value {
    let object = |properties: Value| json!({"type": "object", "properties": properties});
    let mut tools = json!([
        {"name": "echo", "description": "Echoes text.",
         "inputSchema": object(json!({"text": {"type": "string"}}))},
        {"name": "slow", "description": "Answers after a while.",
         "inputSchema": object(json!({"ms": {"type": "integer"}}))},
        {"name": "refuse", "inputSchema": object(json!({}))},
        {"name": "fail", "inputSchema": object(json!({}))},
        {"name": "garbage", "inputSchema": object(json!({}))},
        {"name": "silent", "inputSchema": object(json!({}))},
        {"name": "twice", "inputSchema": object(json!({}))},
        {"name": "die", "inputSchema": object(json!({}))},
        {"name": "grow", "inputSchema": object(json!({}))},
    ]);
    if asks {
        let ask = json!({"name": "ask", "inputSchema": object(json!({}))});
        tools.as_array_mut().expect("a list").push(ask);
    }
    if grown {
        let extra = json!({"name": "extra", "inputSchema": object(json!({}))});
        tools.as_array_mut().expect("a list").push(extra);
    }
    tools
}
