//! Memory at rest: what each stdio server of workload 5 (`shared/bench/WORKLOADS.md`) holds
//! once it has answered its first requests and gone idle, side by side with the bare rmcp
//! server in one run. Linux only (it reads `/proc`); elsewhere it exits with a message.
//!
//! ```text
//! cargo build --release -p mcp-fusion-drivers --bins && target/release/at_rest
//! AT_REST_ROUNDS=9 AT_REST_MAPS=1 target/release/at_rest
//! ```
//!
//! The servers, each a child process on stdio (stderr discarded):
//!
//! - `plain`: the `bench` tool on bare rmcp (`plain_server`), the baseline of the ratios;
//! - `ours`: this library (`bench_server`: `bench`'s 20 actions and `users.create`);
//! - `ours-nofast`: the same with every message through rmcp (`--no-fast-path`).
//!
//! The binaries are those next to this driver (what the command above builds), else built by
//! Cargo with this driver's profile ([`mcp_fusion_drivers::artifacts`]).
//!
//! Each round starts every server afresh, in a rotated order, and reads it twice:
//!
//! - `listed`: after `initialize`, `notifications/initialized` and `tools/list`;
//! - `called`: after, in addition, one `tools/call` of each kind the `load` driver sends
//!   (`bench` `ok` and `invalid`, and for ours one valid and one invalid `users.create`).
//!
//! Before each reading the server is left alone for AT_REST_SETTLE_MS (default 300 ms). A
//! reading is `/proc/<pid>/status` (`VmRSS`, `RssAnon`, `RssFile`, `Threads`) and
//! `/proc/<pid>/smaps_rollup` (`Pss`, `Private_Clean` + `Private_Dirty`) when the kernel has
//! it; the table shows the median of AT_REST_ROUNDS rounds (default 5) per server and phase,
//! in MiB, and the ratio of each median `VmRSS` to plain's in the same run. AT_REST_MAPS=1 also
//! prints, for the last round, where each server's resident memory is (`/proc/<pid>/smaps`
//! grouped: the executable's pages by permission, the heap, other anonymous mappings and
//! thread stacks, shared libraries). AT_REST_SERVERS picks servers (default
//! `plain,ours,ours-nofast`).
//!
//! # What the difference is made of
//!
//! Read on 2 cores shared with other engineers' builds (release profile of the workspace,
//! rustc 1.95, Linux 6.18), `called`, medians of 5 rounds, before the validators of the flat
//! walk were made lazily: plain 6.36 MiB (`RssAnon` 0.42, `RssFile` 5.94, 1 thread), ours
//! 15.57 MiB (1.90, 13.67, 1 thread), ratio 2.45. Both run tokio's current-thread runtime: one
//! thread each, so no difference of thread stacks. Of the 9.2 MiB (AT_REST_MAPS=1):
//!
//! - 6.6 MiB of executable code: the kernel maps the binary's text in large pieces (page cache
//!   folios and fault-around), so nearly all of `.text` is resident once the process has run,
//!   touched or not: plain 3.7 MiB resident of a 3.7 MiB `.text`, ours 10.3 of 11.8. Ours is
//!   this library with every feature the drivers enable (stdio, HTTP, client, Redis,
//!   OpenTelemetry, OAuth, gateway: `size -A` `.text` 12.4 MB against plain's 3.8 MB), linked
//!   in because a server chooses among them at run time;
//! - 1.3 MiB of read-only data (`.rodata`, unwind tables, relocated constants): 2.0 MiB
//!   resident against 0.75;
//! - 1.1 MiB of heap (`[heap]` 1.18 MiB against 0.11; heaptrack's peak 1.10 MiB): the 21
//!   actions' schemas (as given, closed, and the validator's copy), their compiled validators,
//!   what is read of them once (`Layout`), the router's names;
//! - the rest (stack, libm) under 0.2 MiB.
//!
//! So 1.5× plain (9.5 MiB) is out of reach by the heap alone: ours without any heap would
//! still hold 14.4 MiB. The code pages are clean and file-backed: shared by every process of
//! the same binary (their `Pss` divides) and the first memory the kernel reclaims. What is
//! private to each process, `RssAnon`, is 1.9 MiB against 0.4.
//!
//! Since a schema's walk of flat objects is compiled by the first failing arguments (the
//! validators of `bench`'s 20 actions and of `users.create` that a valid call never needs), the
//! same reading gives plain 5.95 MiB (0.42, 5.52), ours 13.78 MiB (1.81, 11.97), 2.32×; after
//! `tools/list` alone 5.93 and 13.32 MiB (`RssAnon` 1.78 against 1.89 before), 2.25×. File
//! pages move by half a MiB between runs with the page cache (and with the file system the
//! binaries sit on): compare ratios of one run, and `RssAnon`, which is steady.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mcp_fusion_drivers::measure::{env_list, env_usize};
use mcp_fusion_drivers::raw_stdio::Billing;
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error>;

/// A server to read: its binary and arguments.
struct Target {
    label: &'static str,
    binary: &'static str,
    args: &'static [&'static str],
    /// Whether it serves the `users` tool of workload 3.
    users: bool,
}

const TARGETS: [Target; 3] = [
    Target {
        label: "plain",
        binary: "plain_server",
        args: &[],
        users: false,
    },
    Target {
        label: "ours",
        binary: "bench_server",
        args: &[],
        users: true,
    },
    Target {
        label: "ours-nofast",
        binary: "bench_server",
        args: &["--no-fast-path"],
        users: true,
    },
];

/// The two moments a server is read.
const PHASES: [&str; 2] = ["listed", "called"];

/// The columns of a reading, in KiB (threads as they are).
const COLUMNS: [&str; 7] = [
    "VmRSS", "RssAnon", "RssFile", "Pss", "Private", "Threads", "VmHWM",
];

/// One reading: a value per column (absent when the kernel does not report it).
type Reading = BTreeMap<&'static str, u64>;

fn main() -> Result<(), Error> {
    if !cfg!(target_os = "linux") || !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("at_rest reads /proc/<pid>/status and smaps_rollup: it runs on Linux only");
        std::process::exit(2);
    }
    let rounds = env_usize("AT_REST_ROUNDS", 5)?.max(1);
    let settle = Duration::from_millis(env_usize("AT_REST_SETTLE_MS", 300)? as u64);
    let maps = std::env::var("AT_REST_MAPS").is_ok_and(|v| v == "1");
    let wanted = env_list("AT_REST_SERVERS", "plain,ours,ours-nofast");
    let targets: Vec<&Target> = TARGETS
        .iter()
        .filter(|t| wanted.iter().any(|w| w == t.label))
        .collect();
    if targets.is_empty() {
        return Err(format!("AT_REST_SERVERS={wanted:?} names no server").into());
    }
    let binaries: Vec<PathBuf> = targets.iter().map(|t| binary(t.binary)).collect();
    for (target, path) in targets.iter().zip(&binaries) {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        println!(
            "{:<12} {} ({:.1} MiB on disk)",
            target.label,
            path.display(),
            mib(size / 1024)
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // readings[target][phase] = one reading per round.
    let mut readings: Vec<[Vec<Reading>; 2]> = targets.iter().map(|_| Default::default()).collect();
    let mut last_maps: Vec<Option<String>> = vec![None; targets.len()];
    for round in 0..rounds {
        for k in 0..targets.len() {
            let i = (k + round) % targets.len();
            let (phases, map) = runtime.block_on(read_one(targets[i], &binaries[i], settle))?;
            for (p, reading) in phases.into_iter().enumerate() {
                readings[i][p].push(reading);
            }
            if round + 1 == rounds {
                last_maps[i] = Some(map);
            }
        }
    }
    println!("\nmedians of {rounds} rounds, MiB (Threads: count); ratio = VmRSS / plain's VmRSS");
    for (p, phase) in PHASES.iter().enumerate() {
        println!("\n{phase}");
        print!("{:<12}", "server");
        for column in COLUMNS {
            print!(" {column:>8}");
        }
        println!(" {:>6}", "ratio");
        let base = targets
            .iter()
            .position(|t| t.label == "plain")
            .and_then(|i| median(&readings[i][p], "VmRSS"));
        for (i, target) in targets.iter().enumerate() {
            print!("{:<12}", target.label);
            for column in COLUMNS {
                match median(&readings[i][p], column) {
                    Some(v) if column == "Threads" => print!(" {v:>8}"),
                    Some(v) => print!(" {:>8.2}", mib(v)),
                    None => print!(" {:>8}", "-"),
                }
            }
            match (median(&readings[i][p], "VmRSS"), base) {
                (Some(v), Some(b)) if b > 0 => println!(" {:>6.2}", v as f64 / b as f64),
                _ => println!(" {:>6}", "-"),
            }
        }
    }
    if maps {
        for (target, map) in targets.iter().zip(last_maps) {
            println!(
                "\n{} (last round, called): resident KiB by mapping\n{}",
                target.label,
                map.unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// The binary next to this driver, else the one Cargo builds.
fn binary(name: &str) -> PathBuf {
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(name)))
        .filter(|path| path.is_file());
    sibling.unwrap_or_else(|| mcp_fusion_drivers::artifacts::driver(name))
}

/// Starts one server, reads it after `tools/list` and after the calls, and stops it; with
/// the grouped `smaps` of the second reading.
async fn read_one(
    target: &Target,
    binary: &std::path::Path,
    settle: Duration,
) -> Result<([Reading; 2], String), Error> {
    let mut server = Billing::spawn(binary, target.args)?;
    let pid = server.child.id().ok_or("the server exited at once")?;
    server.initialize().await?;
    request(&mut server, "list", "tools/list", json!({})).await?;
    tokio::time::sleep(settle).await;
    let listed = reading(pid)?;
    let mut calls = vec![
        (
            "bench",
            json!({"action": "op07", "id": "item_42", "limit": 10}),
            false,
        ),
        (
            "bench",
            json!({"action": "op07", "id": 42, "limit": 500, "extra": true}),
            true,
        ),
    ];
    if target.users {
        calls.push(("users", json!({"action":"create","email":"jane@example.com","age":34,"role":"editor","address":{"street":"1 Main St","city":"Springfield","zip":"12345"},"tags":["alpha","beta","gamma"],"name":"Jane Doe"}), false));
        calls.push(("users", json!({"action":"create","email":"not-an-email","age":12,"role":"superuser","address":{"street":"1 Main St","city":"Springfield","zip":"12345"},"tags":["alpha","beta","gamma"],"name":"Jane Doe","nickname":"JD"}), true));
    }
    for (n, (tool, arguments, error)) in calls.into_iter().enumerate() {
        let params = json!({"name": tool, "arguments": arguments});
        let answer = request(&mut server, &format!("call{n}"), "tools/call", params).await?;
        if answer["result"]["isError"] != error {
            return Err(format!("{}: {tool} answered {answer}", target.label).into());
        }
    }
    tokio::time::sleep(settle).await;
    let called = reading(pid)?;
    let map = smaps(pid, binary).unwrap_or_else(|e| format!("  (no smaps: {e})"));
    server.stdin = None;
    let _ = tokio::time::timeout(Duration::from_secs(5), server.child.wait()).await;
    let _ = server.child.kill().await;
    Ok(([listed, called], map))
}

/// Sends a request and returns its answer (an error answer is an error).
async fn request(
    server: &mut Billing,
    id: &str,
    method: &str,
    params: Value,
) -> Result<Value, Error> {
    server
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await?;
    loop {
        let answer = server
            .receive(Duration::from_secs(10))
            .await
            .ok_or_else(|| format!("{method} was not answered"))?;
        if answer["id"] == id {
            if answer.get("error").is_some() {
                return Err(format!("{method} failed: {answer}").into());
            }
            return Ok(answer);
        }
    }
}

/// `/proc/<pid>/status` and, when present, `/proc/<pid>/smaps_rollup`.
fn reading(pid: u32) -> Result<Reading, Error> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let mut reading = Reading::new();
    for (field, column) in [
        ("VmRSS", "VmRSS"),
        ("RssAnon", "RssAnon"),
        ("RssFile", "RssFile"),
        ("Threads", "Threads"),
        ("VmHWM", "VmHWM"),
    ] {
        if let Some(value) = field_of(&status, field) {
            reading.insert(column, value);
        }
    }
    if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
        if let Some(pss) = field_of(&rollup, "Pss") {
            reading.insert("Pss", pss);
        }
        if let (Some(clean), Some(dirty)) = (
            field_of(&rollup, "Private_Clean"),
            field_of(&rollup, "Private_Dirty"),
        ) {
            reading.insert("Private", clean + dirty);
        }
    }
    Ok(reading)
}

/// The number after `field:` in a `/proc` file of `Name: value [kB]` lines.
fn field_of(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Resident KiB grouped by what is mapped: the executable by permission, `[heap]`, other
/// anonymous memory, stacks, each shared library.
fn smaps(pid: u32, binary: &std::path::Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps"))?;
    let exe = std::fs::canonicalize(binary)?;
    let mut groups: BTreeMap<String, u64> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            // A mapping's header: range, perms, offset, dev, inode, path.
            let perms = words.next().unwrap_or_default();
            let path = words.nth(3).unwrap_or_default();
            current = if path.is_empty() {
                format!("anonymous {perms}")
            } else if std::path::Path::new(path) == exe {
                format!("executable {perms}")
            } else if path.starts_with('[') {
                path.to_owned()
            } else {
                let name = path.rsplit('/').next().unwrap_or(path);
                format!("{name} {perms}")
            };
        } else if first == "Rss:" {
            let kib: u64 = words.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            *groups.entry(current.clone()).or_default() += kib;
        }
    }
    let mut rows: Vec<_> = groups.into_iter().filter(|(_, kib)| *kib > 0).collect();
    rows.sort_by_key(|(_, kib)| std::cmp::Reverse(*kib));
    Ok(rows
        .iter()
        .map(|(name, kib)| format!("  {kib:>8}  {name}"))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The median of a column over the rounds.
fn median(readings: &[Reading], column: &str) -> Option<u64> {
    let mut values: Vec<u64> = readings
        .iter()
        .filter_map(|r| r.get(column).copied())
        .collect();
    values.sort_unstable();
    values.get(values.len().checked_sub(1)? / 2).copied()
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
