//! The project's automation: `cargo xtask <task>`.
//!
//! - `test [ARGS]`: checks the sources' layout and that every path a comment names exists
//!   (`structure`, then `paths`: they need no build), installs what the test suite needs when it is missing (`redis-server` for
//!   the limits shared on Redis, `faketime` for replicas with skewed clocks, Node.js and npm
//!   for the official TypeScript MCP SDK clients (1 and 2) and the MCP conformance suite, then
//!   each of those from its lockfile with `npm ci`), saying what it installs, then runs the
//!   whole suite: `cargo test --workspace [ARGS]`, then (without ARGS) `conformance`.
//! - `conformance`: the official MCP conformance suite against `examples/everything`, its
//!   requirement sets 2025-11-25 and 2026-07-28, then their client scenarios run by
//!   `examples/conformance_client`, results in `target/conformance/<revision>/` (the client's
//!   in `client/` there), its known failures in `tests/conformance-suite/expected-failures.yml`
//!   (`conformance.rs`).
//! - `paths`: every path of this repository that a comment or a Markdown file names exists
//!   (`paths.rs`).
//! - `structure [--sizes]`: the sources' layout (`structure.rs`): no import circle among the
//!   files or top-level modules of a published crate, no file over 600 lines of code. Needs
//!   no build; `test` runs it first.
//! - `setup`: only the installs.
//! - `package`: packages the three published crates (`cargo package`, which also builds them
//!   from the package alone) and checks what each ships.
//!
//! Installs use the system's package manager: `apt-get` on Debian and Ubuntu (through `sudo`
//! unless root), Homebrew on macOS.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod conformance;
mod paths;
mod structure;

type Error = Box<dyn std::error::Error>;

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  test [ARGS]   `structure`, `paths`, install what the tests need when missing, then
                `cargo test --workspace [ARGS]` and, without ARGS, `conformance`
  conformance   the official MCP conformance suite against examples/everything (installed
                when missing): its requirement sets 2025-11-25 and 2026-07-28, then their
                client scenarios run by examples/conformance_client, results in
                target/conformance/<revision>/ (the client's in client/ there), its known
                failures in tests/conformance-suite/expected-failures.yml
  paths         check that every path a comment or Markdown file names exists
  structure [--sizes]
                the sources' layout, without building them: no import circle among the files
                or top-level modules of a crate, no file over 600 lines of code; --sizes
                prints every file's lines of code, largest first
  setup         only install what the tests need
  package       `cargo package` the published crates and check the files they ship";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let task = args.next();
    let rest: Vec<OsString> = args.collect();
    let outcome = match task.as_ref().and_then(|t| t.to_str()) {
        Some("test") => structure::run(&workspace(), &[])
            .and_then(|()| paths())
            .and_then(|()| setup())
            .and_then(|()| test(&rest)),
        Some("structure") => structure::run(&workspace(), &rest),
        Some("paths") => paths(),
        Some("conformance") => conformance(),
        Some("setup") => setup(),
        Some("package") => package(),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.into()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A program the tests start, and the package that provides it on each system.
struct Needed {
    command: &'static str,
    apt: &'static str,
    brew: &'static str,
    why: &'static str,
}

const NEEDED: [&Needed; 4] = [&REDIS, &FAKETIME, &NODE, &NPM];

const REDIS: Needed = Needed {
    command: "redis-server",
    apt: "redis-server",
    brew: "redis",
    why: "limits shared by replicas",
};

const FAKETIME: Needed = Needed {
    command: "faketime",
    apt: "faketime",
    brew: "libfaketime",
    why: "replicas with skewed clocks",
};

const NODE: Needed = Needed {
    command: "node",
    apt: "nodejs",
    brew: "node",
    why: "the official TypeScript SDK client and the MCP conformance suite",
};

const NPM: Needed = Needed {
    command: "npm",
    apt: "npm",
    brew: "node",
    why: "the official TypeScript SDK client and the MCP conformance suite",
};

/// The oldest Node.js the official TypeScript SDK supports (its `engines`).
const NODE_MAJOR: u32 = 18;

/// Installs what is missing of [`NEEDED`], then the official TypeScript SDK clients and the
/// MCP conformance suite.
fn setup() -> Result<(), Error> {
    install(&NEEDED)?;
    sdk_client()?;
    conformance::install()?;
    sdk2_client()
}

/// Installs what is missing of `needed`, or says why it cannot.
fn install(needed: &[&Needed]) -> Result<(), Error> {
    let missing: Vec<&Needed> = needed
        .iter()
        .copied()
        .filter(|n| !on_path(n.command))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let what = missing
        .iter()
        .map(|n| format!("{} (the tests of {})", n.command, n.why))
        .collect::<Vec<_>>()
        .join(", ");
    // One package may provide several programs (Homebrew's `node`: `node` and `npm`).
    let packages = |name: fn(&Needed) -> &'static str| {
        let mut packages: Vec<&str> = Vec::new();
        for package in missing.iter().map(|n| name(n)) {
            if !packages.contains(&package) {
                packages.push(package);
            }
        }
        packages
    };
    if cfg!(target_os = "macos") && on_path("brew") {
        let packages = packages(|n| n.brew);
        eprintln!(
            "xtask: installing {what} with Homebrew: brew install {}",
            packages.join(" ")
        );
        run(Command::new("brew").arg("install").args(&packages))?;
    } else if on_path("apt-get") {
        let packages = packages(|n| n.apt);
        let root = output(Command::new("id").arg("-u"))?.trim() == "0";
        let apt = |args: &[&str]| {
            let mut command = if root {
                Command::new("apt-get")
            } else {
                let mut sudo = Command::new("sudo");
                sudo.arg("apt-get");
                sudo
            };
            command
                .env("DEBIAN_FRONTEND", "noninteractive")
                .args(args)
                .args(["-y", "--no-install-recommends", "-q"]);
            command
        };
        let sudo = if root { "" } else { "sudo " };
        eprintln!(
            "xtask: installing {what}: {sudo}apt-get install {}",
            packages.join(" ")
        );
        let install = |apt: &dyn Fn(&[&str]) -> Command| {
            let mut args = vec!["install"];
            args.extend(&packages);
            run(&mut apt(&args))
        };
        // A fresh machine's package lists may be empty or stale: update once, then retry.
        if install(&apt).is_err() {
            eprintln!("xtask: {sudo}apt-get update, then again");
            run(&mut apt(&["update"]))?;
            install(&apt)?;
        }
    } else {
        return Err(format!(
            "the tests need {what}: install them with your system's package manager \
             (Debian/Ubuntu: apt-get install {}; macOS: brew install {})",
            packages(|n| n.apt).join(" "),
            packages(|n| n.brew).join(" ")
        )
        .into());
    }
    match missing.iter().find(|n| !on_path(n.command)) {
        Some(still) => Err(format!(
            "{} is still not on the PATH after the install",
            still.command
        )
        .into()),
        None => Ok(()),
    }
}

/// The official TypeScript MCP SDK client (`tests/sdk-client`), which tests run with `node`
/// against the streamable HTTP server: installed from its lockfile with `npm ci` when it is
/// missing or the lockfile changed since.
fn sdk_client() -> Result<(), Error> {
    let version = output(Command::new("node").arg("--version"))?;
    let major = version.trim().trim_start_matches('v').split('.').next();
    if major.and_then(|m| m.parse::<u32>().ok()) < Some(NODE_MAJOR) {
        return Err(format!(
            "the official TypeScript SDK client needs Node.js {NODE_MAJOR} or later, and `node` \
             is {}: install a newer one",
            version.trim()
        )
        .into());
    }
    npm_ci(
        "tests/sdk-client",
        "@modelcontextprotocol/sdk",
        "the official TypeScript MCP SDK client",
    )
}

/// The official TypeScript MCP SDK 2 client (`tests/sdk2-client`), which tests run against
/// `examples/everything` at MCP 2026-07-28 and in 2025-11-25 sessions: installed from its
/// lockfile with `npm ci` when it is missing or the lockfile changed since. It needs Node.js 20
/// or later, so the tests run it with the Node.js 22 the conformance suite pins, installed first.
fn sdk2_client() -> Result<(), Error> {
    npm_ci(
        "tests/sdk2-client",
        "@modelcontextprotocol/client",
        "the official TypeScript MCP SDK 2 client",
    )
}

/// Installs the npm package in `dir` (from the workspace's root) from its lockfile with
/// `npm ci`, when its dependency `package` is missing or the lockfile changed since.
fn npm_ci(dir: &str, package: &str, what: &str) -> Result<(), Error> {
    let dir = workspace().join(dir);
    let modules = dir.join("node_modules");
    let modified = |file: PathBuf| std::fs::metadata(file).and_then(|m| m.modified()).ok();
    let installed = modules.join(package).join("package.json").is_file()
        && modified(dir.join("package-lock.json")) <= modified(modules.join(".package-lock.json"));
    if installed {
        return Ok(());
    }
    eprintln!(
        "xtask: installing {what} in {}: npm ci --no-audit --no-fund",
        dir.strip_prefix(workspace()).unwrap_or(&dir).display()
    );
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir))
}

/// Only what the MCP conformance suite needs installed, then the suite.
fn conformance() -> Result<(), Error> {
    install(&[&NODE, &NPM])?;
    conformance::install()?;
    conformance::run()
}

/// The whole suite, then (unless ARGS chose a part of it) the MCP conformance suite.
/// Every path a comment names exists (`paths.rs`).
fn paths() -> Result<(), Error> {
    paths::run(&workspace())?;
    eprintln!("xtask: every path the comments name exists");
    Ok(())
}

fn test(args: &[OsString]) -> Result<(), Error> {
    run(cargo().args(["test", "--workspace"]).args(args))?;
    match args.is_empty() {
        true => conformance::run(),
        false => Ok(()),
    }
}

/// The three published crates, packaged and built from their packages, and their file lists.
fn package() -> Result<(), Error> {
    // Packaged together, so that each builds against the packages of the others (not yet on
    // crates.io) rather than the registry's. A working copy with changes is packaged as it is:
    // this checks the packages, it does not publish them. In dependency order: the rules, the
    // macros (which use them), the runtime (which uses both).
    let crates = ["mcp-fusion-rules", "mcp-fusion-macros", "mcp-fusion"];
    let package = || {
        let mut command = cargo();
        command.args(["package", "--allow-dirty"]);
        command
    };
    forget_overlay_sources(&crates)?;
    let mut all = package();
    for krate in crates {
        all.args(["-p", krate]);
    }
    run(&mut all)?;
    for krate in crates {
        let list = output(package().args(["--list", "--quiet", "-p", krate]))?;
        let files: Vec<&str> = list.lines().collect();
        for required in [
            "Cargo.toml",
            "README.md",
            "LICENSE-MIT",
            "LICENSE-APACHE",
            "CHANGELOG.md",
        ] {
            if !files.contains(&required) {
                return Err(format!("{krate} does not ship {required}").into());
            }
        }
        // What a user compiles and reads: sources, benches, the manifest, README, licenses,
        // changelog. No tests, fixtures, drivers or examples of the workspace.
        let allowed = |file: &str| {
            file.starts_with("src/")
                || file.starts_with("benches/")
                || matches!(
                    file,
                    "Cargo.toml" | "Cargo.toml.orig" | "Cargo.lock" | ".cargo_vcs_info.json"
                )
                || file.starts_with("README")
                || file.starts_with("LICENSE-")
                || file == "CHANGELOG.md"
        };
        if let Some(stray) = files.iter().find(|f| !allowed(f)) {
            return Err(format!("{krate} would ship {stray}: not source, docs or licence").into());
        }
        println!("{krate}: {} files\n  {}", files.len(), files.join("\n  "));
    }
    Ok(())
}

/// Removes what an earlier `cargo package` unpacked of our own crates from its overlay registry.
///
/// Packaging a workspace verifies the runtime against the macros' `.crate` through a temporary
/// registry, and Cargo unpacks a crate of a local registry only when its directory under
/// `$CARGO_HOME/registry/src` does not exist yet (rust-lang/cargo#13926, local registry
/// sources). A machine that kept its Cargo home from an earlier run would verify the runtime
/// against that run's macros: a derive added since then is reported missing.
fn forget_overlay_sources(crates: &[&str]) -> Result<(), Error> {
    let home = match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home),
        None => match std::env::var_os("HOME") {
            Some(home) => Path::new(&home).join(".cargo"),
            None => return Ok(()),
        },
    };
    let Ok(sources) = std::fs::read_dir(home.join("registry").join("src")) else {
        return Ok(());
    };
    for source in sources.flatten() {
        // crates.io's own sources stay; the overlay is the registry without a name.
        if source.file_name().to_string_lossy().starts_with("index.") {
            continue;
        }
        for unpacked in std::fs::read_dir(source.path())?.flatten() {
            let name = unpacked.file_name().to_string_lossy().into_owned();
            let ours = crates.iter().any(|krate| {
                name.strip_prefix(krate)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
            });
            if ours {
                std::fs::remove_dir_all(unpacked.path())?;
            }
        }
    }
    Ok(())
}

/// The Cargo that runs this task, at the workspace's root.
fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace());
    command
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// Whether `program` is an executable file in a directory of the PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program)).is_ok_and(|m| m.is_file() && executable(&m))
        })
    })
}

#[cfg(unix)]
fn executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    true
}

fn run(command: &mut Command) -> Result<(), Error> {
    let status = command
        .status()
        .map_err(|e| format!("{command:?} did not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {status}").into())
    }
}

fn output(command: &mut Command) -> Result<String, Error> {
    let output = command
        .output()
        .map_err(|e| format!("{command:?} did not start: {e}"))?;
    if !output.status.success() {
        return Err(format!("{command:?} failed: {}", output.status).into());
    }
    Ok(String::from_utf8(output.stdout)?)
}
