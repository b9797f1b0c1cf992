//! Workload 5 of `shared/bench/WORKLOADS.md`, and its HTTP twin: servers under load, side by
//! side in one run.
//!
//! ```text
//! cargo run --release -p mcp-fusion-drivers --bin load
//! LOAD_TRANSPORTS=stdio LOAD_KINDS=ok LOAD_ROUNDS=3 cargo run --release -p mcp-fusion-drivers --bin load
//! ```
//!
//! The servers (`bench_server`, `plain_server`) are built by Cargo with this driver's profile
//! ([`mcp_fusion_drivers::artifacts`]). Each runs as a child process:
//!
//! - `plain`: the same `bench` handler on a bare rmcp server (`plain_server`): no routing
//!   tables, no schema validation, no envelopes;
//! - `ours`: this library (`bench_server`), with its fast paths (stdio, stateless HTTP);
//! - `ours-nofast`: this library with every message through rmcp (`--no-fast-path`).
//!
//! Transports: `stdio` (rmcp's `stdio_pipes()`, what `Server::serve_stdio` uses), `http`
//! (stateless streamable HTTP answering JSON, on loopback, as a client of LOAD_PROTOCOL),
//! `http-2026` (the same server, as a client of 2026-07-28: each request with its lifecycle in
//! `_meta` and the standard headers of SEP-2243) and `http-session` (streamable HTTP with
//! sessions, `serve_http`'s default, as a client of 2025-11-25: `initialize`, then every call in
//! the session, each answered as an event stream), `http-session-2026` (the server with
//! sessions as a client of 2026-07-28, which has none: each request with its lifecycle in
//! `_meta` and the standard headers, served as by a stateless server but answered as an event
//! stream), and `stdio-2026` (stdio as a client of
//! 2026-07-28: no `initialize`, each request with its lifecycle in `_meta`, the first opening
//! the session; the driver's own client only). On `http-2026` each server holds one
//! `subscriptions/listen` stream open beside the calls for the whole round.
//! The driver is by default a client of its own (LOAD_CLIENT=`raw`): over stdio, requests
//! written as prepared lines, answers matched to their callers by id; over HTTP, prepared
//! bodies POSTed on keep-alive connections (one per call in flight) with the headers of a
//! client of MCP 2025-06-18; answers checked by substrings, so that the calls per second
//! measure the server rather than the client's own deserialisation (rmcp's client,
//! LOAD_CLIENT=`rmcp`, spends more per call than the servers do, and sends a progress token
//! with every call).
//! Kinds of call, both `tools/call` of `bench`: `ok`
//! (`{"action":"op07","id":"item_42","limit":10}`, a success with the expected text) and
//! `invalid` (`{"action":"op07","id":42,"limit":500,"extra":true}`: ours answers a
//! `<validation_error>` of three fields, plain rmcp serde's first error; each must be an error).
//! On `http-2026`, also `listen`: a `subscriptions/listen` opened on a connection of its own,
//! read until its acknowledgement, and dropped (a request that takes rmcp's path); there and on
//! `stdio-2026` (any 2026-07-28 client), `round`: a 2026-07-28 call that asks the user
//! (SEP-2322), `tools/call` of `confirm` (action `item`) answered `input_required` with an
//! elicitation and a sealed `requestState`, then retried with the user's answer and the state
//! (two requests a call, both the lane's in ours; plain answers both as an rmcp server does by
//! hand, `mcp_fusion_drivers::plain::Plain`). A `round`'s requests declare elicitation among
//! their client capabilities.
//! Two more kinds take rmcp's path in both servers (the handler is rmcp's `ServerHandler`,
//! `mcp_fusion_drivers::plain::Documents`, by hand in plain and through
//! `ServerBuilder::handler` in ours): `prompt` (`prompts/get` of `brief`) and `resource`
//! (`resources/read` of `bench://items/42`).
//!
//! Every round starts fresh server processes; after `initialize` and `tools/list` (and, for
//! ours, one valid and one invalid `users.create`), LOAD_WARMUP warm-up calls, then for each
//! kind and mode LOAD_CALLS timed calls through the raw rmcp peer: `seq` (one in flight) and
//! `conc16` (16 tasks of LOAD_CALLS/16 sequential calls each). The servers take turns within a
//! round, in a rotated order each round. Any answer of the wrong kind makes the driver exit
//! with an error.
//!
//! Reported per transport, kind, server and mode: calls/s (median of the rounds), client-side
//! latency p50/p90/p99 (every call of every round, pooled), server CPU per call from
//! `/proc/<pid>/stat` utime+stime in clock ticks (`getconf CLK_TCK`, 100 when that fails;
//! median of the rounds) with the kernel's part of it (stime: the system calls and wake-ups
//! a call costs whatever the server's code, coarse below ~10⁴ calls a phase) and, finer, from
//! the threads' `/proc/<pid>/task/*/schedstat` run time in nanoseconds, the server threads'
//! context switches per call, and the server's peak RSS (`VmHWM` at the end of each round, the
//! highest); then ours against plain and against ours-nofast. Linux only.
//!
//! Environment: LOAD_CALLS (default 10000), LOAD_WARMUP (default 1000), LOAD_ROUNDS
//! (default 5), LOAD_SLICES (default 1: each server runs a phase's calls at once; `n`: in `n`
//! slices, the servers taking turns at each, so that the machine's drift over a phase falls
//! on all of them alike), LOAD_TRANSPORTS (default
//! `stdio,stdio-2026,http,http-2026,http-session,http-session-2026`), LOAD_KINDS (default
//! `ok,invalid,listen,prompt,resource,round`),
//! LOAD_CLIENT (default `raw`; `rmcp` drives stdio and HTTP with rmcp's client, a client of
//! 2025-11-25: the transports of 2026-07-28 refuse it),
//! LOAD_SERVERS (default `plain,ours,ours-nofast`; also `plain+pipes` and `ours+pipes`, which
//! pass `--pipes`, `ours+otel`, which records OpenTelemetry spans and metrics to in-memory
//! exporters, and, over HTTP, `ours+rmcp`, this library's server on rmcp's service alone, and
//! `ours+mounted`, `Server::http_service`, each on plain's own accept loop; on stdio these two
//! are `ours`), LOAD_MODES (default `seq,conc16`), LOAD_PROTOCOL (default `2025-06-18`; on
//! `http`, `2026-07-28` sends each request with its lifecycle in `_meta` and the standard
//! headers of SEP-2243, as a client of that version does), LOAD_PIN (unset by default: the CPUs
//! the servers run on, as `taskset -c` takes them; run the driver itself on the others, as
//! `LOAD_PIN=1 taskset -c 0 target/release/load`, so that the two never share a core),
//! LOAD_SPIN (unset by default; `1`: the driver never sleeps, a task always ready keeping its
//! runtime polling, so that no server is billed for waking it: a server a little slower than
//! the driver otherwise finds it asleep more often, and its CPU per call counts the kernel's
//! wake-ups).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_fusion::client::{Client, Connection};
use mcp_fusion::rmcp::RoleClient;
use mcp_fusion::rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, ReadResourceRequestParams,
};
use mcp_fusion::rmcp::service::Peer;
use mcp_fusion::rmcp::transport::TokioChildProcess;
use mcp_fusion_drivers::measure::{
    clock_ticks, cpu_ns, cpu_ticks_split, env_list, env_usize, status_kib,
};
use mcp_fusion_drivers::plain::Documents;
use mcp_fusion_drivers::raw_http::{Pool, json_of};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;

const EXPECTED: &str = r#"{"id":"item_42","limit":10}"#;
const IN_FLIGHT: usize = 16;

type Error = Box<dyn std::error::Error>;

/// A server to measure: its binary and the arguments that make it what it is.
struct Target {
    label: &'static str,
    binary: &'static str,
    args: &'static [&'static str],
    /// Whether it runs over HTTP too.
    http: bool,
}

const TARGETS: [Target; 8] = [
    Target {
        label: "plain",
        binary: "plain_server",
        args: &[],
        http: true,
    },
    Target {
        label: "ours",
        binary: "bench_server",
        args: &[],
        http: true,
    },
    Target {
        label: "ours-nofast",
        binary: "bench_server",
        args: &["--no-fast-path"],
        http: true,
    },
    Target {
        label: "plain+pipes",
        binary: "plain_server",
        args: &["--pipes"],
        http: false,
    },
    Target {
        label: "ours+pipes",
        binary: "bench_server",
        args: &["--pipes"],
        http: false,
    },
    Target {
        label: "ours+otel",
        binary: "bench_server",
        args: &["--otel"],
        http: true,
    },
    Target {
        label: "ours+rmcp",
        binary: "bench_server",
        args: &["--rmcp-service"],
        http: true,
    },
    Target {
        label: "ours+mounted",
        binary: "bench_server",
        args: &["--mounted"],
        http: true,
    },
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Stdio,
    /// Stdio as a client of 2026-07-28: no `initialize`, each request with its lifecycle in
    /// `_meta` (the first opens the session).
    Stdio2026,
    /// Stateless, as a client of LOAD_PROTOCOL.
    Http,
    /// Stateless, as a client of 2026-07-28.
    Http2026,
    /// With sessions, as a client of 2025-11-25.
    HttpSession,
    /// With sessions, as a client of 2026-07-28 (which has none: rmcp serves its requests as
    /// a stateless server does, each answered as an event stream).
    HttpSession2026,
}

const TRANSPORTS: [Transport; 6] = [
    Transport::Stdio,
    Transport::Stdio2026,
    Transport::Http,
    Transport::Http2026,
    Transport::HttpSession,
    Transport::HttpSession2026,
];

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Stdio2026 => "stdio-2026",
            Transport::Http => "http",
            Transport::Http2026 => "http-2026",
            Transport::HttpSession => "http-session",
            Transport::HttpSession2026 => "http-session-2026",
        }
    }

    fn http(self) -> bool {
        !matches!(self, Transport::Stdio | Transport::Stdio2026)
    }

    /// The protocol version a client of this transport speaks over HTTP.
    fn version(self) -> &'static str {
        match self {
            Transport::Http => inline_version().unwrap_or("2025-06-18"),
            Transport::Http2026 | Transport::HttpSession2026 => "2026-07-28",
            _ => "2025-11-25",
        }
    }

    /// The version a request carries in its own `_meta` (2026-07-28 and later).
    fn inline(self) -> Option<&'static str> {
        match self {
            Transport::Http => inline_version(),
            Transport::Http2026 | Transport::Stdio2026 | Transport::HttpSession2026 => {
                Some("2026-07-28")
            }
            _ => None,
        }
    }
}

/// What a timed call sends, and what its answer must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Ok,
    Invalid,
    /// A `subscriptions/listen` opened, acknowledged and dropped (2026-07-28 only).
    Listen,
    /// `prompts/get` of `brief`, answered by rmcp's `ServerHandler` in both servers.
    Prompt,
    /// `resources/read` of `Documents::ITEM`, answered by rmcp's `ServerHandler` in both.
    Resource,
    /// `confirm`'s round: the call answered `input_required`, and its retry with the answer
    /// (2026-07-28 only).
    Round,
}

const KINDS: [Kind; 6] = [
    Kind::Ok,
    Kind::Invalid,
    Kind::Listen,
    Kind::Prompt,
    Kind::Resource,
    Kind::Round,
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Ok => "ok",
            Kind::Invalid => "invalid",
            Kind::Listen => "listen",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Round => "round",
        }
    }

    /// The client capabilities its requests declare (2026-07-28).
    fn capabilities(self) -> Value {
        match self {
            Kind::Round => json!({"elicitation": {"form": {}}}),
            _ => json!({}),
        }
    }

    fn arguments(self) -> Value {
        match self {
            Kind::Ok | Kind::Listen | Kind::Prompt | Kind::Resource => {
                json!({"action": "op07", "id": "item_42", "limit": 10})
            }
            Kind::Invalid => json!({"action": "op07", "id": 42, "limit": 500, "extra": true}),
            Kind::Round => json!({"action": "item", "id": "item_42"}),
        }
    }

    /// The members of its request line after the id.
    fn members(self) -> String {
        let tail = match self {
            Kind::Listen => json!({"method": "subscriptions/listen",
                                   "params": {"notifications": {"toolsListChanged": true}}}),
            Kind::Prompt => json!({"method": "prompts/get",
                                   "params": {"name": "brief", "arguments": {"topic": "item_42"}}}),
            Kind::Resource => json!({"method": "resources/read",
                                     "params": {"uri": Documents::ITEM}}),
            Kind::Round => json!({"method": "tools/call",
                                  "params": {"name": "confirm", "arguments": self.arguments()}}),
            _ => json!({"method": "tools/call",
                        "params": {"name": "bench", "arguments": self.arguments()}}),
        }
        .to_string();
        tail[1..tail.len() - 1].to_owned()
    }

    /// Why an answer's line is not of this kind, if it is not (read as little as can tell).
    fn wrong_line(self, line: &str) -> Option<String> {
        // EXPECTED as a JSON string's content (its quotes escaped).
        const EXPECTED_IN_JSON: &str = r#"{\"id\":\"item_42\",\"limit\":10}"#;
        let right = match self {
            Kind::Ok => line.contains(r#""isError":false"#) && line.contains(EXPECTED_IN_JSON),
            Kind::Invalid => line.contains(r#""isError":true"#) && !line.contains("<tool_error"),
            Kind::Listen => line.contains("notifications/subscriptions/acknowledged"),
            Kind::Prompt => line.contains(r#""text":"Brief on item_42.""#),
            Kind::Resource => line.contains(r#""text":"item 42, limit 10""#),
            Kind::Round => {
                line.contains("item_42 confirmed: true") && !line.contains(r#""isError":true"#)
            }
        };
        (!right).then(|| format!("not {}: {line}", self.name()))
    }

    /// Why `result` is not the answer of this kind, if it is not.
    fn wrong(self, result: &CallToolResult) -> Option<String> {
        let text = first_text(result).unwrap_or_default();
        let error = result.is_error == Some(true);
        match self {
            Kind::Ok if !error && text == EXPECTED => None,
            Kind::Invalid if error && !text.contains("<tool_error") => None,
            _ => Some(format!("not {}: {result:?}", self.name())),
        }
    }
}

/// A running server.
struct Live {
    pid: u32,
    caller: Caller,
    /// Held until the round ends: rmcp's connection, a `subscriptions/listen` stream, and the
    /// server's process.
    connection: Option<Connection>,
    _listen: Option<tokio::net::TcpStream>,
    _child: Option<tokio::process::Child>,
}

/// How the driver calls a server.
#[derive(Clone)]
enum Caller {
    Rmcp(Peer<RoleClient>),
    Raw(Arc<Raw>),
    /// Prepared bodies over keep-alive connections (the headers of the transport's client;
    /// the lifecycle in each request's `_meta` when `inline`).
    Http(Arc<Pool>, Option<&'static str>),
}

/// A request shaped once and sent many times: the members of its body after the id
/// (`"method":…,"params":…`), and the header lines that name it (2026-07-28).
struct Prepared {
    members: String,
    headers: String,
}

impl Prepared {
    /// `members` as a client of `version` sends them (the lifecycle in `_meta` from
    /// 2026-07-28), shaped now, not at each request.
    fn new(members: &str, version: Option<&str>) -> Result<Prepared, Error> {
        Prepared::declaring(members, version, json!({}))
    }

    /// The same, declaring `capabilities` (2026-07-28).
    fn declaring(
        members: &str,
        version: Option<&str>,
        capabilities: Value,
    ) -> Result<Prepared, Error> {
        Ok(match version {
            Some(version) => inline(members, version, capabilities)?,
            None => Prepared {
                members: members.to_owned(),
                headers: String::new(),
            },
        })
    }
}

/// One request over HTTP, with a fresh id; its answer's body.
async fn post(pool: &Pool, request: &Prepared) -> Result<String, Error> {
    // Ids of a session's requests in flight differ, as a client's do.
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},{}}}"#, request.members);
    let answer =
        (pool.post_with(body.as_bytes(), &request.headers).await).map_err(|e| e.to_string())?;
    Ok(String::from_utf8(answer)?)
}

/// Opens a `subscriptions/listen` stream of 2026-07-28 and reads it until it is acknowledged.
async fn open_listen(pool: &Pool) -> Result<tokio::net::TcpStream, Error> {
    let listen = inline(&Kind::Listen.members(), "2026-07-28", json!({}))?;
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,{}}}"#, listen.members);
    let acknowledged = "notifications/subscriptions/acknowledged";
    Ok(pool
        .open_stream(body.as_bytes(), &listen.headers, acknowledged)
        .await
        .map_err(|e| e.to_string())?)
}

/// `confirm`'s round through `caller`: the call `first` (answered `input_required`), then its
/// retry with the user's answer to each question asked and the `requestState` echoed; the
/// retry's answer.
async fn round(caller: &Caller, version: Option<&str>, first: &Prepared) -> Result<String, Error> {
    let asked = caller.send(first).await?;
    let asked: Value = serde_json::from_str(json_of(&asked))?;
    let result = &asked["result"];
    let (Some(state), Some(questions)) = (
        result["requestState"].as_str(),
        result["inputRequests"].as_object(),
    ) else {
        return Err(format!("not input_required: {asked}").into());
    };
    let confirmed = json!({"action": "accept", "content": {"confirm": true}});
    let answers: serde_json::Map<String, Value> = (questions.keys())
        .map(|key| (key.clone(), confirmed.clone()))
        .collect();
    let retry = json!({"method": "tools/call", "params": {
        "name": "confirm", "arguments": Kind::Round.arguments(),
        "inputResponses": answers, "requestState": state}})
    .to_string();
    let capabilities = Kind::Round.capabilities();
    let retry = Prepared::declaring(&retry[1..retry.len() - 1], version, capabilities)?;
    caller.send(&retry).await
}

/// LOAD_PROTOCOL, when it is 2026-07-28 or later: requests then carry their own lifecycle.
fn inline_version() -> Option<&'static str> {
    static VERSION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            std::env::var("LOAD_PROTOCOL")
                .ok()
                .filter(|v| v.as_str() >= "2026-07-28")
        })
        .as_deref()
}

/// A request's `members` as a client of `version` declaring `capabilities` sends them: the
/// lifecycle in `_meta`, and the headers naming the request (`Mcp-Method`; `Mcp-Name`, a
/// call's or prompt's name, a resource's URI).
fn inline(members: &str, version: &str, capabilities: Value) -> Result<Prepared, Error> {
    let mut request: Value = serde_json::from_str(&format!("{{{members}}}"))?;
    let method = request["method"].as_str().ok_or("no method")?.to_owned();
    let params = request
        .as_object_mut()
        .ok_or("not an object")?
        .entry("params")
        .or_insert(json!({}));
    let mut headers = format!("Mcp-Method: {method}\r\n");
    let named = params.get("name").or_else(|| params.get("uri"));
    if let Some(name) = named.and_then(Value::as_str) {
        headers.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "1"},
    });
    let body = request.to_string();
    Ok(Prepared {
        members: body[1..body.len() - 1].to_owned(),
        headers,
    })
}

impl Caller {
    /// A call whose whole answer is read (the checks before the timed calls).
    async fn call(&self, name: &str, arguments: Value) -> Result<Value, Error> {
        match self {
            Caller::Rmcp(peer) => {
                let mut params = CallToolRequestParams::new(name.to_owned());
                params.arguments = arguments.as_object().cloned();
                Ok(serde_json::to_value(peer.call_tool(params).await?)?)
            }
            Caller::Raw(raw) => {
                let params = json!({"name": name, "arguments": arguments});
                let answer = raw.request("tools/call", &params).await?;
                let answer: Value = serde_json::from_str(&answer)?;
                Ok(answer["result"].clone())
            }
            Caller::Http(pool, version) => {
                let tail = json!({"method": "tools/call",
                                  "params": {"name": name, "arguments": arguments}})
                .to_string();
                let request = Prepared::new(&tail[1..tail.len() - 1], *version)?;
                let answer = post(pool, &request).await?;
                let answer: Value = serde_json::from_str(json_of(&answer))?;
                Ok(answer["result"].clone())
            }
        }
    }

    /// The tools the server lists, as JSON.
    async fn tools(&self) -> Result<Vec<Value>, Error> {
        let listed = match self {
            Caller::Rmcp(peer) => serde_json::to_value(peer.list_all_tools().await?)?,
            Caller::Raw(raw) => {
                let answer: Value =
                    serde_json::from_str(&raw.request("tools/list", &json!({})).await?)?;
                answer["result"]["tools"].clone()
            }
            Caller::Http(pool, version) => {
                let request = Prepared::new(r#""method":"tools/list""#, *version)?;
                let answer = post(pool, &request).await?;
                let answer: Value = serde_json::from_str(json_of(&answer))?;
                answer["result"]["tools"].clone()
            }
        };
        Ok(listed.as_array().cloned().unwrap_or_default())
    }

    /// `request` with a fresh id, as the driver's own client sends it; its answer.
    async fn send(&self, request: &Prepared) -> Result<String, Error> {
        match self {
            Caller::Raw(raw) => raw.send(&request.members).await,
            Caller::Http(pool, _) => post(pool, request).await,
            Caller::Rmcp(_) => Err("rmcp's client sends its own requests".into()),
        }
    }

    /// One timed call of `kind`: why its answer is not of that kind, if it is not.
    async fn timed_call(&self, kind: Kind, request: &Prepared) -> Option<String> {
        match self {
            Caller::Rmcp(peer) if matches!(kind, Kind::Prompt | Kind::Resource) => {
                let answer = match kind {
                    Kind::Prompt => {
                        let topic = json!({"topic": "item_42"}).as_object().cloned();
                        let mut params = GetPromptRequestParams::new("brief");
                        params.arguments = topic;
                        peer.get_prompt(params).await.map(|r| json!(r))
                    }
                    _ => {
                        let params = ReadResourceRequestParams::new(Documents::ITEM);
                        peer.read_resource(params).await.map(|r| json!(r))
                    }
                };
                match answer {
                    Ok(answer) => kind.wrong_line(&answer.to_string()),
                    Err(e) => Some(e.to_string()),
                }
            }
            Caller::Rmcp(peer) => {
                let mut params = CallToolRequestParams::new("bench");
                params.arguments = kind.arguments().as_object().cloned();
                match peer.call_tool(params).await {
                    Ok(result) => kind.wrong(&result),
                    Err(e) => Some(e.to_string()),
                }
            }
            Caller::Http(pool, _) if kind == Kind::Listen => match open_listen(pool).await {
                Ok(_dropped) => None,
                Err(e) => Some(e.to_string()),
            },
            _ => {
                let answer = match kind {
                    Kind::Round => round(self, self.inline(), request).await,
                    _ => self.send(request).await,
                };
                match answer {
                    Ok(answer) => kind.wrong_line(&answer),
                    Err(e) => Some(e.to_string()),
                }
            }
        }
    }

    /// The version each request carries in its `_meta` (2026-07-28), if they do.
    fn inline(&self) -> Option<&'static str> {
        match self {
            Caller::Http(_, version) => *version,
            Caller::Raw(raw) => raw.inline,
            Caller::Rmcp(_) => None,
        }
    }
}

/// A client of the driver's own over a server's stdin and stdout: each request a prepared
/// line with a fresh id, each answer handed to its caller by that id.
struct Raw {
    stdin: tokio::sync::Mutex<ChildStdin>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<String>>>,
    next: AtomicU64,
    /// The version each request carries in its `_meta` (2026-07-28), if they do.
    inline: Option<&'static str>,
}

impl Raw {
    /// Connects to a server's pipes and does the handshake: `initialize`, or none for a
    /// client of an `inline` version, whose first request opens the session.
    async fn start(
        stdin: ChildStdin,
        stdout: ChildStdout,
        inline: Option<&'static str>,
    ) -> Result<Arc<Raw>, Error> {
        let raw = Arc::new(Raw {
            stdin: tokio::sync::Mutex::new(stdin),
            waiting: Mutex::default(),
            next: AtomicU64::new(1),
            inline,
        });
        tokio::spawn(Raw::read(raw.clone(), BufReader::new(stdout)));
        if inline.is_some() {
            return Ok(raw);
        }
        let initialize = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "load", "version": "1"}});
        raw.request("initialize", &initialize).await?;
        raw.write(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await?;
        Ok(raw)
    }

    /// Hands each answer to its caller.
    async fn read(raw: Arc<Raw>, mut stdout: BufReader<ChildStdout>) {
        let mut line = String::new();
        loop {
            line.clear();
            match stdout.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let Some(id) = answer_id(&line) else {
                continue;
            };
            let waiting = raw
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
            if let Some(waiting) = waiting {
                let _ = waiting.send(std::mem::take(&mut line));
            }
        }
    }

    /// Writes `line`, which ends in its newline, in one write (as a client writes a message:
    /// a line written in two parts could wake the server twice).
    async fn write(&self, line: &[u8]) -> Result<(), Error> {
        self.stdin.lock().await.write_all(line).await?;
        Ok(())
    }

    /// A request of `method` with `params` (its lifecycle in `_meta` when `inline`); its
    /// answer's line.
    async fn request(&self, method: &str, params: &Value) -> Result<String, Error> {
        let tail = json!({"method": method, "params": params}).to_string();
        let request = Prepared::new(&tail[1..tail.len() - 1], self.inline)?;
        self.send(&request.members).await
    }

    /// A request made of `members` (`"method":…,"params":…`) with a fresh id; its answer's line.
    async fn send(&self, members: &str) -> Result<String, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (answered, answer) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, answered);
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{members}}}\n");
        self.write(line.as_bytes()).await?;
        Ok(answer.await?)
    }
}

/// The numeric id of an answer line (`"id":N` first in rmcp's answers).
fn answer_id(line: &str) -> Option<u64> {
    let rest = &line[line.find(r#""id":"#)? + 5..];
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}

/// What was measured of a server on a transport, over all rounds.
struct Measured {
    transport: Transport,
    target: &'static Target,
    /// `(kind, concurrent)` → one phase per round.
    phases: Vec<((Kind, bool), Vec<Phase>)>,
    /// The highest `VmHWM` of the round's processes.
    peak_rss_kib: u64,
}

/// One timed phase: LOAD_CALLS calls of one kind in one mode.
struct Phase {
    wall: Duration,
    latencies_ns: Vec<u64>,
    failures: usize,
    first_failure: Option<String>,
    cpu_ticks: u64,
    /// Of `cpu_ticks`, the kernel's (stime).
    sys_ticks: u64,
    cpu_ns: u64,
    switches: u64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let calls = env_usize("LOAD_CALLS", 10_000)?;
    let warmup = env_usize("LOAD_WARMUP", 1_000)?;
    let rounds = env_usize("LOAD_ROUNDS", 5)?.max(1);
    let slices = env_usize("LOAD_SLICES", 1)?.clamp(1, calls.max(1));
    let wanted = env_list("LOAD_SERVERS", "plain,ours,ours-nofast");
    let modes = env_list("LOAD_MODES", "seq,conc16");
    let transports = env_list(
        "LOAD_TRANSPORTS",
        "stdio,stdio-2026,http,http-2026,http-session,http-session-2026",
    );
    let kinds = env_list("LOAD_KINDS", "ok,invalid,listen,prompt,resource,round");
    let raw = env_list("LOAD_CLIENT", "raw").iter().any(|c| c == "raw");
    let ticks_per_s = clock_ticks();
    if env_usize("LOAD_SPIN", 0)? != 0 {
        // The driver never sleeps: a task always ready keeps its runtime polling (epoll with
        // no wait), so that a server's answer never has to wake it.
        tokio::spawn(async {
            loop {
                tokio::task::yield_now().await;
            }
        });
    }

    let targets: Vec<&'static Target> = TARGETS
        .iter()
        .filter(|t| wanted.iter().any(|w| w == t.label))
        .collect();
    if targets.is_empty() {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.label).collect();
        return Err(format!("LOAD_SERVERS names none of {}", names.join(", ")).into());
    }
    let transports: Vec<Transport> = TRANSPORTS
        .into_iter()
        .filter(|t| transports.iter().any(|w| w == t.name()))
        .collect();
    let kinds: Vec<Kind> = KINDS
        .into_iter()
        .filter(|k| kinds.iter().any(|w| w == k.name()))
        .collect();
    let concurrency: Vec<bool> = [("seq", false), ("conc16", true)]
        .into_iter()
        .filter(|(mode, _)| modes.iter().any(|m| m == mode))
        .map(|(_, concurrent)| concurrent)
        .collect();

    println!(
        "workload 5: {calls} timed calls per phase (in {slices} slice(s)), {warmup} warm-up \
         calls, {rounds} round(s), CLK_TCK {ticks_per_s}, {} CPU(s)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let mut measured: Vec<Measured> = Vec::new();
    for &transport in &transports {
        for &target in &targets {
            if transport.http() && !target.http {
                continue;
            }
            measured.push(Measured {
                transport,
                target,
                phases: Vec::new(),
                peak_rss_kib: 0,
            });
        }
    }

    // Fresh processes every round: a process's own luck (thread placement, the blocking pool's
    // threads) weighs on the figures, so each round is an independent sample.
    for round in 0..rounds {
        for &transport in &transports {
            let indices: Vec<usize> = (0..measured.len())
                .filter(|&i| measured[i].transport == transport)
                .collect();
            let mut live = Vec::new();
            for &i in &indices {
                live.push(start(transport, raw, measured[i].target, warmup, round == 0).await?);
            }
            let count = live.len();
            for &kind in &kinds {
                // A listen stream is HTTP's; a round, any 2026-07-28 client's.
                let served = match kind {
                    Kind::Listen => transport == Transport::Http2026,
                    Kind::Round => transport.inline().is_some(),
                    _ => true,
                };
                if !served {
                    continue;
                }
                for &concurrent in &concurrency {
                    // LOAD_SLICES: the phase's calls in slices, the servers taking turns at
                    // each (in an order rotated by slice too), so that the machine's drift
                    // over a phase falls on every server alike.
                    let mut merged: Vec<Option<Phase>> = (0..count).map(|_| None).collect();
                    for slice in 0..slices {
                        let share = calls / slices + usize::from(slice < calls % slices);
                        for k in 0..count {
                            let at = (k + round + slice) % count;
                            let server = &live[at];
                            let in_flight = if concurrent { IN_FLIGHT } else { 1 };
                            let phase =
                                timed(&server.caller, server.pid, share, in_flight, kind).await?;
                            merged[at] = Some(match merged[at].take() {
                                Some(before) => before.then(phase),
                                None => phase,
                            });
                        }
                    }
                    for (at, phase) in merged.into_iter().enumerate() {
                        let Some(phase) = phase else { continue };
                        let phases = &mut measured[indices[at]].phases;
                        match phases
                            .iter_mut()
                            .find(|(key, _)| *key == (kind, concurrent))
                        {
                            Some((_, list)) => list.push(phase),
                            None => phases.push(((kind, concurrent), vec![phase])),
                        }
                    }
                }
            }
            for (server, &i) in live.into_iter().zip(&indices) {
                let peak = status_kib(server.pid, "VmHWM")?;
                measured[i].peak_rss_kib = measured[i].peak_rss_kib.max(peak);
                if let Some(connection) = server.connection {
                    connection.cancel().await?;
                }
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }

    report(&measured, calls, ticks_per_s);

    let mut failures = 0;
    for server in &measured {
        for phase in server.phases.iter().flat_map(|(_, list)| list) {
            failures += phase.failures;
            if let Some(first) = &phase.first_failure {
                eprintln!("{}: a call failed: {first}", server.target.label);
            }
        }
    }
    if failures > 0 {
        return Err(format!("{failures} call(s) failed").into());
    }
    Ok(())
}

/// Spawns a server, checks its tools, and warms it up.
async fn start(
    transport: Transport,
    raw: bool,
    target: &Target,
    warmup: usize,
    verbose: bool,
) -> Result<Live, Error> {
    // rmcp's client here speaks 2025-11-25, in a session: not a client of 2026-07-28.
    if !raw && let Some(version) = transport.inline() {
        let name = transport.name();
        return Err(format!("{name} is a client of {version}: LOAD_CLIENT=raw").into());
    }
    let path = mcp_fusion_drivers::artifacts::driver(target.binary);
    // LOAD_PIN: the CPUs the servers run on (`taskset -c`, which execs the server in place).
    let mut command = match std::env::var("LOAD_PIN") {
        Ok(cpus) if !cpus.is_empty() => {
            let mut pinned = tokio::process::Command::new("taskset");
            pinned.arg("-c").arg(cpus).arg(&path);
            pinned
        }
        _ => tokio::process::Command::new(&path),
    };
    command.args(target.args);
    let live = match transport {
        Transport::Stdio | Transport::Stdio2026 if raw => {
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()?;
            let pid = child.id().ok_or("the server has no pid")?;
            let stdin = child.stdin.take().ok_or("no stdin")?;
            let stdout = child.stdout.take().ok_or("no stdout")?;
            Live {
                pid,
                caller: Caller::Raw(Raw::start(stdin, stdout, transport.inline()).await?),
                connection: None,
                _listen: None,
                _child: Some(child),
            }
        }
        Transport::Stdio | Transport::Stdio2026 => {
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()?;
            let pid = transport.id().ok_or("the server has no pid")?;
            let (client, connection) = Client::connect(transport).await?;
            Live {
                pid,
                caller: Caller::Rmcp(client.peer().clone()),
                connection: Some(connection),
                _listen: None,
                _child: None,
            }
        }
        Transport::Http
        | Transport::Http2026
        | Transport::HttpSession
        | Transport::HttpSession2026 => {
            command.arg("--http");
            if matches!(
                transport,
                Transport::HttpSession | Transport::HttpSession2026
            ) {
                command.arg("--sessions");
            }
            let mut child = command
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()?;
            let pid = child.id().ok_or("the server has no pid")?;
            let stdout = child.stdout.take().ok_or("no stdout")?;
            let mut url = String::new();
            tokio::io::BufReader::new(stdout)
                .read_line(&mut url)
                .await?;
            if raw {
                let pool = Pool::with_version(url.trim(), transport.version())
                    .map_err(|e| e.to_string())?;
                let (pool, listen) = match transport {
                    Transport::HttpSession => (
                        pool.in_session("load").await.map_err(|e| e.to_string())?,
                        None,
                    ),
                    Transport::Http2026 => {
                        let listen = open_listen(&pool).await?;
                        (pool, Some(listen))
                    }
                    _ => (pool, None),
                };
                Live {
                    pid,
                    caller: Caller::Http(Arc::new(pool), transport.inline()),
                    connection: None,
                    _listen: listen,
                    _child: Some(child),
                }
            } else {
                let (client, connection) = Client::connect_http(url.trim()).await?;
                Live {
                    pid,
                    caller: Caller::Rmcp(client.peer().clone()),
                    connection: Some(connection),
                    _listen: None,
                    _child: Some(child),
                }
            }
        }
    };
    let caller = &live.caller;
    let tools = caller.tools().await?;
    let bench = tools
        .iter()
        .find(|t| t["name"] == "bench")
        .ok_or("the server has no bench tool")?;
    let actions = bench["inputSchema"]["properties"]["action"]["enum"]
        .as_array()
        .map_or(0, Vec::len);
    if actions != 20 {
        return Err(format!(
            "{}: bench advertises {actions} actions, not 20",
            target.label
        )
        .into());
    }
    if target.binary == "bench_server" {
        check_users(caller).await?;
    }
    if verbose {
        eprintln!(
            "{} on {}: pid {}, tools {:?}",
            target.label,
            transport.name(),
            live.pid,
            tools.iter().map(|t| t["name"].clone()).collect::<Vec<_>>()
        );
    }

    let (_, failures, first) = run(caller.clone(), warmup, Kind::Ok).await;
    if failures > 0 {
        return Err(format!(
            "{}: {failures} warm-up call(s) failed: {}",
            target.label,
            first.unwrap_or_default()
        )
        .into());
    }
    Ok(live)
}

/// The `users` tool of workload 3 answers a valid user and rejects the four problems.
async fn check_users(caller: &Caller) -> Result<(), Error> {
    let text = |result: &Value| {
        result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    let user = json!({"action":"create","email":"jane@example.com","age":34,"role":"editor","address":{"street":"1 Main St","city":"Springfield","zip":"12345"},"tags":["alpha","beta","gamma"],"name":"Jane Doe"});
    let result = caller.call("users", user.clone()).await?;
    let mut echoed: Value = serde_json::from_str(&text(&result))?;
    echoed["action"] = json!("create");
    if result["isError"] == true || echoed != user {
        return Err(format!("users.create failed on a valid user: {result}").into());
    }
    let invalid = json!({"action":"create","email":"not-an-email","age":12,"role":"superuser","address":{"street":"1 Main St","city":"Springfield","zip":"12345"},"tags":["alpha","beta","gamma"],"name":"Jane Doe","nickname":"JD"});
    let result = caller.call("users", invalid).await?;
    let text = text(&result);
    let fields = text
        .lines()
        .filter(|line| line.trim_start().starts_with("<field "))
        .count();
    if result["isError"] != true || !text.contains("<validation_error") || fields != 4 {
        return Err(format!("users.create did not report the four problems: {text}").into());
    }
    Ok(())
}

/// One timed phase: `calls` calls, `in_flight` at a time, with the server's CPU around it.
async fn timed(
    caller: &Caller,
    pid: u32,
    calls: usize,
    in_flight: usize,
    kind: Kind,
) -> Result<Phase, Error> {
    let (ticks_before, ns_before, switches_before) =
        (cpu_ticks_split(pid)?, cpu_ns(pid)?, switches(pid)?);
    let started = Instant::now();
    let mut latencies_ns = Vec::with_capacity(calls);
    let mut failures = 0;
    let mut first_failure = None;
    if in_flight == 1 {
        (latencies_ns, failures, first_failure) = run(caller.clone(), calls, kind).await;
    } else {
        let mut set = tokio::task::JoinSet::new();
        for task in 0..in_flight {
            let share = calls / in_flight + usize::from(task < calls % in_flight);
            set.spawn(run(caller.clone(), share, kind));
        }
        while let Some(joined) = set.join_next().await {
            let (lat, fail, first) = joined?;
            latencies_ns.extend(lat);
            failures += fail;
            first_failure = first_failure.or(first);
        }
    }
    let wall = started.elapsed();
    let (ticks_after, ns_after, switches_after) =
        (cpu_ticks_split(pid)?, cpu_ns(pid)?, switches(pid)?);
    let user = ticks_after.0.saturating_sub(ticks_before.0);
    let sys = ticks_after.1.saturating_sub(ticks_before.1);
    Ok(Phase {
        wall,
        latencies_ns,
        failures,
        first_failure,
        cpu_ticks: user + sys,
        sys_ticks: sys,
        cpu_ns: ns_after.saturating_sub(ns_before),
        switches: switches_after.saturating_sub(switches_before),
    })
}

/// `calls` sequential calls: each one's latency in ns, the failures, the first failure.
async fn run(caller: Caller, calls: usize, kind: Kind) -> (Vec<u64>, usize, Option<String>) {
    let request = match Prepared::declaring(&kind.members(), caller.inline(), kind.capabilities()) {
        Ok(request) => request,
        Err(e) => return (Vec::new(), calls, Some(e.to_string())),
    };
    let mut latencies = Vec::with_capacity(calls);
    let mut failures = 0;
    let mut first = None;
    for _ in 0..calls {
        let before = Instant::now();
        let failure = caller.timed_call(kind, &request).await;
        latencies.push(before.elapsed().as_nanos() as u64);
        if let Some(failure) = failure {
            failures += 1;
            first.get_or_insert(failure);
        }
    }
    (latencies, failures, first)
}

fn first_text(result: &CallToolResult) -> Option<String> {
    result
        .content
        .first()
        .and_then(|b| b.as_text())
        .map(|t| t.text.clone())
}

// ---- the table ----

struct Row {
    calls_per_s: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    cpu_tick_us: f64,
    sys_tick_us: f64,
    cpu_ns_us: f64,
    switches: f64,
    failures: usize,
}

impl Phase {
    /// This phase and the `next` slice of it, as one.
    fn then(mut self, next: Phase) -> Phase {
        self.wall += next.wall;
        self.latencies_ns.extend(next.latencies_ns);
        self.failures += next.failures;
        self.first_failure = self.first_failure.or(next.first_failure);
        self.cpu_ticks += next.cpu_ticks;
        self.sys_ticks += next.sys_ticks;
        self.cpu_ns += next.cpu_ns;
        self.switches += next.switches;
        self
    }
}

fn summarize(phases: &[Phase], calls: usize, ticks_per_s: u64) -> Row {
    let per_call = |x: f64| x / calls as f64;
    let mut rates: Vec<f64> = phases
        .iter()
        .map(|p| calls as f64 / p.wall.as_secs_f64())
        .collect();
    let mut tick_cpu: Vec<f64> = phases
        .iter()
        .map(|p| per_call(p.cpu_ticks as f64 * 1e6 / ticks_per_s as f64))
        .collect();
    let mut tick_sys: Vec<f64> = phases
        .iter()
        .map(|p| per_call(p.sys_ticks as f64 * 1e6 / ticks_per_s as f64))
        .collect();
    let mut ns_cpu: Vec<f64> = phases
        .iter()
        .map(|p| per_call(p.cpu_ns as f64 / 1e3))
        .collect();
    let mut switches: Vec<f64> = phases.iter().map(|p| per_call(p.switches as f64)).collect();
    let mut latencies: Vec<u64> = phases
        .iter()
        .flat_map(|p| p.latencies_ns.iter().copied())
        .collect();
    latencies.sort_unstable();
    Row {
        calls_per_s: median(&mut rates),
        p50: percentile_us(&latencies, 0.50),
        p90: percentile_us(&latencies, 0.90),
        p99: percentile_us(&latencies, 0.99),
        cpu_tick_us: median(&mut tick_cpu),
        sys_tick_us: median(&mut tick_sys),
        cpu_ns_us: median(&mut ns_cpu),
        switches: median(&mut switches),
        failures: phases.iter().map(|p| p.failures).sum(),
    }
}

fn report(measured: &[Measured], calls: usize, ticks_per_s: u64) {
    println!();
    println!(
        "{:<6} {:<8} {:<12} {:<7} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9} {:>7} {:>8} {:>5}",
        "via",
        "call",
        "server",
        "mode",
        "calls/s",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "CPU µs/c",
        "sys µs/c",
        "(sched)",
        "ctxsw/c",
        "RSS MiB",
        "fail"
    );
    let mut rows = Vec::new();
    for server in measured {
        for ((kind, concurrent), phases) in &server.phases {
            let mode = if *concurrent { "conc16" } else { "seq" };
            let row = summarize(phases, calls, ticks_per_s);
            println!(
                "{:<6} {:<8} {:<12} {:<7} {:>9.0} {:>8.1} {:>8.1} {:>8.1} {:>9.2} {:>8.2} {:>9.2} {:>7.2} {:>8.1} {:>5}",
                server.transport.name(),
                kind.name(),
                server.target.label,
                mode,
                row.calls_per_s,
                row.p50,
                row.p90,
                row.p99,
                row.cpu_tick_us,
                row.sys_tick_us,
                row.cpu_ns_us,
                row.switches,
                server.peak_rss_kib as f64 / 1024.0,
                row.failures
            );
            rows.push((server.transport, *kind, server.target.label, mode, row));
        }
    }
    println!();
    println!(
        "CPU µs/c: utime+stime ticks / calls; sys µs/c: of those, stime (the kernel's); \
         (sched): threads' schedstat run time / calls; ctxsw/c: the server threads' context \
         switches / calls."
    );
    println!(
        "ours against another server, same transport, call and mode: calls/s ratio, and CPU per \
         call ratio (sched) (target against plain: calls/s >= 1.2, CPU <= 0.8):"
    );
    for (base, against) in [("plain", "ours"), ("ours-nofast", "ours")] {
        for (transport, kind, label, mode, row) in &rows {
            if *label != against {
                continue;
            }
            let found = rows
                .iter()
                .find(|(t, k, l, m, _)| t == transport && k == kind && *l == base && m == mode);
            if let Some((.., base_row)) = found {
                println!(
                    "  {:<6} {:<8} {:<7} {against} / {base:<12} calls/s {:.2}  CPU {:.2} ({:.1} vs {:.1} µs)",
                    transport.name(),
                    kind.name(),
                    mode,
                    row.calls_per_s / base_row.calls_per_s,
                    row.cpu_ns_us / base_row.cpu_ns_us,
                    row.cpu_ns_us,
                    base_row.cpu_ns_us
                );
            }
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Nearest-rank percentile of sorted nanoseconds, in microseconds.
fn percentile_us(sorted_ns: &[u64], p: f64) -> f64 {
    if sorted_ns.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted_ns.len() as f64).ceil() as usize).clamp(1, sorted_ns.len());
    sorted_ns[rank - 1] as f64 / 1e3
}

/// Context switches (voluntary and not) of the process's living threads.
fn switches(pid: u32) -> Result<u64, Error> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let Ok(status) = std::fs::read_to_string(task?.path().join("status")) else {
            continue;
        };
        total += status
            .lines()
            .filter(|line| line.contains("ctxt_switches:"))
            .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    Ok(total)
}
