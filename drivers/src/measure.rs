//! What the load drivers share: what they read of a child process on Linux (`/proc`), their
//! settings from the environment, and how they report. Used by the `load`, `soak` and
//! `http_load` drivers and by the raw clients ([`crate::raw_stdio`], [`crate::raw_http`]).

use std::collections::BTreeMap;
use std::time::Duration;

type Error = Box<dyn std::error::Error>;

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> Result<u64, Error> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))?;
    Ok(value
        .split_whitespace()
        .next()
        .ok_or_else(|| format!("unreadable {field}"))?
        .parse()?)
}

/// utime + stime of the whole process (all threads, living and exited), in clock ticks.
pub fn cpu_ticks(pid: u32) -> Result<u64, Error> {
    let (user, system) = cpu_ticks_split(pid)?;
    Ok(user + system)
}

/// utime and stime of the whole process apart (user space, the kernel on its behalf), in clock
/// ticks: the kernel's share of a call is what no change in user space can take away.
pub fn cpu_ticks_split(pid: u32) -> Result<(u64, u64), Error> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // After the command name (which may hold spaces) comes field 3; utime is 14, stime 15.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or("unreadable /proc/<pid>/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> Result<u64, Error> {
        Ok(fields.get(n - 3).ok_or("short /proc/<pid>/stat")?.parse()?)
    };
    Ok((field(14)?, field(15)?))
}

/// The run time of the process's living threads, in nanoseconds (`schedstat`'s first field).
pub fn cpu_ns(pid: u32) -> Result<u64, Error> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        // A thread may exit between listing and reading.
        if let Ok(text) = std::fs::read_to_string(task?.path().join("schedstat")) {
            total += text
                .split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Ok(total)
}

/// `getconf CLK_TCK`, or 100 (Linux's USER_HZ almost everywhere) when that fails.
pub fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .filter(|&ticks| ticks > 0)
        .unwrap_or(100)
}

/// A comma-separated list from the environment, or `default`.
pub fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(|item| item.trim().to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

/// A number from the environment, or `default`.
pub fn env_usize(name: &str, default: usize) -> Result<usize, Error> {
    match std::env::var(name) {
        Ok(value) => Ok(value.parse().map_err(|e| format!("{name}={value}: {e}"))?),
        Err(_) => Ok(default),
    }
}

/// Nearest-rank percentile of sorted latencies, in milliseconds.
pub fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

/// At most `max` characters of `text`.
pub fn clip(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(end, _)| &text[..end])
}

/// The value, or `-` in a table.
pub fn or_dash(value: Option<String>) -> String {
    value.unwrap_or_else(|| "-".into())
}

/// Problems `(call index, message)`, grouped by the first 60 characters of their message, most
/// frequent first: (how many, one call's index, that call's message).
pub fn problem_groups<'a>(
    problems: impl Iterator<Item = (usize, &'a str)>,
) -> Vec<(usize, usize, &'a str)> {
    let mut groups: BTreeMap<&str, (usize, usize, &str)> = BTreeMap::new();
    for (index, problem) in problems {
        groups
            .entry(clip(problem, 60))
            .or_insert((0, index, problem))
            .0 += 1;
    }
    let mut groups: Vec<_> = groups.into_values().collect();
    groups.sort_by_key(|&(count, ..)| std::cmp::Reverse(count));
    groups
}
