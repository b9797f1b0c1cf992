//! A committed corpus of hostile inputs, sent over raw stdio to the billing server.
//!
//! Each case of `tests/hostile/corpus.jsonl` is one line written to the `billing` example's
//! stdin, as MCP stdio frames messages (newline-delimited JSON-RPC, after a hand-made
//! handshake): a `tools/call` built from the case, or a raw line that need not be JSON-RPC, JSON
//! or even UTF-8. The answer must be the one the case names: a JSON-RPC error, a success, or a
//! `tools/call` result holding one well-formed envelope of bounded size in which injected markup
//! stays text; or, for lines that are not requests, nothing. After every case a `ping` shows
//! that the line was consumed, and a `list_invoices` call that the server still serves.
//!
//! `HOSTILE_TRACE=1` prints every answer (to write new cases); `MCP_FUSION_BILLING=path`
//! runs the corpus against another build of the server.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_fusion::client::{ParsedKind, parse_envelope};
use mcp_fusion_drivers::raw_http;
use roxmltree::{Document, Node, NodeType, ParsingOptions};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout_at;

const CORPUS: &str = include_str!("../hostile/corpus.jsonl");

/// The most bytes one line of an envelope may take.
///
/// ERRORS.md cuts every string echoed from the input to 50 characters (§4 `{value}`, §5
/// `{sent}`, keys in paths). Escaped, a character takes at most 5 bytes in text (`&amp;`,
/// `&#13;`) and 7 in a path attribute (`"` is `\"` in JSON syntax, then `\&quot;`). For the
/// billing tool the longest `<field>` is then `<field name="` (13) + path (≤ 379:
/// `lines[99999999]` and `[&quot;` + 50 × 7 + `&quot;]`) + `">` (2) + headline (≤ 30) +
/// `. You sent: ` (12) + sent (≤ 2 + 50 × 5) + `. ` (2) + expected (≤ 150: a fixed sentence, or
/// at most 20 declared names) + `</field>` (8) = 848 bytes; a `<message>` that echoes an action
/// name is at most 250 + 80. A sent LF splits a field over lines, which only shortens them.
const LINE_MAX_BYTES: usize = 1024;

/// The most bytes one envelope may take.
///
/// A `<validation_error>` holds at most 20 `<field>`s plus the `(more)` one (§5), each at most
/// [`LINE_MAX_BYTES`] as derived there, and three fixed lines (root, `<recovery>`, closing
/// tag) of under 1 KiB each: 24 × 1 KiB. A `<tool_error>` of the billing server (one echoed
/// value, a fixed recovery, at most 7 actions and one detail) stays far below.
const ENVELOPE_MAX_BYTES: usize = 24 * LINE_MAX_BYTES;

/// How long one case may take before the server counts as hung: a hang becomes a failure,
/// however loaded the machine; no case is expected to come anywhere near it.
const CASE_TIMEOUT: Duration = Duration::from_secs(30);

/// One line of the corpus: one input and the answer it must get.
///
/// The input is exactly one of `call` (the params of a `tools/call`, `name` defaulting to
/// `billing`; the test adds the request id and expects it back), `line` (a raw line, sent as
/// is) or `line_bytes` (a raw line in which `{xNN}` is the byte 0xNN). `generate` describes a
/// large JSON text that replaces the one token `"$gen"` of the input.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    group: String,
    call: Option<Map<String, Value>>,
    line: Option<String>,
    line_bytes: Option<String>,
    generate: Option<Generate>,
    expect: Expect,
    /// The id an answer to a raw line carries; `null` when it carries none.
    #[serde(default, deserialize_with = "present")]
    reply_id: Option<Value>,
    /// The JSON-RPC error code, when `expect` is `jsonrpc_error`.
    code: Option<i64>,
    /// The `<field>` names of a validation error, in order.
    fields: Option<Vec<String>>,
    /// Strings the envelope's decoded text contains: what was sent, intact.
    #[serde(default)]
    contains: Vec<String>,
}

/// Tells a field given as `null` (`Some(Null)`) from an absent one (`None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The answer a case expects.
#[derive(Debug, Deserialize)]
#[serde(try_from = "String")]
enum Expect {
    /// A JSON-RPC result; for `tools/call`, one with `isError` not set.
    Success,
    /// A `tools/call` error result holding a `<validation_error>`.
    ValidationError,
    /// A `tools/call` error result holding a `<tool_error>` with this code.
    ToolError(String),
    /// A JSON-RPC error response.
    JsonRpcError,
    /// Nothing: the line is not a request.
    NoAnswer,
}

impl TryFrom<String> for Expect {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        Ok(match s.as_str() {
            "success" => Expect::Success,
            "validation_error" => Expect::ValidationError,
            "jsonrpc_error" => Expect::JsonRpcError,
            "no_answer" => Expect::NoAnswer,
            _ => match s.strip_prefix("tool_error:") {
                Some(code) => Expect::ToolError(code.to_owned()),
                None => return Err(format!("unknown expectation {s:?}")),
            },
        })
    }
}

/// A large JSON text, written out by the test instead of committed.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Generate {
    /// A string of `unit` repeated `count` times.
    String { unit: String, count: usize },
    /// `depth` nested arrays, `[[[]]]`.
    DeepArray { depth: usize },
    /// `depth` (at least 1) nested objects, `{"a":{"a":{}}}`.
    DeepObject { depth: usize },
    /// An object of the members of `with`, then `count` keys `{prefix}{i}` with value `i`.
    ManyKeys {
        count: usize,
        prefix: String,
        #[serde(default)]
        with: Map<String, Value>,
    },
    /// An array of `count` copies of `item`.
    ManyItems { count: usize, item: Value },
}

impl Generate {
    /// The JSON text, built as text: a deep `Value` would overflow the stack when dropped.
    fn json(&self) -> String {
        match self {
            Generate::String { unit, count } => Value::from(unit.repeat(*count)).to_string(),
            Generate::DeepArray { depth } => "[".repeat(*depth) + &"]".repeat(*depth),
            Generate::DeepObject { depth } => {
                r#"{"a":"#.repeat(depth - 1) + "{}" + &"}".repeat(depth - 1)
            }
            Generate::ManyKeys {
                count,
                prefix,
                with,
            } => {
                let with = with
                    .iter()
                    .map(|(k, v)| format!("{}:{v}", Value::from(&**k)));
                let keys =
                    (0..*count).map(|i| format!("{}:{i}", Value::from(format!("{prefix}{i}"))));
                format!("{{{}}}", with.chain(keys).collect::<Vec<_>>().join(","))
            }
            Generate::ManyItems { count, item } => {
                format!("[{}]", vec![item.to_string(); *count].join(","))
            }
        }
    }
}

impl Case {
    /// The bytes to send (without the newline), and the id an answer must carry: `None` when
    /// no answer is expected, `Some(Null)` for an answer without an id.
    fn request(&self, id: u64) -> (Vec<u8>, Option<Value>) {
        let (text, reply_id) = match (&self.call, &self.line, &self.line_bytes) {
            (Some(params), None, None) => {
                let mut params = params.clone();
                if !params.contains_key("name") {
                    params.insert("name".into(), "billing".into());
                }
                let request =
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
                (request.to_string(), Some(id.into()))
            }
            (None, Some(line), None) | (None, None, Some(line)) => {
                (line.clone(), self.reply_id.clone())
            }
            _ => panic!("{}: give exactly one of call, line, line_bytes", self.name),
        };
        let text = match &self.generate {
            Some(generate) => {
                assert_eq!(
                    text.matches(r#""$gen""#).count(),
                    1,
                    "{}: one \"$gen\"",
                    self.name
                );
                text.replace(r#""$gen""#, &generate.json())
            }
            None => text,
        };
        let bytes = match self.line_bytes {
            Some(_) => with_raw_bytes(&text),
            None => text.into_bytes(),
        };
        (bytes, reply_id)
    }
}

/// `text` with every `{xNN}` replaced by the byte 0xNN.
fn with_raw_bytes(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{x") {
        bytes.extend_from_slice(&rest.as_bytes()[..start]);
        let hex = &rest[start + 2..start + 4];
        assert_eq!(&rest[start + 4..start + 5], "}", "{{xNN}} in {text:?}");
        bytes.push(u8::from_str_radix(hex, 16).expect("two hex digits"));
        rest = &rest[start + 5..];
    }
    bytes.extend_from_slice(rest.as_bytes());
    bytes
}

fn load_corpus() -> Vec<Case> {
    let cases: Vec<Case> = CORPUS
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("corpus.jsonl line {}: {e}", i + 1))
        })
        .collect();
    for case in &cases {
        let raw = case.call.is_none();
        let answered = !matches!(case.expect, Expect::NoAnswer);
        assert!(
            raw || answered,
            "{}: a tools/call is always answered",
            case.name
        );
        assert_eq!(
            case.reply_id.is_some(),
            raw && answered,
            "{}: a raw line that is answered, and only that, names its reply_id",
            case.name
        );
    }
    cases
}

/// The billing server as a child process, spoken to line by line.
struct Server {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// A line read in part when a read timed out.
    partial: Vec<u8>,
}

impl Server {
    /// Starts the server and does the MCP handshake by hand.
    async fn start() -> Server {
        // Lines up to rmcp's own limit, 16 MiB: the corpus's 1 MiB strings escape to more than
        // the 1 MiB the server reads by default (`tests/it/stdio_serving.rs` covers that refusal).
        let mut child = Command::new(mcp_fusion_drivers::artifacts::billing())
            .args(["--max-line-bytes", "16777216"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the billing server starts");
        let mut server = Server {
            stdin: child.stdin.take().expect("piped stdin"),
            stdout: BufReader::new(child.stdout.take().expect("piped stdout")),
            _child: child,
            partial: Vec::new(),
        };
        let deadline = Instant::now() + CASE_TIMEOUT;
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "hostile-corpus", "version": "1.0.0"},
            },
        });
        server
            .send(initialize.to_string().as_bytes(), deadline)
            .await
            .unwrap();
        let answer = server
            .receive(deadline)
            .await
            .unwrap()
            .expect("initialize is answered");
        assert_eq!(answer["id"], 0, "{answer}");
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-06-18",
            "{answer}"
        );
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        server
            .send(initialized.to_string().as_bytes(), deadline)
            .await
            .unwrap();
        server
    }

    async fn send(&mut self, line: &[u8], deadline: Instant) -> Result<(), String> {
        let write = async {
            self.stdin.write_all(line).await?;
            self.stdin.write_all(b"\n").await?;
            self.stdin.flush().await
        };
        match timeout_at(deadline.into(), write).await {
            Ok(written) => written.map_err(|e| format!("the server stopped reading: {e}")),
            Err(_) => Err("the server stopped reading (write timed out)".into()),
        }
    }

    /// The next message, or `None` when none came before `until`.
    async fn receive(&mut self, until: Instant) -> Result<Option<Value>, String> {
        match timeout_at(
            until.into(),
            self.stdout.read_until(b'\n', &mut self.partial),
        )
        .await
        {
            Err(_) => Ok(None),
            Ok(Err(e)) => Err(format!("reading stdout failed: {e}")),
            Ok(Ok(0)) => Err("the server exited".into()),
            Ok(Ok(_)) => {
                let line = std::mem::take(&mut self.partial);
                serde_json::from_slice(&line).map(Some).map_err(|e| {
                    let shown = String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
                    format!("the server wrote a line that is not JSON ({e}): {shown}")
                })
            }
        }
    }

    /// Sends a line of JSON.
    async fn send_json(&mut self, message: &Value, deadline: Instant) -> Result<(), String> {
        self.send(message.to_string().as_bytes(), deadline).await
    }
}

/// What came back for one case.
struct Exchange {
    /// Every message that is neither the ping's answer nor the health call's.
    answers: Vec<Value>,
    ping: Value,
    health: Value,
}

/// Sends a case, then a `ping` and a `list_invoices` call behind it, and reads until both of
/// those are answered.
///
/// A case that must be answered and is not answered by then is read on until its answer comes
/// (or [`CASE_TIMEOUT`]): the server handles requests concurrently, so under load the case's
/// answer may trail the two behind it, and how long it trails is no criterion. A case that must
/// not be answered is not waited on: an answer that comes late shows up among the next case's
/// answers (or the final empty line's), and fails there.
async fn exchange(
    server: &mut Server,
    line: &[u8],
    answered: bool,
    n: usize,
) -> Result<Exchange, String> {
    let deadline = Instant::now() + CASE_TIMEOUT;
    let ping_id = json!(format!("ping-{n}"));
    let health_id = json!(format!("health-{n}"));
    server.send(line, deadline).await?;
    let ping = json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"});
    server.send_json(&ping, deadline).await?;
    let health = json!({
        "jsonrpc": "2.0", "id": health_id, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "list_invoices"}},
    });
    server.send_json(&health, deadline).await?;

    let (mut ping, mut health, mut answers) = (None, None, Vec::new());
    while ping.is_none() || health.is_none() {
        let message = server
            .receive(deadline)
            .await?
            .ok_or("the server hung: the ping and the call sent after the case got no answer")?;
        match message.get("id") {
            Some(id) if *id == ping_id => ping = Some(message),
            Some(id) if *id == health_id => health = Some(message),
            _ => answers.push(message),
        }
    }
    if answered && answers.is_empty() {
        answers.extend(server.receive(deadline).await?);
    }
    Ok(Exchange {
        answers,
        ping: ping.unwrap_or_default(),
        health: health.unwrap_or_default(),
    })
}

/// The ping succeeded, and `billing` `list_invoices` listed invoices.
fn still_serves(exchange: &Exchange) -> Result<(), String> {
    if exchange.ping.get("result") != Some(&json!({})) {
        return Err(format!(
            "the ping after it failed: {}",
            brief(&exchange.ping)
        ));
    }
    let result = &exchange.health["result"];
    let listed = result["content"][0]["text"]
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    match (&result["isError"], listed) {
        (Value::Null | Value::Bool(false), Some(Value::Array(_))) => Ok(()),
        _ => Err(format!(
            "list_invoices failed after it: {}",
            brief(&exchange.health)
        )),
    }
}

/// Runs one case: its answer, or none, then the server still serving. Returns the size of the
/// envelope it got, if any.
async fn run(server: &mut Server, case: &Case, n: usize, trace: bool) -> Result<usize, String> {
    let (line, reply_id) = case.request(n as u64);
    let answered = !matches!(case.expect, Expect::NoAnswer);
    let exchange = exchange(server, &line, answered, n).await?;
    judge(case, &exchange, reply_id.as_ref(), trace)
}

/// Whether what came back for a case is what it expects, and the server still serves.
fn judge(
    case: &Case,
    exchange: &Exchange,
    reply_id: Option<&Value>,
    trace: bool,
) -> Result<usize, String> {
    let answered = !matches!(case.expect, Expect::NoAnswer);
    let answers = exchange.answers.as_slice();
    if trace {
        let shown: Vec<String> = answers.iter().map(brief).collect();
        println!("{} => {}", case.name, shown.join(" | "));
    }
    let outcome = match (answers, reply_id) {
        ([], None) => Ok(0),
        ([], Some(_)) => Err("no answer".to_owned()),
        ([answer], Some(id)) => check_id(answer, id).and_then(|()| check_answer(case, answer)),
        _ => Err(format!(
            "expected {} answer(s), got {}: {}",
            u8::from(answered),
            answers.len(),
            answers.iter().map(brief).collect::<Vec<_>>().join(" | ")
        )),
    };
    still_serves(exchange).and(outcome)
}

fn check_id(answer: &Value, expected: &Value) -> Result<(), String> {
    let id = answer.get("id").unwrap_or(&Value::Null);
    if id == expected {
        Ok(())
    } else {
        Err(format!(
            "answer carries id {id}, expected {expected}: {}",
            brief(answer)
        ))
    }
}

/// The answer is the one the case expects; returns the size of its envelope, if any.
fn check_answer(case: &Case, answer: &Value) -> Result<usize, String> {
    if answer.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(format!("not a JSON-RPC 2.0 message: {}", brief(answer)));
    }
    let result = answer.get("result");
    let is_error = result.and_then(|r| r.get("isError")) == Some(&Value::Bool(true));
    match (&case.expect, answer.get("error"), result) {
        (Expect::JsonRpcError, Some(error), None) => {
            let code = error.get("code").and_then(Value::as_i64);
            match (
                code,
                error.get("message").and_then(Value::as_str),
                case.code,
            ) {
                (Some(code), Some(_), Some(expected)) if code != expected => Err(format!(
                    "JSON-RPC error code {code}, expected {expected}: {}",
                    brief(answer)
                )),
                (Some(_), Some(_), _) => Ok(0),
                _ => Err(format!("malformed JSON-RPC error: {}", brief(answer))),
            }
        }
        (Expect::Success, None, Some(_)) if !is_error => Ok(0),
        (Expect::ValidationError | Expect::ToolError(_), None, Some(result)) if is_error => {
            match result["content"].as_array().map(Vec::as_slice) {
                Some([block]) if block["type"] == "text" => {
                    check_envelope(case, block["text"].as_str().unwrap_or_default())
                }
                _ => Err(format!(
                    "an error result holds exactly one text block: {}",
                    brief(answer)
                )),
            }
        }
        (expect, _, _) => Err(format!("expected {expect:?}, got {}", brief(answer))),
    }
}

/// The envelope is well-formed, bounded, exactly the elements the contract allows, and the
/// envelope the case expects, with what was sent echoed intact. Returns its size.
fn check_envelope(case: &Case, text: &str) -> Result<usize, String> {
    if text.len() > ENVELOPE_MAX_BYTES {
        return Err(format!(
            "envelope of {} bytes, over {ENVELOPE_MAX_BYTES}",
            text.len()
        ));
    }
    if let Some(line) = text.lines().find(|l| l.len() > LINE_MAX_BYTES) {
        return Err(format!(
            "envelope line of {} bytes, over {LINE_MAX_BYTES}",
            line.len()
        ));
    }
    let options = ParsingOptions {
        allow_dtd: false,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options)
        .map_err(|e| format!("not well-formed XML ({e}): {text}"))?;
    if doc.root().children().count() != 1 {
        return Err(format!("more than the root element: {text}"));
    }
    check_shape(doc.root_element()).map_err(|e| format!("{e}: {text}"))?;

    let parsed = parse_envelope(text);
    let code_ok = match (&case.expect, parsed.kind) {
        (Expect::ValidationError, ParsedKind::ValidationError) => true,
        (Expect::ToolError(code), ParsedKind::ToolError) => parsed.code == *code,
        _ => false,
    };
    if parsed.kind == ParsedKind::NotAnEnvelope || !code_ok {
        return Err(format!(
            "expected {:?}, got {:?} {}: {text}",
            case.expect, parsed.kind, parsed.code
        ));
    }
    if let Some(fields) = &case.fields {
        let names: Vec<&str> = parsed
            .fields
            .iter()
            .map(|field| field.path.as_str())
            .collect();
        if names != *fields {
            return Err(format!("fields {names:?}, expected {fields:?}: {text}"));
        }
    }
    let decoded: Vec<&str> = doc
        .descendants()
        .flat_map(|n| {
            n.text()
                .into_iter()
                .chain(n.attributes().map(|a| a.value()))
        })
        .collect();
    let decoded = decoded.join("\n");
    match case.contains.iter().find(|s| !decoded.contains(s.as_str())) {
        Some(missing) => Err(format!("{missing:?} is not echoed intact: {text}")),
        None => Ok(text.len()),
    }
}

/// Only the elements and attributes of ERRORS.md §3 and §5, in their places: injected markup
/// that escaped its text would show up here as an element, attribute, comment or text.
fn check_shape(root: Node<'_, '_>) -> Result<(), String> {
    let (attributes, children, required): (&[&str], &[&str], &str) = match root.tag_name().name() {
        "tool_error" => (
            &["code", "severity"],
            &[
                "message",
                "recovery",
                "available_actions",
                "details",
                "retry_after",
            ],
            "message",
        ),
        "validation_error" => (&["action"], &["field", "recovery"], "recovery"),
        other => return Err(format!("root element <{other}>")),
    };
    check_attributes(root, attributes)?;
    // Each child at most once and in the order of the contract; only `<field>` repeats.
    let mut last: Option<usize> = None;
    for child in container_children(root)? {
        let name = child.tag_name().name();
        let position = children.iter().position(|c| *c == name);
        let in_order = match (position, last) {
            (Some(i), Some(l)) => i > l || (i == l && name == "field"),
            (Some(_), None) => true,
            (None, _) => false,
        };
        if !in_order {
            return Err(format!("unexpected or misplaced <{name}>"));
        }
        last = position;
        match name {
            "available_actions" => {
                container_children(child)?.try_for_each(|a| leaf(a, "action", &[]))?
            }
            "details" => {
                container_children(child)?.try_for_each(|d| leaf(d, "detail", &["key"]))?
            }
            "field" => leaf(child, "field", &["name"])?,
            _ => leaf(child, name, &[])?,
        }
    }
    if root.children().any(|c| c.has_tag_name(required)) {
        Ok(())
    } else {
        Err(format!("no <{required}>"))
    }
}

/// The element children of a node whose text is only layout (LF and indentation).
fn container_children<'a, 'i>(
    node: Node<'a, 'i>,
) -> Result<impl Iterator<Item = Node<'a, 'i>>, String> {
    for child in node.children() {
        let layout = child.is_text()
            && child
                .text()
                .is_some_and(|t| t.trim_matches([' ', '\n']).is_empty());
        if !child.is_element() && !layout {
            return Err(format!(
                "stray {:?} in <{}>",
                child.node_type(),
                node.tag_name().name()
            ));
        }
    }
    Ok(node.children().filter(Node::is_element))
}

/// An element named `name` with exactly `attributes` and nothing but text inside.
fn leaf(node: Node<'_, '_>, name: &str, attributes: &[&str]) -> Result<(), String> {
    if node.tag_name().name() != name {
        return Err(format!(
            "<{}> where <{name}> belongs",
            node.tag_name().name()
        ));
    }
    check_attributes(node, attributes)?;
    match node.children().find(|c| c.node_type() != NodeType::Text) {
        Some(c) => Err(format!("<{name}> holds a {:?}", c.node_type())),
        None => Ok(()),
    }
}

fn check_attributes(node: Node<'_, '_>, expected: &[&str]) -> Result<(), String> {
    let names: Vec<&str> = node.attributes().map(|a| a.name()).collect();
    if names == expected && node.tag_name().namespace().is_none() {
        Ok(())
    } else {
        Err(format!(
            "<{}> has attributes {names:?}",
            node.tag_name().name()
        ))
    }
}

/// A message, shortened for a failure report.
fn brief(message: &Value) -> String {
    let text = message.to_string();
    match text.char_indices().nth(600) {
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
        None => text,
    }
}

#[tokio::test(flavor = "current_thread")]
async fn hostile_corpus_over_stdio() {
    let cases = load_corpus();
    assert!(!cases.is_empty(), "the corpus is empty");
    let trace = std::env::var_os("HOSTILE_TRACE").is_some();
    let started = Instant::now();
    let mut server = Server::start().await;
    let mut failures = Vec::new();
    let mut groups = BTreeMap::<&str, usize>::new();
    let mut largest = 0;
    for (i, case) in cases.iter().enumerate() {
        *groups.entry(case.group.as_str()).or_default() += 1;
        let case_started = Instant::now();
        match run(&mut server, case, i + 1, trace).await {
            Ok(size) => largest = largest.max(size),
            Err(why) => {
                failures.push(format!("{} [{}]: {why}", case.name, case.group));
                // The next case gets a fresh server, whatever state this one is in.
                server = Server::start().await;
            }
        }
        if trace {
            println!("  ({} ms)", case_started.elapsed().as_millis());
        }
    }
    // An empty line gets no answer, so a late answer to the last case would show up here.
    match exchange(&mut server, b"", false, 0).await {
        Ok(last) if last.answers.is_empty() => {}
        Ok(last) => failures.push(format!("late answers: {:?}", last.answers)),
        Err(why) => failures.push(why),
    }
    println!(
        "hostile corpus: {} cases run in {:.1} s, largest envelope {largest} bytes \
         (bound {ENVELOPE_MAX_BYTES}); per group: {groups:?}",
        cases.len(),
        started.elapsed().as_secs_f64(),
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The corpus over streamable HTTP, each case one POST, then a ping and a call: stateless, and
/// in one session. Where the transports legitimately differ, the difference is counted and
/// printed, not failed:
///
/// | stdio | HTTP | why |
/// |---|---|---|
/// | no answer (not JSON, not UTF-8, an empty line, JSON that is no message and has no id) | 400 with -32700 or -32600 and no id | an HTTP request always gets a response |
///
/// Notifications and responses get no JSON-RPC answer on either (202 over HTTP).
#[tokio::test(flavor = "current_thread")]
async fn hostile_corpus_over_http() {
    let cases = load_corpus();
    for stateless in [true, false] {
        let mut args = vec!["--max-body-bytes", "16777216"];
        if stateless {
            args.push("--stateless");
        }
        let billing = raw_http::Billing::start(&mcp_fusion_drivers::artifacts::billing(), &args)
            .await
            .expect("the billing server starts");
        let session = match stateless {
            true => None,
            false => Some(billing.open_session().await.expect("a session")),
        };
        let mut failures = Vec::new();
        let mut differences = BTreeMap::<&str, Vec<&str>>::new();
        for (i, case) in cases.iter().enumerate() {
            match run_http(&billing, session.as_deref(), case, i + 1).await {
                Ok(None) => {}
                Ok(Some(difference)) => differences.entry(difference).or_default().push(&case.name),
                Err(why) => failures.push(format!("{} [{}]: {why}", case.name, case.group)),
            }
        }
        let mode = if stateless { "stateless" } else { "session" };
        for (difference, names) in &differences {
            println!(
                "hostile corpus over HTTP ({mode}): {} cases: {difference}: {}",
                names.len(),
                names.join(", ")
            );
        }
        assert!(
            failures.is_empty(),
            "over HTTP ({mode}), {} of {} cases failed:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    }
}

/// One case over HTTP: `Ok(Some(why))` when it differs from stdio in a way HTTP requires.
async fn run_http(
    billing: &raw_http::Billing,
    session: Option<&str>,
    case: &Case,
    n: usize,
) -> Result<Option<&'static str>, String> {
    let headers: Vec<(&str, &str)> = match session {
        Some(id) => raw_http::session_headers(id).to_vec(),
        None => Vec::new(),
    };
    let (line, reply_id) = case.request(n as u64);
    let reply = billing.post(&headers, &line).await;
    if reply.status == 0 {
        return Err("the server closed the connection without an answer".into());
    }
    let ping = json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"});
    let health = json!({"jsonrpc": "2.0", "id": "health", "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "list_invoices"}}});
    let exchange = Exchange {
        answers: reply.messages(),
        ping: billing.post_json(&headers, &ping).await.message(),
        health: billing.post_json(&headers, &health).await.message(),
    };
    if !(200..300).contains(&reply.status) && exchange.answers.is_empty() {
        return Err(format!(
            "HTTP {} without a JSON-RPC answer: {}",
            reply.status, reply.body
        ));
    }
    match judge(case, &exchange, reply_id.as_ref(), false) {
        Ok(_) => Ok(None),
        Err(why) => {
            let unanswered_on_stdio = matches!(case.expect, Expect::NoAnswer);
            let [answer] = exchange.answers.as_slice() else {
                return Err(why);
            };
            let code = answer["error"]["code"].as_i64();
            if unanswered_on_stdio
                && reply.status == 400
                && answer["id"].is_null()
                && matches!(code, Some(-32700 | -32600))
            {
                still_serves(&exchange)?;
                return Ok(Some(
                    "unanswered on stdio, 400 with a JSON-RPC error over HTTP (every request gets a response)",
                ));
            }
            Err(format!("HTTP {}: {why}", reply.status))
        }
    }
}
