//! `cargo xtask conformance`: the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) against `examples/everything` over streamable HTTP,
//! once for each requirement set it runs: `--requirements 2025-11-25` (the stateful wire,
//! `initialize` and sessions) and `--requirements 2026-07-28` (the stateless wire), each on a
//! server of its own, its results in `target/conformance/<revision>/` (a folder of checks per
//! scenario, the suite's output in `suite.log`, the server's log in `server.log`). Then the
//! client scenarios of each set (`conformance client --command ...`), the suite running
//! `examples/conformance_client` against a mock server per scenario, its results in
//! `target/conformance/<revision>/client/` (a folder of checks, stdout and stderr per scenario).
//!
//! The suite and the Node.js it runs on (it needs Node 22 or later; the machine's may be older)
//! are npm packages pinned by `tests/conformance-suite/package-lock.json`, installed with
//! `npm ci`. Under `--requirements` the suite's exit code counts only the scenarios the revision
//! scores, so xtask judges every scenario it ran, scored or not, from its `checks.json`
//! (`conformance/judge.rs`): a FAILURE or a WARNING fails the run unless it is a known failure
//! of `tests/conformance-suite/expected-failures.yml` (`conformance/baseline.rs`), each listed
//! with its reason; a known failure that passes now fails it too (the list must then lose it).

mod baseline;
mod json;
mod judge;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use super::{Error, cargo, npm_ci, output, workspace};
use baseline::Side;
use judge::{Listed, Ran, Verdict};

/// Where the suite is installed, from the workspace's root.
const SUITE: &str = "tests/conformance-suite";

/// The known failures, from the workspace's root.
const EXPECTED_FAILURES: &str = "tests/conformance-suite/expected-failures.yml";

/// The requirement sets run, in order: each a revision of MCP the suite knows.
const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

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

/// Builds `examples/everything` and `examples/conformance_client`, runs each requirement set of
/// the suite against the server (a server of its own each), then against the client, and
/// judges every scenario they ran.
pub(crate) fn run() -> Result<(), Error> {
    let known = std::fs::read_to_string(workspace().join(EXPECTED_FAILURES))?;
    let known = baseline::parse(&known).map_err(|e| format!("{EXPECTED_FAILURES}: {e}"))?;
    for entry in &known {
        if let baseline::Scope::Revision(revision) = &entry.scope
            && !REVISIONS.contains(&revision.as_str())
        {
            return Err(format!(
                "{EXPECTED_FAILURES}: {entry} is in {}@{revision}, a requirement set xtask \
                 does not run (it runs {})",
                entry.side,
                REVISIONS.join(" and ")
            )
            .into());
        }
    }
    let built = build_examples()?;
    let results = workspace().join("target").join("conformance");
    // Only this run's results: the suite names each scenario's folder by the time.
    if results.exists() {
        std::fs::remove_dir_all(&results)?;
    }
    let mut problems = Vec::new();
    for side in [Side::Server, Side::Client] {
        let mut runs = Vec::new();
        for revision in REVISIONS {
            let dir = match side {
                Side::Server => results.join(revision),
                Side::Client => results.join(revision).join("client"),
            };
            std::fs::create_dir_all(&dir)?;
            let (ran, status) = run_revision(side, &built, revision, &dir)?;
            let verdict = judge::judge(side, revision, &ran, &known);
            report(side, revision, &verdict, &dir);
            // The suite's exit code says whether a scored scenario has a FAILURE: another than
            // the checks xtask read say is a suite that failed otherwise.
            let said = i32::from(verdict.scored_failure);
            if status != Some(said) {
                let status = status.map_or("by a signal".to_owned(), |code| format!("with {code}"));
                problems.push(format!(
                    "{side}@{revision}: the suite exited {status} where its checks say {said}: \
                     see {}",
                    dir.join("suite.log").display()
                ));
            }
            problems.extend(verdict.problems);
            runs.push(ran);
        }
        let ran: Vec<&[Ran]> = runs.iter().map(Vec::as_slice).collect();
        problems.extend(judge::unrun(&known, side, &ran));
    }
    if problems.is_empty() {
        eprintln!("xtask: the MCP conformance suite passes, its known failures aside");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("  ✗ {problem}");
    }
    Err(format!(
        "the MCP conformance suite failed: {} problem(s) above (a failure or warning that is \
         not in {EXPECTED_FAILURES}, or a known failure that passes now or was not reported); \
         the results are in {}",
        problems.len(),
        results.display()
    )
    .into())
}

/// Runs the requirement set of `revision` on `side` (against a server of its own, or with the
/// conformance client), its results and logs in `dir`: every scenario it runs, with its
/// checks, and the suite's exit code.
fn run_revision(
    side: Side,
    built: &Built,
    revision: &str,
    dir: &Path,
) -> Result<(Vec<Ran>, Option<i32>), Error> {
    let listing = output(suite()?.args(["list", "--requirements", revision]))?;
    let listed = judge::requirement_set(&listing, side);
    if listed.is_empty() {
        return Err(format!("the suite lists no {side} scenario for {revision}").into());
    }
    let mut command = suite()?;
    // Stopped when dropped, once the suite is done.
    let mut server = None;
    match side {
        Side::Server => {
            let started = Server::start(&built.everything, &dir.join("server.log"))?;
            eprintln!(
                "xtask: the MCP conformance suite, --requirements {revision} ({} server \
                 scenarios), against examples/everything at {}",
                listed.len(),
                started.url
            );
            command.args(["server", "--url", &started.url]);
            server = Some(started);
        }
        Side::Client => {
            // The suite splits the command at spaces.
            let client = built.client.to_str().filter(|path| !path.contains(' '));
            let client = client.ok_or_else(|| {
                format!(
                    "the suite cannot run {}: its path has a space or is not UTF-8",
                    built.client.display()
                )
            })?;
            eprintln!(
                "xtask: the MCP conformance suite, --requirements {revision} ({} client \
                 scenarios), running examples/conformance_client",
                listed.len()
            );
            command.args(["client", "--command", client]);
        }
    }
    let log = std::fs::File::create(dir.join("suite.log"))?;
    let status = command
        .args(["--requirements", revision])
        .arg("-o")
        .arg(dir)
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .map_err(|e| format!("the MCP conformance suite did not start: {e}"))?;
    drop(server);
    let ran = listed
        .into_iter()
        .map(|listed: Listed| {
            let checks = match judge::results_of(dir, side, &listed.name) {
                None => Err(format!(
                    "the suite wrote no folder for it in {}: see suite.log there",
                    dir.display()
                )),
                Some(folder) => match std::fs::read_to_string(folder.join("checks.json")) {
                    Err(e) => Err(format!(
                        "{}: {e} (the scenario did not run to its end: see suite.log)",
                        folder.join("checks.json").display()
                    )),
                    Ok(text) => judge::checks(&text)
                        .map_err(|e| format!("{}: {e}", folder.join("checks.json").display())),
                },
            };
            Ran { listed, checks }
        })
        .collect();
    Ok((ran, status.code()))
}

/// The suite's command: its own `#!/usr/bin/env node` finds the pinned Node.js first on the
/// PATH.
fn suite() -> Result<Command, Error> {
    let system = std::env::var_os("PATH").unwrap_or_default();
    let paths = std::iter::once(bin()).chain(std::env::split_paths(&system));
    let path = std::env::join_paths(paths)
        .map_err(|e| format!("{} cannot lead the PATH: {e}", bin().display()))?;
    let mut command = Command::new(bin().join("conformance"));
    command
        .env("PATH", path)
        .current_dir(workspace().join(SUITE));
    Ok(command)
}

/// Prints what the run of `revision` on `side` showed.
fn report(side: Side, revision: &str, verdict: &Verdict, dir: &Path) {
    let [success, failure, warning, skipped] = verdict.checks;
    eprintln!(
        "xtask: {side}@{revision}: {} scenarios ({} scored): {} passed, {} failed, {} of them known; \
         checks: {success} passed, {failure} failed, {warning} warned, {skipped} skipped \
         (in {})",
        verdict.scenarios,
        verdict.scored,
        verdict.scenarios - verdict.failed,
        verdict.failed,
        verdict.failed_as_known,
        dir.display()
    );
    for known in &verdict.expected {
        eprintln!("  ~ {known}");
    }
}

/// The suite's `node_modules/.bin`.
fn bin() -> PathBuf {
    workspace().join(SUITE).join("node_modules").join(".bin")
}

/// The examples the suite runs, where Cargo put them.
struct Built {
    /// `examples/everything`, the server.
    everything: PathBuf,
    /// `examples/conformance_client`, the client.
    client: PathBuf,
}

/// Builds `examples/everything` and `examples/conformance_client`, and gives their
/// executables, where Cargo put them.
fn build_examples() -> Result<Built, Error> {
    // Cargo's progress and diagnostics as usual on stderr; its messages, as JSON, on stdout.
    let messages = output(
        cargo()
            .args(["build", "--example", "everything"])
            .args(["--example", "conformance_client"])
            .arg("--message-format=json-render-diagnostics")
            .stderr(Stdio::inherit()),
    )?;
    let executable = |name: &str| {
        messages
            .lines()
            .filter(|line| line.contains(r#""reason":"compiler-artifact""#))
            .filter(|line| {
                line.contains(r#""kind":["example"]"#)
                    && line.contains(&format!(r#""name":"{name}""#))
            })
            .find_map(|line| json_string(line, "executable"))
            .map(PathBuf::from)
            .ok_or_else(|| format!("cargo built examples/{name} but named no executable"))
    };
    Ok(Built {
        everything: executable("everything")?,
        client: executable("conformance_client")?,
    })
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
