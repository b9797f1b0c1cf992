//! The billing server: one grouped tool `billing`, on stdio, or on streamable HTTP.
//!
//! `cargo run --example billing` (an MCP client speaks to it on stdin/stdout; logs go to
//! stderr), or `cargo run --example billing -- --http 127.0.0.1:8080 [--stateless]` (endpoint
//! `/mcp`). `cargo run --example billing -- --help` lists every flag with its default.
//!
//! With `--redis redis://127.0.0.1:6379` every limit it declares (`export_invoices`: 2 calls
//! at once; `create_invoice`: 10 calls per minute; `--rate-limit`) is kept in Redis and shared
//! by every replica started with the same URL and `--redis-prefix`: several replicas behind a
//! load balancer, with `--http ADDR --stateless`. `--redis-cluster URL,URL,...` keeps them in a
//! Redis Cluster instead, `--redis-sentinel URL,URL,... --redis-master NAME` in the master
//! those Sentinels name (followed through failovers); per-customer budgets (`--rate-limit`)
//! need `--redis-key-secret`.
//!
//! `export_invoices` runs as a task for a client that declared the tasks extension: it takes
//! `--export-seconds S` (0.2 by default), polled with `tasks/get`, stopped with
//! `tasks/cancel`. With a Redis its tasks are kept there too, so any replica answers for a
//! task another runs, and a task whose replica is killed reads `failed` once its lease
//! (`--task-lease S`, 15 by default) lapses.
//!
//! With `--oauth-issuer URL --oauth-audience URI [--oauth-jwks URL]` (HTTP) it is an OAuth
//! resource server: every request needs a bearer token (a JWT) that issuer made for that
//! audience, its metadata is at `/.well-known/oauth-protected-resource/mcp`, and
//! `create_invoice`, `pay_invoice`, `cancel_invoice` and `void_invoice` need the scope
//! `invoices:write` (403 `insufficient_scope` without it); rate limits are kept per subject.
//!
//! SIGTERM or Ctrl-C stops it gracefully: new calls are refused, calls in flight finish
//! within the drain period (`--drain`), then it exits.
//!
//! Logs go to stderr at `info`, with rmcp's own at `warn`; `RUST_LOG` chooses otherwise
//! (`RUST_LOG=debug`, `RUST_LOG=info,rmcp=info`).
//!
//! Its contract is locked in `examples/mcp-fusion.lock`. `--lock PATH` serves with a lockfile,
//! so validation errors tell the model what changed since; `--contract-diff PATH` prints what
//! changed and exits; `--contract-write PATH` writes the lockfile.

#[path = "common/billing.rs"]
mod billing;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/contract_flags.rs"]
mod contract_flags;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use cli::seconds;
use mcp_fusion::Server;
use mcp_fusion::contract::Contract;
use mcp_fusion::middleware::Audit;
use mcp_fusion::server::limits::{FailPolicy, RedisStore};
use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
use mcp_fusion::server::tasks::RedisTaskStore;
use mcp_fusion::server::{HttpOptions, ServerBuilder, StdioOptions, ToolSettings};
use mcp_fusion::tools::Exposition;

/// The billing MCP server: invoices of a small business, on stdio or streamable HTTP.
#[derive(Parser, Debug)]
#[command(version, about)]
#[command(group(clap::ArgGroup::new("store").args(["redis", "redis_cluster", "redis_sentinel"])))]
struct Args {
    /// Serve streamable HTTP on this address (endpoint `/mcp`) instead of stdio.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    http: Option<String>,
    /// HTTP: no sessions, every request stands alone (for replicas behind a load balancer).
    #[arg(long)]
    stateless: bool,
    /// HTTP: require OAuth access tokens (JWTs) issued by this authorization server; the
    /// actions that change invoices then need the scope `invoices:write`.
    #[arg(long, value_name = "URL", requires_all = ["http", "oauth_audience"])]
    oauth_issuer: Option<String>,
    /// HTTP: the resource URI tokens must be issued for (their audience), such as
    /// `https://billing.example.com/mcp`.
    #[arg(long, value_name = "URI", requires = "oauth_issuer")]
    oauth_audience: Option<String>,
    /// HTTP: where the issuer's keys are (a JWKS document) [default: the `jwks_uri` of the
    /// issuer's metadata].
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_jwks: Option<String>,
    /// HTTP: accept access tokens whose header does not say `"typ": "at+jwt"` (RFC 9068), for
    /// an issuer that writes `JWT` or no type.
    #[arg(long, requires = "oauth_issuer")]
    oauth_untyped: bool,
    /// List each action as an MCP tool of its own (`billing_get_invoice`, ...).
    #[arg(long)]
    flat: bool,
    /// A rate limit per customer, MAX calls per SECONDS (calls naming the same
    /// `customer_email` share a budget; with OAuth, per verified subject).
    #[arg(long, value_name = "MAX/SECONDS", value_parser = rate_limit)]
    rate_limit: Option<(u64, u64)>,
    /// At most this many customers tracked by the rate limit.
    #[arg(long, value_name = "N", requires = "rate_limit")]
    rate_limit_keys: Option<usize>,
    /// No audit middleware.
    #[arg(long)]
    no_audit: bool,
    /// Seconds the replica running a task may go without renewing its lease (it renews every
    /// third of it) before the task reads `failed`: how long a task outlives a killed replica.
    #[arg(long, value_name = "S", default_value = "15", value_parser = seconds)]
    task_lease: Duration,
    /// Seconds an export (`export_invoices`) takes, in five parts; its deadline is ten times
    /// it, so a reader can watch one work, cancel it, or kill its replica mid-way.
    #[arg(long, value_name = "S", default_value = "0.2", value_parser = seconds)]
    export_seconds: Duration,
    /// Keep the limits in this Redis, shared by every replica (`redis://127.0.0.1:6379`).
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// Keep the limits in this Redis Cluster, shared by every replica: some of its nodes, the
    /// seeds the client learns the cluster from (`redis://10.0.0.5:6379,redis://10.0.0.6:6379`).
    #[arg(
        long,
        value_name = "URL[,URL...]",
        value_delimiter = ',',
        conflicts_with = "redis"
    )]
    redis_cluster: Vec<String>,
    /// Keep the limits in the Redis master these Sentinels name `--redis-master`, shared by
    /// every replica and followed through failovers (`redis://10.0.0.5:26379,...`).
    #[arg(
        long,
        value_name = "URL[,URL...]",
        value_delimiter = ',',
        conflicts_with_all = ["redis", "redis_cluster"],
        requires = "redis_master"
    )]
    redis_sentinel: Vec<String>,
    /// The name the Sentinels know the master by (`sentinel monitor NAME ...`).
    #[arg(long, value_name = "NAME", requires = "redis_sentinel")]
    redis_master: Option<String>,
    /// The prefix of the limits' keys in Redis.
    #[arg(long, value_name = "P", default_value = "billing", requires = "store")]
    redis_prefix: String,
    /// The secret caller keys are hashed under in Redis (the same on every replica; needed
    /// with `--rate-limit`, whose budgets are per customer, and with `--oauth-issuer`, whose
    /// are per verified subject). `MCP_FUSION_REDIS_KEY_SECRET` in the environment does as
    /// well, without showing it in the process list.
    #[arg(
        long,
        value_name = "SECRET",
        env = "MCP_FUSION_REDIS_KEY_SECRET",
        requires = "store"
    )]
    redis_key_secret: Option<String>,
    /// Seconds Redis has to answer before it counts as unavailable.
    #[arg(long, value_name = "S", default_value = "0.25", value_parser = seconds, requires = "store")]
    redis_timeout: Duration,
    /// Serve calls when Redis cannot answer, under this replica's own limits (by default they
    /// are refused with SERVER_BUSY).
    #[arg(long, requires = "store")]
    fail_open: bool,
    /// How many replicas share the limits: with `--fail-open`, each keeps its share of every
    /// limit while Redis cannot answer.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "store")]
    redis_replicas: u32,
    /// Seconds a concurrency lease outlives its action's deadline (how long a slot outlives a
    /// replica that died holding it).
    #[arg(long, value_name = "S", default_value = "5", value_parser = seconds, requires = "store")]
    lease_margin: Duration,
    /// Serve with this contract lockfile: validation errors tell the model what changed.
    #[arg(long, value_name = "PATH")]
    lock: Option<PathBuf>,
    /// Print what changed since the lockfile at PATH, and exit (1 when something did).
    #[arg(long, value_name = "PATH")]
    contract_diff: Option<PathBuf>,
    /// Write the lockfile to PATH, and exit.
    #[arg(long, value_name = "PATH")]
    contract_write: Option<PathBuf>,
    /// Seconds calls in flight may still run after stdin closes or a shutdown signal
    /// [default: an export's deadline, ten times `--export-seconds`].
    #[arg(long, value_name = "S", value_parser = seconds)]
    drain: Option<Duration>,
    /// stdio: the longest message read, in bytes.
    #[arg(long, value_name = "N", default_value_t = StdioOptions::default().max_line_bytes)]
    max_line_bytes: usize,
    /// stdio: how many requests may wait for their answer to be written.
    #[arg(long, value_name = "N", default_value_t = StdioOptions::default().max_pending_answers)]
    max_pending_answers: usize,
    /// HTTP: the largest request body, in bytes.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::default().max_body_bytes)]
    max_body_bytes: usize,
    /// HTTP: how many request bodies are parsed at once.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::default().max_parsing)]
    max_parsing: usize,
    /// HTTP: how many connections are open at once.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::default().connections.max_connections)]
    max_connections: usize,
    /// HTTP: how many sessions live at once.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::default().max_sessions)]
    max_sessions: usize,
    /// HTTP: seconds a client has to send a request's headers.
    #[arg(long, value_name = "S", default_value = "10", value_parser = seconds)]
    header_timeout: Duration,
    /// HTTP: seconds a client has to send a request's body.
    #[arg(long, value_name = "S", default_value = "30", value_parser = seconds)]
    body_timeout: Duration,
    /// HTTP: seconds a connection may stay idle.
    #[arg(long, value_name = "S", default_value = "60", value_parser = seconds)]
    idle_timeout: Duration,
    /// HTTP: seconds a session lives without a message from its client.
    #[arg(long, value_name = "S", default_value = "120", value_parser = seconds)]
    session_keep_alive: Duration,
}

fn rate_limit(text: &str) -> Result<(u64, u64), String> {
    text.split_once('/')
        .and_then(|(max, s)| Some((max.parse().ok()?, s.parse().ok()?)))
        .ok_or_else(|| format!("{text:?}: MAX/SECONDS, such as 120/60"))
}

/// The server as the flags describe it.
fn describe(args: &Args) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    let mut server = Server::builder("billing-server", env!("CARGO_PKG_VERSION"))
        .instructions("Invoices of a small business. Call billing with an `action`.")
        .tool_with(
            billing::Billing::seeded().exporting_in(args.export_seconds),
            ToolSettings::new().middleware(billing::ExportDeadline::of(args.export_seconds)),
        );
    if let Some((max, seconds)) = args.rate_limit {
        server = server.rate_limit(max, Duration::from_secs(seconds));
        // With OAuth, each verified subject has its own budget (the server's default).
        if args.oauth_issuer.is_none() {
            server = server.rate_limit_key(|call| {
                let customer = call.arguments().get("customer_email")?.as_str()?;
                Some(customer.to_owned())
            });
        }
    }
    if let Some(max) = args.rate_limit_keys {
        server = server.max_rate_limit_keys(max);
    }
    server = server.task_lease(args.task_lease);
    let (store, tasks) = match (&args.redis, &args.redis_master) {
        (Some(url), _) => (
            Some(RedisStore::builder(url.as_str())),
            Some(RedisTaskStore::builder(url.as_str())),
        ),
        (None, Some(name)) => (
            Some(RedisStore::sentinel(&args.redis_sentinel, name.as_str())),
            Some(RedisTaskStore::sentinel(
                &args.redis_sentinel,
                name.as_str(),
            )),
        ),
        (None, None) if !args.redis_cluster.is_empty() => (
            Some(RedisStore::cluster(&args.redis_cluster)),
            Some(RedisTaskStore::cluster(&args.redis_cluster)),
        ),
        (None, None) => (None, None),
    };
    if let Some(tasks) = tasks {
        let mut tasks = tasks
            .prefix(args.redis_prefix.as_str())
            .timeout(args.redis_timeout);
        if let Some(secret) = &args.redis_key_secret {
            tasks = tasks.key_secret(secret);
        }
        server = server.task_store(tasks.build()?);
    }
    if let Some(store) = store {
        let mut store = store
            .fail(match args.fail_open {
                true => FailPolicy::Open,
                false => FailPolicy::Closed,
            })
            .prefix(args.redis_prefix.as_str())
            .replicas(args.redis_replicas)
            .timeout(args.redis_timeout)
            // The export, the one action held by a concurrency limit, has its deadline from
            // the command line (`ExportDeadline`), not declared: its leases last that long
            // plus the margin, as a declared deadline's would.
            .leases(args.lease_margin, export_deadline(args) + args.lease_margin);
        if let Some(secret) = &args.redis_key_secret {
            store = store.key_secret(secret);
        }
        let store = store.build()?;
        server = server.limit_store(store);
    }
    if !args.no_audit {
        server = server.middleware(Audit);
    }
    if args.flat {
        server = server.exposition(Exposition::Flat);
    }
    if let Some(lockfile) = &args.lock {
        server = server.contract_lock(Contract::read(lockfile)?);
    }
    Ok(server)
}

/// The longest a call may run: an export's deadline (the default drain).
fn export_deadline(args: &Args) -> Duration {
    billing::ExportDeadline::of(args.export_seconds).0
}

/// SIGTERM (what an orchestrator sends) or Ctrl-C.
async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("billing: stopping");
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = Args::parse();
    cli::log_to_stderr();
    let server = describe(&args)?;
    if let Some(status) = contract_flags::run(
        &server,
        args.contract_diff.as_deref(),
        args.contract_write.as_deref(),
    ) {
        return Ok(status);
    }
    let server = server.build()?;
    match &args.http {
        None => {
            let mut options = StdioOptions::default();
            options.max_line_bytes = args.max_line_bytes;
            options.max_pending_answers = args.max_pending_answers;
            options.drain = args.drain.or(Some(export_deadline(&args)));
            server
                .serve_stdio(options)
                .with_graceful_shutdown(stop_signal())
                .await?;
        }
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "billing: streamable HTTP on http://{}/mcp",
                listener.local_addr()?
            );
            let mut options = HttpOptions::default();
            options.stateless = args.stateless;
            options.max_body_bytes = args.max_body_bytes;
            options.max_parsing = args.max_parsing;
            options.connections.max_connections = args.max_connections;
            options.max_sessions = args.max_sessions;
            options.connections.header_read_timeout = args.header_timeout;
            options.body_read_timeout = args.body_timeout;
            options.connections.idle_timeout = args.idle_timeout;
            options.session_keep_alive = args.session_keep_alive;
            options.drain = args.drain.or(Some(export_deadline(&args)));
            if let (Some(issuer), Some(audience)) = (&args.oauth_issuer, &args.oauth_audience) {
                let mut verifier = JwtVerifier::new(issuer, audience);
                if let Some(jwks) = &args.oauth_jwks {
                    verifier = verifier.jwks_url(jwks);
                }
                verifier = verifier.require_at_jwt(!args.oauth_untyped);
                eprintln!("billing: OAuth: tokens of {issuer} for {audience}");
                options.oauth = Some(OAuth::jwt(verifier));
            }
            server
                .serve_http(listener, options)
                .with_graceful_shutdown(stop_signal())
                .await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
