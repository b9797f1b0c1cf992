//! The billing server on streamable HTTP as a child process, spoken to in raw HTTP/1.1 where a
//! client library would not misbehave. Used by the `http_limits` driver and the
//! integration tests of HTTP serving.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::time::timeout;

use crate::measure;

/// Any error of the client.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The server, where it listens, and its log.
#[derive(Debug)]
pub struct Billing {
    /// The server's process.
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// What it logs after the line that says where it listens, once it has exited.
    pub log: tokio::task::JoinHandle<Vec<u8>>,
}

impl Billing {
    /// Starts `binary --http 127.0.0.1:0` with `args`.
    pub async fn start(binary: &Path, args: &[&str]) -> Result<Billing, Error> {
        Billing::start_with_env(&[], binary, args).await
    }

    /// Starts it with these environment variables added (`LD_PRELOAD`, `RUST_LOG`).
    pub async fn start_with_env(
        env: &[(&str, &str)],
        binary: &Path,
        args: &[&str],
    ) -> Result<Billing, Error> {
        let mut child = Command::new(binary)
            .envs(env.iter().copied())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?);
        let mut first = String::new();
        timeout(Duration::from_secs(10), stderr.read_line(&mut first)).await??;
        let addr = first
            .trim()
            .strip_prefix("billing: streamable HTTP on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .ok_or_else(|| format!("unexpected first line: {first}"))?
            .to_owned();
        let log = tokio::spawn(async move {
            let mut log = Vec::new();
            let _ = stderr.read_to_end(&mut log).await;
            log
        });
        Ok(Billing { child, addr, log })
    }

    /// A `kB` field of the server's `/proc/PID/status` (`VmHWM`, `VmRSS`), in MiB. Linux only.
    pub fn status_mib(&self, field: &str) -> u64 {
        let pid = self.child.id().unwrap_or(0);
        measure::status_kib(pid, field).unwrap_or(0) / 1024
    }

    /// The server's peak resident memory so far, in MiB.
    pub fn peak_mib(&self) -> u64 {
        self.status_mib("VmHWM")
    }

    /// Posts `body` to the endpoint with `headers`, on a connection of its own.
    pub async fn post(&self, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        post(&self.addr, headers, body).await
    }

    /// Posts `message` as JSON.
    pub async fn post_json(&self, headers: &[(&str, &str)], message: &Value) -> Reply {
        self.post(headers, message.to_string().as_bytes()).await
    }

    /// `initialize` on a session of its own; its id.
    pub async fn open_session(&self) -> Option<String> {
        let reply = self.post_json(&[], &initialize()).await;
        let session = reply.header("mcp-session-id")?.to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post_json(&session_headers(&session), &initialized)
            .await;
        Some(session)
    }
}

/// The headers of a request in session `id`.
pub fn session_headers(id: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

/// A response: status, headers (names in lower case), body.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Reply {
    /// The first header named `name` (in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: the body itself, or each event of a stream.
    pub fn messages(&self) -> Vec<Value> {
        if self.header("content-type") == Some("text/event-stream") {
            return self
                .body
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str(data).ok())
                .collect();
        }
        serde_json::from_str(&self.body).into_iter().collect()
    }

    /// The one JSON-RPC message of the body (panics when there is none).
    pub fn message(&self) -> Value {
        match self.messages().into_iter().next() {
            Some(message) => message,
            None => panic!("no JSON-RPC message: {} {}", self.status, self.body),
        }
    }
}

/// The head of a POST to `/mcp` on a connection of its own (`Connection: close`), with
/// `headers` and a body of `body_len` bytes to follow, as a streamable HTTP client sends it.
pub fn post_head(headers: &[(&str, &str)], body_len: usize) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {body_len}\r\n\
         Connection: close\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// One POST on a connection of its own (`Connection: close`), read until the server closes it.
/// A connection that fails reads as status 0.
pub async fn post(addr: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return read_reply_of(Vec::new());
    };
    if stream
        .write_all(post_head(headers, body.len()).as_bytes())
        .await
        .is_ok()
    {
        // The server may answer (413, 503) before it reads the whole body.
        let _ = stream.write_all(body).await;
    }
    read_reply(&mut stream).await
}

/// One GET of `path` on a connection of its own (`Connection: close`).
pub async fn get(addr: &str, path: &str) -> Reply {
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        return read_reply_of(Vec::new());
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return read_reply_of(Vec::new());
    }
    read_reply(&mut stream).await
}

/// A whole HTTP/1.1 response, read until the server closes the connection (a reset after the
/// answer counts as closing), within 30 s.
pub async fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let reading = async {
        let mut buf = [0u8; 16384];
        while let Ok(n @ 1..) = stream.read(&mut buf).await {
            raw.extend_from_slice(&buf[..n]);
        }
    };
    let _ = timeout(Duration::from_secs(30), reading).await;
    read_reply_of(raw)
}

fn read_reply_of(raw: Vec<u8>) -> Reply {
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// The content of a chunked body.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}

/// One whole HTTP/1.1 response on a connection kept alive: its head, then its body by its
/// `Content-Length` or to the last of its chunks, within 5 s.
pub async fn read_response(stream: &mut TcpStream) -> Result<Reply, Error> {
    let mut read = Vec::new();
    let mut buf = [0u8; 8192];
    // Once the head is in (read once): the response's whole length, or `None` when it ends
    // with its last chunk.
    let mut framing = None;
    loop {
        if framing.is_none()
            && let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n")
        {
            let head = read_reply_of(read[..end].to_vec());
            let length = head.header("content-length").and_then(|v| v.parse().ok());
            framing = Some(length.map(|len: usize| end + 4 + len));
        }
        let whole = match framing {
            Some(Some(total)) => read.len() >= total,
            Some(None) => read.ends_with(b"\r\n0\r\n\r\n"),
            None => false,
        };
        if whole {
            return Ok(read_reply_of(read));
        }
        let n = timeout(Duration::from_secs(5), stream.read(&mut buf)).await??;
        if n == 0 {
            return Err(format!("closed: {}", String::from_utf8_lossy(&read)).into());
        }
        read.extend_from_slice(&buf[..n]);
    }
}

/// An `initialize` request (id 1).
pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "1"}}})
}

/// A `get_invoice` call with the JSON-RPC id `id`.
pub fn get_invoice(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "billing", "arguments": {"action": "get_invoice", "id": "inv_2026_0001"}}})
}

/// A `list_invoices` call of about `bytes` bytes, nearly all of them an array of zeros.
pub fn zeros(bytes: usize) -> Vec<u8> {
    let mut body = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"billing","arguments":{"action":"list_invoices","z":["#.to_vec();
    body.extend(std::iter::repeat_n(*b"0,", bytes.saturating_sub(200) / 2).flatten());
    body.extend_from_slice(b"0]}}}");
    body
}

/// Keep-alive connections to one endpoint, each carrying one request at a time: what a load
/// driver posts prepared bodies through, with the plain headers of a client of MCP 2025-06-18
/// (or another version, [`Pool::with_version`]) on a stateless server (no session, no
/// initialize).
#[derive(Debug)]
pub struct Pool {
    addr: String,
    head: String,
    idle: std::sync::Mutex<Vec<BufReader<TcpStream>>>,
}

impl Pool {
    /// Connections to the endpoint at `url` (`http://HOST:PORT/PATH`), opened when needed.
    pub fn new(url: &str) -> Result<Pool, Error> {
        Pool::with_version(url, "2025-06-18")
    }

    /// The same, sending `MCP-Protocol-Version: {version}`.
    pub fn with_version(url: &str, version: &str) -> Result<Pool, Error> {
        let rest = url.strip_prefix("http://").ok_or("not an http:// URL")?;
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {version}\r\n"
        );
        Ok(Pool {
            addr: addr.to_owned(),
            head,
            idle: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The same connections, each request sending `name: value` too (`Mcp-Session-Id`).
    pub fn with_header(mut self, name: &str, value: &str) -> Pool {
        self.head.push_str(&format!("{name}: {value}\r\n"));
        self
    }

    /// `initialize` and `notifications/initialized` of a 2025-11-25 client named `client`:
    /// the same connections, in the session it opened.
    pub async fn in_session(self, client: &str) -> Result<Pool, Error> {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": client, "version": "1"}}});
        let (headers, _) = self.exchange(initialize.to_string().as_bytes(), "").await?;
        let session = headers
            .iter()
            .find(|(name, _)| name == "mcp-session-id")
            .map(|(_, value)| value.clone())
            .ok_or("initialize opened no session")?;
        let pool = self.with_header("Mcp-Session-Id", &session);
        pool.post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await?;
        Ok(pool)
    }

    /// POSTs `body` on a connection of its own and leaves the answer open once it holds
    /// `until` (a `subscriptions/listen` stream, acknowledged): the connection, to hold or drop.
    pub async fn open_stream(
        &self,
        body: &[u8],
        headers: &str,
        until: &str,
    ) -> Result<TcpStream, Error> {
        let mut stream = TcpStream::connect(&self.addr).await?;
        let mut request = Vec::with_capacity(self.head.len() + 32 + body.len());
        request.extend_from_slice(self.head.as_bytes());
        request.extend_from_slice(headers.as_bytes());
        request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        request.extend_from_slice(body);
        stream.write_all(&request).await?;
        let mut read = Vec::new();
        let mut buf = [0u8; 4096];
        while memchr_str(&read, until).is_none() {
            let n = timeout(Duration::from_secs(10), stream.read(&mut buf)).await??;
            if n == 0 {
                return Err(format!("closed: {}", String::from_utf8_lossy(&read)).into());
            }
            read.extend_from_slice(&buf[..n]);
        }
        if !read.starts_with(b"HTTP/1.1 200") {
            return Err(format!("not a stream: {}", String::from_utf8_lossy(&read)).into());
        }
        Ok(stream)
    }

    /// POSTs `body` and reads the answer's body (its `Content-Length`, or its chunks: the
    /// event stream of a server with sessions, read to its end). A kept connection the server
    /// closed while it was idle (servers close idle connections) is replaced by a new one, as
    /// HTTP clients do: the request is sent again on it.
    pub async fn post(&self, body: &[u8]) -> Result<Vec<u8>, Error> {
        self.post_with(body, "").await
    }

    /// The same, with more header lines (each ending in `\r\n`).
    pub async fn post_with(&self, body: &[u8], headers: &str) -> Result<Vec<u8>, Error> {
        Ok(self.exchange(body, headers).await?.1)
    }

    /// The same; the answer's headers (names in lower case) too. A `2xx` status is an answer
    /// (`202 Accepted` has no body); any other, an error.
    pub async fn exchange(
        &self,
        body: &[u8],
        headers: &str,
    ) -> Result<(Vec<(String, String)>, Vec<u8>), Error> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let mut request = Vec::with_capacity(self.head.len() + 32 + body.len());
        request.extend_from_slice(self.head.as_bytes());
        request.extend_from_slice(headers.as_bytes());
        request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        request.extend_from_slice(body);
        let mut status = String::new();
        let mut stream = match idle {
            Some(mut kept) => {
                let sent = kept.get_mut().write_all(&request).await.is_ok();
                if sent && kept.read_line(&mut status).await.unwrap_or(0) > 0 {
                    kept
                } else {
                    // Closed by the server before it read anything of this request.
                    status.clear();
                    self.send_new(&request, &mut status).await?
                }
            }
            None => self.send_new(&request, &mut status).await?,
        };
        if !status.starts_with("HTTP/1.1 2") {
            return Err(format!("answered {}", status.trim()).into());
        }
        let mut length = None;
        let mut chunked = false;
        let mut read_headers = Vec::new();
        loop {
            let mut line = String::new();
            if stream.read_line(&mut line).await? == 0 {
                return Err("closed before the body".into());
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
                if name == "content-length" {
                    length = value.parse::<usize>().ok();
                }
                if name == "transfer-encoding" && value.eq_ignore_ascii_case("chunked") {
                    chunked = true;
                }
                read_headers.push((name, value.to_owned()));
            }
        }
        let answer = if chunked {
            read_chunks(&mut stream).await?
        } else {
            let mut answer = vec![0; length.unwrap_or(0)];
            stream.read_exact(&mut answer).await?;
            answer
        };
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(stream);
        Ok((read_headers, answer))
    }

    /// Sends `request` on a new connection and reads the status line into `status`.
    async fn send_new(
        &self,
        request: &[u8],
        status: &mut String,
    ) -> Result<BufReader<TcpStream>, Error> {
        let mut stream = BufReader::new(TcpStream::connect(&self.addr).await?);
        stream.get_mut().write_all(request).await?;
        stream.read_line(status).await?;
        Ok(stream)
    }
}

/// A chunked body, read to its last chunk.
async fn read_chunks(stream: &mut BufReader<TcpStream>) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if stream.read_line(&mut size).await? == 0 {
            return Err("closed inside a chunked body".into());
        }
        let size = usize::from_str_radix(size.trim(), 16)?;
        let mut chunk = vec![0; size + 2];
        stream.read_exact(&mut chunk).await?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// The JSON-RPC message of an answer's body: the body itself (JSON), or the first event of a
/// stream whose data is not empty (the priming event's is).
pub fn json_of(body: &str) -> &str {
    if body.trim_start().starts_with('{') {
        return body;
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| !data.is_empty())
        .unwrap_or("")
}

fn memchr_str(haystack: &[u8], needle: &str) -> Option<usize> {
    haystack
        .windows(needle.len().max(1))
        .position(|w| w == needle.as_bytes())
}
