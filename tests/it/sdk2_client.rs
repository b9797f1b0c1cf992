//! The official TypeScript MCP SDK 2 client (`tests/sdk2-client/listen.mjs`, npm
//! `@modelcontextprotocol/client` 2.4.0) listens to the watched resource of `examples/everything`
//! over streamable HTTP: at 2026-07-28 (`server/discover`, then a `subscriptions/listen` stream)
//! and in a 2025-11-25 session (`resources/subscribe`). It runs on the Node.js 22 that
//! `tests/conformance-suite` pins (the SDK needs Node 20 or later); `cargo xtask setup` installs
//! both.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_fusion_drivers::artifacts;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::timeout;

use crate::support::PATIENCE;

const WATCHED: &str = "test://watched-resource";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The SDK client's folder and the Node.js to run it with; fails when either is not installed.
fn installed() -> (PathBuf, PathBuf) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let client = workspace.join("tests/sdk2-client");
    assert!(
        client
            .join("node_modules/@modelcontextprotocol/client")
            .is_dir(),
        "the official TypeScript MCP SDK 2 client is not installed: run `cargo xtask setup`"
    );
    let node = workspace.join("tests/conformance-suite/node_modules/.bin/node");
    assert!(
        node.is_file(),
        "the Node.js of tests/conformance-suite is not installed: run `cargo xtask setup`"
    );
    (client, node)
}

/// `examples/everything` over streamable HTTP on a free port, its watched resource changing
/// every 0.2 s; its stderr is kept, for a failure's message.
struct Everything {
    url: String,
    log: Arc<Mutex<Vec<String>>>,
    _child: Child,
}

impl Everything {
    async fn start() -> Self {
        let mut child = Command::new(artifacts::example("everything"))
            .args(["--http", "127.0.0.1:0", "--update-every", "0.2"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("examples/everything starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = timeout(PATIENCE, lines.next_line())
                .await
                .expect("examples/everything says where it listens")
                .unwrap()
                .expect("examples/everything runs");
            if let Some(url) = line.strip_prefix("everything: streamable HTTP on ") {
                break url.to_owned();
            }
        };
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                kept.lock().unwrap().push(line);
            }
        });
        Self {
            url,
            log,
            _child: child,
        }
    }

    /// Runs `listen.mjs` for `era` against this server: its JSON lines, once it exited 0.
    async fn listen(&self, era: &str) -> Vec<Value> {
        let (client, node) = installed();
        // The script bounds its own wait (20 s); this bounds a hung Node.js.
        let output = timeout(
            Duration::from_secs(60),
            Command::new(node)
                .arg(client.join("listen.mjs"))
                .args([&self.url, era])
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the SDK client finishes within a minute")
        .expect("node runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let explain = || {
            format!(
                "{stdout}\nstderr: {}\nthe server's log: {:?}",
                String::from_utf8_lossy(&output.stderr),
                self.log.lock().unwrap()
            )
        };
        assert_eq!(output.status.code(), Some(0), "{}", explain());
        stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}\n{}", explain()))
            })
            .collect()
    }
}

/// The values of `key` in the lines that have it, in order.
fn each<'a>(lines: &'a [Value], key: &str) -> Vec<&'a Value> {
    lines.iter().filter_map(|line| line.get(key)).collect()
}

/// The one line with `key`.
fn only<'a>(lines: &'a [Value], key: &str) -> &'a Value {
    match each(lines, key)[..] {
        [one] => one,
        _ => panic!("not one {key:?} line: {lines:#?}"),
    }
}

/// The resource updates the SDK's handler received: two of the watched resource.
fn assert_two_updates(lines: &[Value]) {
    assert_eq!(
        each(lines, "updated"),
        [&json!({"uri": WATCHED}), &json!({"uri": WATCHED})],
        "{lines:#?}"
    );
    assert_eq!(only(lines, "done")["updates"], 2, "{lines:#?}");
}

#[tokio::test]
async fn the_official_sdk2_client_listens_to_a_resource_at_2026_07_28() {
    let everything = Everything::start().await;
    let lines = everything.listen("2026-07-28").await;
    let connected = only(&lines, "connected");
    assert_eq!(connected["era"], "modern", "{lines:#?}");
    assert_eq!(connected["protocolVersion"], "2026-07-28", "{lines:#?}");

    // The listen request, and its HTTP request's standard headers.
    let sent = each(&lines, "sent");
    let listen = sent
        .iter()
        .find(|sent| sent["method"] == "subscriptions/listen")
        .unwrap_or_else(|| panic!("no subscriptions/listen sent: {sent:#?}"));
    assert_eq!(
        listen["params"]["notifications"],
        json!({"resourceSubscriptions": [WATCHED]})
    );
    let id = &listen["id"];
    let http = each(&lines, "http");
    assert!(
        http.iter().any(|request| **request
            == json!({"method": "POST", "mcpMethod": "subscriptions/listen", "mcpName": null,
                "protocolVersion": "2026-07-28", "status": 200})),
        "{http:#?}"
    );
    assert_eq!(
        only(&lines, "listening")["honoredFilter"],
        json!({"resourceSubscriptions": [WATCHED]})
    );

    // On the stream: the acknowledgement first, then the updates, each tagged with the
    // subscription (the listen request's id).
    let received = each(&lines, "received");
    let (ack, updates) = received.split_first().expect("a message on the stream");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{received:#?}"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], *id, "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": [WATCHED]})
    );
    assert!(updates.len() >= 2, "{received:#?}");
    for update in updates {
        assert_eq!(
            update["method"], "notifications/resources/updated",
            "{update}"
        );
        assert_eq!(update["params"]["uri"], WATCHED, "{update}");
        assert_eq!(update["params"]["_meta"][SUBSCRIPTION_ID], *id, "{update}");
    }
    assert_two_updates(&lines);
    assert_eq!(only(&lines, "done")["closed"], "local", "{lines:#?}");
}

#[tokio::test]
async fn the_official_sdk2_client_subscribes_to_a_resource_in_a_2025_11_25_session() {
    let everything = Everything::start().await;
    let lines = everything.listen("2025-11-25").await;
    let connected = only(&lines, "connected");
    assert_eq!(connected["era"], "legacy", "{lines:#?}");
    assert_eq!(connected["protocolVersion"], "2025-11-25", "{lines:#?}");

    let sent = each(&lines, "sent");
    let subscribe = sent
        .iter()
        .find(|sent| sent["method"] == "resources/subscribe")
        .unwrap_or_else(|| panic!("no resources/subscribe sent: {sent:#?}"));
    assert_eq!(subscribe["params"], json!({"uri": WATCHED}));
    let received = each(&lines, "received");
    let (answer, updates) = received.split_first().expect("an answer");
    assert_eq!(
        **answer,
        json!({"jsonrpc": "2.0", "id": subscribe["id"], "result": {}}),
        "{received:#?}"
    );
    // The updates, on the session's stream, untagged (no subscriptions in this era); then the
    // unsubscribe's answer.
    let updates: Vec<_> = updates
        .iter()
        .filter(|message| message.get("method").is_some())
        .collect();
    assert!(updates.len() >= 2, "{received:#?}");
    for update in updates {
        assert_eq!(
            **update,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": WATCHED}})
        );
    }
    assert!(
        sent.iter()
            .any(|sent| sent["method"] == "resources/unsubscribe"),
        "{sent:#?}"
    );
    assert_two_updates(&lines);
}
