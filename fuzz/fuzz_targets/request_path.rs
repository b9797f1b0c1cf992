//! The whole request path of a server, driven as a client would: the stdio transport's reader
//! and guard, rmcp's decoding, the request's `_meta` (trace context, progress token), routing
//! and validation, on one server session that lives across inputs.
//!
//! An input is either raw bytes, written as lines, or (first byte odd) a `tools/call` built
//! from the bytes: any id, a tool name, arguments of a bounded JSON value, and a `_meta` of
//! traceparents near and far from valid, any tracestate and any progress token. After each
//! input a `ping` must be answered: the server never stops reading. No answer may be an
//! internal error (the tool below never fails, so one would be a panic caught on the way), and
//! every line written is one JSON-RPC message.

#![no_main]

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion::Server;
use mcp_fusion::server::StdioOptions;
use mcp_fusion::{ToolError, tool};
use mcp_fusion_fuzz::{JsonBuilder, text};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::runtime::Runtime;

/// Arguments with the shapes schemars writes: tuples (`prefixItems`), optional named types,
/// maps, enums.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Order {
    id: String,
    pairs: Option<Vec<(String, u32)>>,
    status: Option<Status>,
    tags: Option<std::collections::HashMap<String, i64>>,
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    /// Not sent yet.
    Draft,
    /// Sent.
    Open,
}

struct Shop;

/// Orders.
#[tool]
impl Shop {
    /// Gets an order.
    async fn get(&self, args: Order) -> Result<String, ToolError> {
        Ok(args.id)
    }

    /// Lists orders.
    #[action(read_only)]
    async fn list(&self) -> Result<&'static str, ToolError> {
        Ok("[]")
    }
}

struct Session {
    runtime: Runtime,
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
    pings: u64,
}

static SESSION: LazyLock<Mutex<Session>> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let mut options = StdioOptions::default();
    options.max_line_bytes = 64 << 10;
    let server = Server::builder("fuzz", "1")
        .tool(Shop)
        .build()
        .expect("the server builds");
    runtime.spawn(server.serve_io(server_read, server_write, options).into_future());
    let (read, write) = tokio::io::split(client);
    let mut session = Session {
        runtime,
        write,
        read: BufReader::new(read),
        pings: 0,
    };
    let initialize = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"}}});
    session.exchange(format!("{initialize}\n").as_bytes());
    session.exchange(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    Mutex::new(session)
});

impl Session {
    /// Writes `bytes` and a ping, and reads every line until the ping's answer, checking each.
    fn exchange(&mut self, bytes: &[u8]) {
        self.pings += 1;
        let ping = format!("fuzz-ping-{}", self.pings);
        let line = format!("\n{{\"jsonrpc\":\"2.0\",\"id\":\"{ping}\",\"method\":\"ping\"}}\n");
        let Session {
            runtime,
            write,
            read,
            ..
        } = self;
        runtime.block_on(async {
            write.write_all(bytes).await.expect("the server reads");
            write.write_all(line.as_bytes()).await.expect("the server reads");
            let mut answer = String::new();
            loop {
                answer.clear();
                let read = tokio::time::timeout(Duration::from_secs(10), read.read_line(&mut answer));
                match read.await {
                    Ok(Ok(n)) if n > 0 => {}
                    other => panic!("the server stopped answering: {other:?}"),
                }
                let message: Value = serde_json::from_str(&answer)
                    .unwrap_or_else(|e| panic!("a line that is no JSON ({e}): {answer}"));
                check(&message);
                if message["id"] == ping && message.get("result").is_some() {
                    return;
                }
            }
        });
    }
}

/// An answer is a JSON-RPC message, never an internal error.
fn check(message: &Value) {
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    assert_ne!(message["error"]["code"], -32603, "an internal error: {message}");
    // The envelope's own code, not a sent value it quotes (a field named `INTERNAL_ERROR`).
    if let Some(text) = message["result"]["content"][0]["text"].as_str() {
        assert!(
            !text.starts_with("<tool_error code=\"INTERNAL_ERROR\""),
            "{message}"
        );
    }
}

/// Traceparents at and around the valid form: multi-byte characters at field boundaries,
/// lengths around 55, uppercase, versions.
fn traceparent(u: &mut Unstructured) -> Result<Value> {
    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    Ok(match u.choose_index(5)? {
        0 => Value::String(VALID.to_owned()),
        1 => {
            let mut sent = VALID.to_owned();
            let at = u.int_in_range(0..=VALID.len())?;
            let len = u.int_in_range(0..=3)?.min(VALID.len() - at);
            let with: String = text(u, 4)?;
            sent.replace_range(at..at + len, &with);
            Value::String(sent)
        }
        2 => Value::String(text(u, 80)?),
        3 => Value::String(format!("{}{}", text(u, 3)?, "a".repeat(u.int_in_range(40..=70)?))),
        _ => JsonBuilder::new(&[], &[], 8).value(u, 2)?,
    })
}

fn call(u: &mut Unstructured) -> Result<Vec<u8>> {
    let keys: Vec<String> = ["action", "id", "pairs", "status", "tags", "limit"]
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
    let strings = ["get", "list", "shop.get", "draft", "open", "x", ""];
    let mut json = JsonBuilder::new(&keys, &strings, 40);
    let id = match u.choose_index(3)? {
        0 => Value::from(u.arbitrary::<i64>()?),
        1 => Value::String(text(u, 20)?),
        _ => json.value(u, 1)?,
    };
    let name = match u.choose_index(3)? {
        0 | 1 => Value::String("shop".into()),
        _ => json.value(u, 1)?,
    };
    let mut arguments = json.object(u, 3)?;
    if u.ratio(3, 4)? {
        let action = (*u.choose(&strings)?).to_owned();
        arguments.insert("action".into(), Value::String(action));
    }
    let mut meta = serde_json::Map::new();
    if u.arbitrary()? {
        meta.insert("traceparent".into(), traceparent(u)?);
    }
    if u.arbitrary()? {
        meta.insert("tracestate".into(), json.value(u, 1)?);
    }
    if u.arbitrary()? {
        meta.insert("progressToken".into(), json.value(u, 1)?);
    }
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta}});
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    Ok(line)
}

fuzz_target!(|data: &[u8]| {
    let bytes = match data.split_first() {
        Some((first, rest)) if first % 2 == 1 => {
            let mut u = Unstructured::new(rest);
            match call(&mut u) {
                Ok(line) => line,
                Err(_) => return,
            }
        }
        Some((_, rest)) => rest.to_vec(),
        None => return,
    };
    SESSION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .exchange(&bytes);
});
