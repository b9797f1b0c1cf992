//! `cargo xtask conformance`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, every server scenario) against `examples/everything`
//! over streamable HTTP.
//!
//! The suite and the Node.js it runs on (it needs Node 22 or later; the machine's may be older)
//! are npm packages pinned by `tests/conformance-suite/package-lock.json`, installed with
//! `npm ci`. The scenarios the example is known to fail are listed, each with its reason, in
//! `tests/conformance-suite/expected-failures.yml`: the run fails when any other scenario fails
//! or warns, and when a listed one passes (the list must then lose it), as the suite's own
//! `--expected-failures` decides.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use super::{Error, cargo, npm_ci, output, workspace};

/// Where the suite is installed, from the workspace's root.
const SUITE: &str = "tests/conformance-suite";

/// What `examples/everything` prints on stderr once it listens, before its URL.
const LISTENING: &str = "streamable HTTP on ";

/// Installs the suite and its Node.js from the lockfile, when missing or out of date.
pub(crate) fn install() -> Result<(), Error> {
    npm_ci(
        SUITE,
        "@modelcontextprotocol/conformance",
        "the MCP conformance suite",
    )?;
    // The `node` package puts its binary in place with an install script.
    if !bin().join("node").is_file() {
        return Err(format!(
            "{SUITE}/node_modules/.bin/node is missing: npm ran without install scripts \
             (the `node` package installs its binary with one); run `npm ci` there with them"
        )
        .into());
    }
    Ok(())
}

/// Builds and starts `examples/everything` on a free loopback port, runs every server scenario
/// of the suite against it, and stops it.
pub(crate) fn run() -> Result<(), Error> {
    let example = build_example()?;
    let results = workspace().join("target").join("conformance");
    // Only this run's results: the suite names each scenario's folder by the time.
    if results.exists() {
        std::fs::remove_dir_all(&results)?;
    }
    std::fs::create_dir_all(&results)?;
    let server = Server::start(&example, &results.join("server.log"))?;
    eprintln!(
        "xtask: the MCP conformance suite against examples/everything at {}",
        server.url
    );
    let suite = workspace().join(SUITE);
    let system = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin()).chain(std::env::split_paths(&system)))?;
    // The suite's own `#!/usr/bin/env node` finds the pinned Node.js first on the PATH.
    let status = Command::new(bin().join("conformance"))
        .args(["server", "--url", &server.url, "--suite", "all"])
        .arg("--expected-failures")
        .arg(suite.join("expected-failures.yml"))
        .arg("-o")
        .arg(results.join("scenarios"))
        .env("PATH", path)
        .current_dir(&suite)
        .status();
    drop(server);
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!(
            "the MCP conformance suite failed ({status}): above, the scenarios that failed or \
             warned unexpectedly, or the expected failures that now pass; each scenario's checks \
             are in {}, the server's log in {}",
            results.join("scenarios").display(),
            results.join("server.log").display()
        )
        .into()),
        Err(e) => Err(format!("the MCP conformance suite did not start: {e}").into()),
    }
}

/// The suite's `node_modules/.bin`.
fn bin() -> PathBuf {
    workspace().join(SUITE).join("node_modules").join(".bin")
}

/// Builds `examples/everything` and gives its executable, where Cargo put it.
fn build_example() -> Result<PathBuf, Error> {
    // Cargo's progress and diagnostics as usual on stderr; its messages, as JSON, on stdout.
    let messages = output(
        cargo()
            .args(["build", "--example", "everything"])
            .arg("--message-format=json-render-diagnostics")
            .stderr(Stdio::inherit()),
    )?;
    messages
        .lines()
        .filter(|line| line.contains(r#""reason":"compiler-artifact""#))
        .filter(|line| {
            line.contains(r#""kind":["example"]"#) && line.contains(r#""name":"everything""#)
        })
        .find_map(|line| json_string(line, "executable"))
        .map(PathBuf::from)
        .ok_or_else(|| "cargo built examples/everything but named no executable".into())
}

/// The string value of `"key":` in one line of Cargo's JSON messages, its escapes undone
/// (`\uXXXX` aside, which no path Cargo writes here needs).
fn json_string(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!(r#""{key}":""#))? + key.len() + 4;
    let mut value = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => value.push(match chars.next()? {
                'n' => '\n',
                't' => '\t',
                other => other,
            }),
            c => value.push(c),
        }
    }
    None
}

/// `examples/everything` serving streamable HTTP, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// Starts it on a free loopback port (the system chooses), and waits until it listens: it
    /// prints its address then. Everything it logs goes to `log`.
    fn start(example: &Path, log: &Path) -> Result<Self, Error> {
        let mut child = Command::new(example)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{} did not start: {e}", example.display()))?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut log = std::fs::File::create(log)?;
        let (listening, url) = mpsc::channel();
        // Copies its log until it exits, telling the address on the way.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if let Some(at) = line.find(LISTENING) {
                    let _ = listening.send(line[at + LISTENING.len()..].trim().to_owned());
                }
                let _ = writeln!(log, "{line}");
            }
        });
        let mut server = Server {
            child,
            url: String::new(),
        };
        // The sender is dropped, and this fails, when the server exits without listening.
        server.url = url.recv().map_err(|_| {
            let status = server
                .child
                .wait()
                .map(|s| s.to_string())
                .unwrap_or_default();
            format!("examples/everything exited before it listened ({status})")
        })?;
        Ok(server)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
