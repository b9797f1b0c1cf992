//! What the examples' command lines share: their logs, and durations given in seconds.

use std::time::Duration;

/// Logs to stderr at `info`, rmcp's own at `warn`; `RUST_LOG` chooses otherwise.
pub(crate) fn log_to_stderr() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// A duration written in seconds (`0.25`, `30`), for clap.
pub(crate) fn seconds(text: &str) -> Result<Duration, String> {
    let s: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not seconds"))?;
    Duration::try_from_secs_f64(s).map_err(|e| e.to_string())
}
