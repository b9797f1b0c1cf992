//! What the load drivers read of a child process on Linux (`/proc`), and their settings from
//! the environment. Shared by `load.rs`, `soak.rs` and `http_load.rs` through `#[path]`.

#![allow(dead_code)] // Each driver uses its own part.

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
    Ok(field(14)? + field(15)?)
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
