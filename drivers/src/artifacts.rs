//! The binaries the tests and drivers start, built by Cargo when needed and found from Cargo's
//! own report of what it built (`--message-format=json`): never by guessing a path under
//! `target/`, so `cargo test <one test>` works on a clean target and a release driver starts
//! release servers.
//!
//! The build uses the profile of the caller (`dev` for a debug build, `release` otherwise) and
//! the workspace's default members, the same packages as a plain `cargo test` or `cargo build`
//! at the root: when those already built the binary, Cargo has nothing to do. Cargo serialises
//! builds of one target directory itself, so concurrent callers only wait for each other.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

/// The `billing` example (`examples/billing.rs`): the showcase server the tests and drivers
/// start. `MCP_FUSION_BILLING=path` runs another build of it instead (a release build, an older
/// commit's).
///
/// # Panics
/// When it cannot be built: a test that needs it fails with Cargo's own message.
pub fn billing() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_FUSION_BILLING") {
        return path.into();
    }
    built(Kind::Example, "billing")
}

/// Another example of the workspace (`gateway`), built like [`billing`].
///
/// # Panics
/// When it cannot be built.
pub fn example(name: &str) -> PathBuf {
    built(Kind::Example, name)
}

/// A binary of this package (`bench_server`, `plain_server`), built like [`billing`].
///
/// # Panics
/// When it cannot be built.
pub fn driver(name: &str) -> PathBuf {
    built(Kind::Bin, name)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Bin,
    Example,
}

/// Where each binary is, once built: callers of the same one wait for the first.
type Built = Mutex<HashMap<(Kind, String), Arc<OnceLock<PathBuf>>>>;

/// Each binary is built once per process.
fn built(kind: Kind, name: &str) -> PathBuf {
    static BUILT: OnceLock<Built> = OnceLock::new();
    let slot = BUILT
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry((kind, name.to_owned()))
        .or_default()
        .clone();
    slot.get_or_init(|| build(kind, name).unwrap_or_else(|e| panic!("{e}")))
        .clone()
}

/// Runs `cargo build` for one target of the workspace.
fn build(kind: Kind, name: &str) -> Result<PathBuf, String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the drivers package sits in the workspace");
    let flag = match kind {
        Kind::Bin => "--bin",
        Kind::Example => "--example",
    };
    let mut command = cargo();
    command.current_dir(workspace).args(["build", flag, name]);
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    executable(command, name)
}

/// The Cargo that runs us (`cargo test`, `cargo run`), else the one that built us.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into()))
}

/// Runs `build`, a `cargo build` command, and returns the path of the executable named `name`
/// it built, read from Cargo's messages. Cargo's diagnostics go to stderr as usual.
///
/// # Errors
/// When Cargo does not start, fails, or reports no such executable.
pub fn executable(mut build: Command, name: &str) -> Result<PathBuf, String> {
    let what = format!("{build:?}");
    let output = build
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{what} did not start: {e}"))?;
    if !output.status.success() {
        return Err(format!("{what} failed: {}", output.status));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == name)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("{what} reported no executable named {name}"))
}
