//! The billing server as a child process spoken to in raw newline-delimited JSON-RPC, for
//! trying what a typed client never sends. Used by the `stdio_limits` driver and the
//! integration tests of stdio serving.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout;

use crate::measure;

/// Any error of the client.
pub type Error = Box<dyn std::error::Error>;

/// The server with its pipes.
#[derive(Debug)]
pub struct Billing {
    /// The server's process.
    pub child: Child,
    /// `None` once closed.
    pub stdin: Option<ChildStdin>,
    /// Its standard output, read line by line.
    pub stdout: BufReader<ChildStdout>,
}

impl Billing {
    /// Starts `binary` with `args`, without the MCP handshake; its log is discarded.
    pub fn spawn(binary: &Path, args: &[&str]) -> Result<Billing, Error> {
        let mut child = Command::new(binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        Ok(Billing {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().ok_or("no stdout")?),
            child,
        })
    }

    /// Starts `binary` with `args` and does the handshake.
    pub async fn start(binary: &Path, args: &[&str]) -> Result<Billing, Error> {
        let mut billing = Billing::spawn(binary, args)?;
        billing.initialize().await?;
        Ok(billing)
    }

    /// `initialize` (answered) and `notifications/initialized`.
    pub async fn initialize(&mut self) -> Result<(), Error> {
        self.send(&json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw-billing", "version": "1"}},
        }))
        .await?;
        let answer = self
            .receive(Duration::from_secs(10))
            .await
            .ok_or("initialize was not answered")?;
        if answer["id"] != "init" {
            return Err(format!("not the answer to initialize: {answer}").into());
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
    }

    /// Writes one line (the LF is added), waiting at most 10 s for the server to read it.
    pub async fn send_line(&mut self, line: &[u8]) -> Result<(), Error> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        let write = async {
            stdin.write_all(line).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        Ok(timeout(Duration::from_secs(10), write).await??)
    }

    /// Writes `message` as one line of JSON.
    pub async fn send(&mut self, message: &Value) -> Result<(), Error> {
        self.send_line(message.to_string().as_bytes()).await
    }

    /// The next message within `wait`; `None` when none came or stdout ended.
    pub async fn receive(&mut self, wait: Duration) -> Option<Value> {
        let mut line = Vec::new();
        match timeout(wait, self.stdout.read_until(b'\n', &mut line)).await {
            Ok(Ok(n)) if n > 0 => serde_json::from_slice(&line).ok(),
            _ => None,
        }
    }

    /// Every message until none comes for `quiet` or stdout ends.
    pub async fn receive_all(&mut self, quiet: Duration) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(message) = self.receive(quiet).await {
            all.push(message);
        }
        all
    }

    /// Writes `line` over and over for `duration` (or until the server stops reading), reading
    /// stdout or not; returns how many lines were written. Closes stdin.
    pub async fn flood(&mut self, line: &[u8], duration: Duration, read_stdout: bool) -> usize {
        let Some(mut stdin) = self.stdin.take() else {
            return 0;
        };
        const PER_CHUNK: usize = 1024;
        let chunk: Vec<u8> = std::iter::repeat_n([line, b"\n"].concat(), PER_CHUNK)
            .flatten()
            .collect();
        let mut written = 0;
        let writing = async {
            while stdin.write_all(&chunk).await.is_ok() {
                written += PER_CHUNK;
            }
        };
        let stdout = &mut self.stdout;
        let reading = async {
            let mut sink = Vec::new();
            loop {
                sink.clear();
                if !read_stdout || stdout.read_until(b'\n', &mut sink).await.unwrap_or(0) == 0 {
                    std::future::pending::<()>().await;
                }
            }
        };
        let _ = timeout(duration, async { tokio::join!(writing, reading) }).await;
        written
    }

    /// A `kB` field of the server's `/proc/PID/status` (`VmHWM`, `VmRSS`), in MiB. Linux only.
    pub fn status_mib(&self, field: &str) -> f64 {
        let pid = self.child.id().unwrap_or(0);
        measure::status_kib(pid, field).unwrap_or(0) as f64 / 1024.0
    }

    /// The server's peak resident memory so far, in MiB.
    pub fn peak_mib(&self) -> f64 {
        self.status_mib("VmHWM")
    }

    /// Each customer's `list_invoices` call in turn, and what each got.
    pub async fn list_as(&mut self, customers: &[&str]) -> Result<Vec<String>, Error> {
        let mut outcomes = Vec::new();
        for (id, customer) in customers.iter().enumerate() {
            let email = format!("{customer}@example.com");
            self.send(&call(id, "list_invoices", json!({"customer_email": email})))
                .await?;
            let answer = self.receive(Duration::from_secs(10)).await;
            outcomes.push(answer.as_ref().map_or("no answer".into(), outcome));
        }
        Ok(outcomes)
    }
}

/// A `tools/call` of a billing action.
pub fn call(id: impl Into<Value>, action: &str, mut arguments: Value) -> Value {
    arguments["action"] = action.into();
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": "billing", "arguments": arguments}})
}

/// `notifications/cancelled` for request `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id.into(), "reason": "the user gave up"}})
}

/// What an answer says: `ok`, the envelope's code, or `jsonrpc CODE`.
pub fn outcome(answer: &Value) -> String {
    let result = &answer["result"];
    if result["isError"] == true {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        return mcp_fusion::client::parse_envelope(text).code;
    }
    if result.is_object() {
        return "ok".into();
    }
    format!("jsonrpc {}", answer["error"]["code"])
}

/// A request nested deeper than serde_json reads, which the server itself answers -32600.
pub fn too_deep(id: u64) -> Vec<u8> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{{"x":{deep}}}}}}}"#)
        .into_bytes()
}

/// A `list_invoices` call of about `bytes` bytes, nearly all of them an array of zeros.
pub fn zeros(id: u64, bytes: usize) -> Vec<u8> {
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"billing","arguments":{{"action":"list_invoices","zeros":["#
    )
    .into_bytes();
    line.extend(std::iter::repeat_n(*b"0,", bytes.saturating_sub(200) / 2).flatten());
    line.extend_from_slice(b"0]}}}");
    line
}

/// `count` `list_invoices` calls of distinct customers, from id `from` on, as lines.
pub fn distinct_callers(from: usize, count: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in from..from + count {
        let email = format!("customer-{i}@example.com");
        let line = call(
            i,
            "list_invoices",
            json!({"customer_email": email, "limit": 1}),
        );
        bytes.extend(line.to_string().into_bytes());
        bytes.push(b'\n');
    }
    bytes
}
