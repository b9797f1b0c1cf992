//! A gateway: specialist MCP servers behind one server, each under a namespace of its own.
//!
//! `cargo run --example gateway -- --upstream books="target/debug/examples/billing" \
//!   --upstream crm=http://127.0.0.1:8081/mcp` lists its own tool (`desk`) beside each
//! upstream's tools (`books_billing`, `crm_...`), forwards their calls, and answers for an
//! upstream that is connecting, down or called by a wrong name with an envelope
//! (HANDOFF_CONNECTING, HANDOFF_UPSTREAM_UNAVAILABLE, HANDOFF_NAMESPACE_MISMATCH). A stdio
//! upstream is a command line started as a child process (and started again after it exits);
//! an HTTP one a streamable HTTP URL, reached with `--bearer NS=TOKEN` when it needs a token.
//! It serves on stdio, or streamable HTTP with `--http ADDR` (endpoint `/mcp`).
//!
//! Logs go to stderr (`RUST_LOG` chooses their level): one line when an upstream cannot be
//! reached, one when it answers again.
//!
//! The contract lockfile records the upstreams' tools too: `--contract-write PATH` reaches
//! every upstream and writes it, `--contract-diff PATH` prints what changed since (its own tool
//! and every upstream's, under the names it lists them by), and `--lock PATH` serves with it, so
//! the upstreams' tools are listed from it before the gateway first reaches them.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/contract_flags.rs"]
mod contract_flags;

use std::time::Duration;

use clap::Parser;
use cli::seconds;
use mcp_fusion::contract::Contract;
use mcp_fusion::server::gateway::Upstream;
use mcp_fusion::server::{HttpOptions, StdioOptions};
use mcp_fusion::{Server, ToolError, tool};

/// One server in front of specialist MCP servers.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// An upstream: `NAMESPACE=COMMAND ARGS...` (a child process on stdio) or
    /// `NAMESPACE=http://HOST:PORT/PATH` (streamable HTTP). Any number of times.
    #[arg(long, value_name = "NS=COMMAND|URL", value_parser = upstream, required = true)]
    upstream: Vec<(String, String)>,
    /// The gateway's own bearer token for an HTTP upstream: `NAMESPACE=TOKEN`.
    #[arg(long, value_name = "NS=TOKEN", value_parser = pair)]
    bearer: Vec<(String, String)>,
    /// Seconds a forwarded call may wait for its upstream.
    #[arg(long, value_name = "S", default_value = "60", value_parser = seconds)]
    call_timeout: Duration,
    /// Seconds to wait after an upstream's first failure (doubled after each next one, up to
    /// 30).
    #[arg(long, value_name = "S", default_value = "1", value_parser = seconds)]
    backoff: Duration,
    /// Serve streamable HTTP on this address (endpoint `/mcp`) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Serve with this contract lockfile: the upstreams' tools it records are listed until
    /// each upstream is first reached.
    #[arg(long, value_name = "PATH")]
    lock: Option<std::path::PathBuf>,
    /// Reach every upstream, print what changed since this lockfile and exit (1 when something
    /// did).
    #[arg(long, value_name = "PATH")]
    contract_diff: Option<std::path::PathBuf>,
    /// Reach every upstream, write the lockfile (with their tools) and exit.
    #[arg(long, value_name = "PATH")]
    contract_write: Option<std::path::PathBuf>,
}

fn pair(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{text:?} is not NAME=VALUE"))
}

fn upstream(text: &str) -> Result<(String, String), String> {
    let (namespace, target) = pair(text)?;
    match target.trim().is_empty() {
        true => Err(format!("{namespace}: no command or URL")),
        false => Ok((namespace, target)),
    }
}

/// The gateway's own tool.
struct Desk {
    namespaces: Vec<String>,
}

/// The front desk: which specialists are behind this server.
#[tool]
impl Desk {
    /// The namespaces of the specialists, each a prefix of its tools' names.
    #[action(read_only)]
    async fn directory(&self) -> Result<Vec<String>, ToolError> {
        Ok(self.namespaces.clone())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<std::process::ExitCode, Box<dyn std::error::Error>> {
    let args = Args::parse();
    cli::log_to_stderr();
    let namespaces = args.upstream.iter().map(|(ns, _)| ns.clone()).collect();
    let mut server =
        Server::builder("gateway", env!("CARGO_PKG_VERSION")).tool(Desk { namespaces });
    for (namespace, target) in &args.upstream {
        let upstream = match target.starts_with("http://") || target.starts_with("https://") {
            true => {
                let mut upstream = Upstream::http(target.as_str());
                if let Some((_, token)) = args.bearer.iter().find(|(ns, _)| ns == namespace) {
                    upstream = upstream.bearer(token.as_str());
                }
                upstream
            }
            false => {
                let mut words = target.split_whitespace();
                let program = words.next().unwrap_or_default();
                Upstream::command(program, words)
            }
        };
        let upstream = upstream
            .call_timeout(args.call_timeout)
            .backoff(args.backoff, Duration::from_secs(30));
        server = server.mount(namespace.as_str(), upstream);
    }
    if let Some(lockfile) = &args.lock {
        server = server.contract_lock(Contract::read(lockfile)?);
    }
    let server = server.build()?;
    if args.contract_diff.is_some() || args.contract_write.is_some() {
        // The lockfile records what each upstream lists: all must answer first.
        let unreachable = server.reach_upstreams().await;
        if !unreachable.is_empty() {
            eprintln!(
                "cannot reach the upstreams {unreachable:?}: the lockfile would not record their tools"
            );
            return Ok(std::process::ExitCode::from(2));
        }
        if let Some(status) = contract_flags::run(
            &server,
            args.contract_diff.as_deref(),
            args.contract_write.as_deref(),
        ) {
            return Ok(status);
        }
    }
    match &args.http {
        None => server.serve_stdio(StdioOptions::default()).await?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "gateway: streamable HTTP on http://{}/mcp",
                listener.local_addr()?
            );
            server.serve_http(listener, HttpOptions::default()).await?;
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
