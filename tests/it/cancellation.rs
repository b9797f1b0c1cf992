//! A call the client cancels, seen from both ends: the server lets go of everything the call
//! held (its progress among it) so that it exits as soon as stdin closes, and the handler sees
//! its cancellation (`Context::cancelled`, `Context::cancellation`) to stop the work it spawned.
//! Over stdio in process on tokio's paused clock: a wait the server should not make would show
//! as time passed, not as a slow test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion::server::StdioOptions;
use mcp_fusion::{Context, Server, ToolError, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};
use tokio::io::{WriteHalf, split};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

/// A tool whose calls run until they are cancelled, reporting progress first.
struct Hang {
    /// Told when the work a call spawned saw its cancellation.
    stopped: mpsc::UnboundedSender<&'static str>,
    /// The contexts of the calls to `keep`, `expire`, as their handlers got them.
    kept: Arc<Mutex<Vec<Context>>>,
}

/// Calls that run until the client cancels them.
#[tool]
impl Hang {
    /// Reports progress, then waits until cancelled.
    #[action(timeout = "60s")]
    async fn wait(&self, f: Context) -> Result<&'static str, ToolError> {
        f.progress(1.0, None, Some("started"));
        std::future::pending().await
    }

    /// Spawns work that runs until the call is cancelled, then waits for it.
    #[action(timeout = "60s")]
    async fn spawn(&self, f: Context) -> Result<&'static str, ToolError> {
        let token = f.cancellation();
        let stopped = self.stopped.clone();
        let work = tokio::spawn(async move {
            token.cancelled().await;
            let _ = stopped.send("spawned work stopped");
        });
        f.progress(1.0, None, Some("spawned"));
        let _ = work.await;
        Ok("never: the call is cancelled first")
    }

    /// Keeps its context and answers.
    async fn keep(&self, f: Context) -> Result<&'static str, ToolError> {
        self.kept.lock().unwrap().push(f);
        Ok("kept")
    }

    /// Keeps its context and waits past its deadline.
    #[action(timeout = "1s")]
    async fn expire(&self, f: Context) -> Result<&'static str, ToolError> {
        self.kept.lock().unwrap().push(f);
        std::future::pending().await
    }
}

/// A server of [`Hang`] on an in-memory pipe, initialized.
struct Served {
    requests: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    serving: tokio::task::JoinHandle<()>,
    stopped: mpsc::UnboundedReceiver<&'static str>,
    kept: Arc<Mutex<Vec<Context>>>,
}

impl Served {
    async fn start(version: &str, fast_path: bool) -> Served {
        let (tell, stopped) = mpsc::unbounded_channel();
        let kept = Arc::default();
        let hang = Hang {
            stopped: tell,
            kept: Arc::clone(&kept),
        };
        let server = Server::builder("hang", "1")
            .tool(hang)
            .build()
            .expect("the server builds");
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = split(server_end);
        let mut options = StdioOptions::default();
        options.fast_path = fast_path;
        let serving = tokio::spawn(async move {
            server.serve_io(read, write, options).await.expect("served");
        });
        let (answers, requests) = split(client);
        let mut served = Served {
            requests,
            lines: BufReader::new(answers).lines(),
            serving,
            stopped,
            kept,
        };
        served
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            )
            .await;
        assert_eq!(served.next().await["id"], 0);
        served
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        served
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.requests.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = self.lines.next_line().await.unwrap().expect("a line");
        serde_json::from_str(&line).unwrap()
    }

    /// Calls `action` with a progress token (when `token`), and waits for its first progress.
    async fn call(&mut self, id: u64, action: &str, token: bool) {
        let mut params = json!({"name": "hang", "arguments": {"action": action}});
        if token {
            params["_meta"] = json!({"progressToken": id});
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        if token {
            let note = self.next().await;
            assert_eq!(note["method"], "notifications/progress", "{note}");
        }
    }

    async fn cancel(&mut self, id: u64) {
        self.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": id, "reason": "the user gave up"}}),
        )
        .await;
    }

    /// Closes stdin: how long serving took to return, and the lines written until stdout
    /// ended (which it must, at most a second after).
    async fn close(mut self) -> (Duration, Vec<Value>) {
        self.requests.shutdown().await.unwrap();
        drop(self.requests);
        let closed = Instant::now();
        timeout(Duration::from_secs(600), self.serving)
            .await
            .expect("serving returns")
            .unwrap();
        let took = closed.elapsed();
        let mut rest = Vec::new();
        let ended = timeout(Duration::from_secs(1), async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                rest.push(serde_json::from_str(&line).unwrap());
            }
        });
        assert!(
            ended.await.is_ok(),
            "stdout did not end after serving returned (after {took:?})"
        );
        (took, rest)
    }
}

/// The newcomer's notes server: a call that carried a `progressToken`, cancelled, then stdin
/// closed. The server exits at once, not after the action's 60 s timeout (the cancelled call's
/// progress forwarder kept the writer open), with nothing more written.
#[tokio::test(start_paused = true)]
async fn a_cancelled_call_with_a_progress_token_does_not_hold_the_exit() {
    for version in ["2025-06-18", "2025-11-25"] {
        for fast_path in [true, false] {
            let mut served = Served::start(version, fast_path).await;
            served.call(1, "wait", true).await;
            served.cancel(1).await;
            // A ping behind the cancellation: the cancellation has been read.
            served
                .send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
                .await;
            assert_eq!(served.next().await["id"], 2);
            let (took, rest) = served.close().await;
            let case = format!("{version}, fast path {fast_path}");
            assert_eq!(rest, Vec::<Value>::new(), "{case}");
            assert!(took < Duration::from_secs(1), "{case}: exit took {took:?}");
        }
    }
}

/// A handler that spawns work gives it `f.cancellation()`: the client's cancellation reaches
/// that work, though the handler's own future is dropped.
#[tokio::test(start_paused = true)]
async fn work_a_handler_spawned_sees_the_clients_cancellation() {
    for fast_path in [true, false] {
        let mut served = Served::start("2025-11-25", fast_path).await;
        served.call(1, "spawn", true).await;
        assert!(
            served.stopped.try_recv().is_err(),
            "not before the cancellation"
        );
        served.cancel(1).await;
        let seen = timeout(Duration::from_secs(5), served.stopped.recv()).await;
        assert_eq!(seen.expect("in time"), Some("spawned work stopped"));
        let (_, rest) = served.close().await;
        assert_eq!(
            rest,
            Vec::<Value>::new(),
            "the cancelled call is not answered"
        );
    }
}

/// The context of a call the handler finished is never cancelled; that of a call whose deadline
/// passed is, as its future is dropped.
#[tokio::test(start_paused = true)]
async fn only_a_call_stopped_before_its_handler_finished_is_cancelled() {
    let mut served = Served::start("2025-11-25", true).await;
    served.call(1, "keep", false).await;
    assert_eq!(served.next().await["result"]["isError"], false);
    served.call(2, "expire", false).await;
    let expired = served.next().await;
    assert_eq!(expired["id"], 2);
    assert_eq!(expired["result"]["isError"], true, "{expired}");
    let kept = served.kept.lock().unwrap().clone();
    assert_eq!(kept.len(), 2);
    assert!(!kept[0].is_cancelled(), "a finished call");
    assert!(kept[1].is_cancelled(), "a call past its deadline");
    let _ = served.close().await;
}
