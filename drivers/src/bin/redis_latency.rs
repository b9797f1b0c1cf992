//! What keeping limits in Redis adds to a call: the same tool served in process with its limits
//! in memory and on a Redis of its own (started here on a free loopback port, like the tests'),
//! in one run, interleaved in rounds so both see the same machine.
//!
//! `cargo run --release -p mcp-fusion-drivers --bin redis_latency [-- CALLS_PER_ROUND ROUNDS]` (defaults 2000, 10).
//! Needs `redis-server` on the PATH. Prints p50 / p99 per call for each store, for an action with
//! a rate limit only (one Redis script) and one with a rate limit and a concurrency limit (two
//! scripts sent together, and a third after the call to give the lease back), beside the floor:
//! one `PING` through the same client library.

use std::time::{Duration, Instant};

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::CallToolRequestParams;
use mcp_fusion::server::limits::{FailPolicy, MemoryStore, RedisStore};
use mcp_fusion::{ToolError, tool};

/// Ping, limited.
struct Limited;

/// Limited pings.
#[tool(rate_limit(max = 1000000000, window = "1s"))]
impl Limited {
    /// A rate limit only.
    async fn rated(&self) -> Result<&'static str, ToolError> {
        Ok("pong")
    }

    /// A rate limit and a concurrency limit.
    #[action(concurrency(max_active = 64, max_queued = 64))]
    async fn slotted(&self) -> Result<&'static str, ToolError> {
        Ok("pong")
    }
}

fn params(action: &str) -> CallToolRequestParams {
    let arguments = serde_json::json!({ "action": action });
    CallToolRequestParams::new("limited").with_arguments(arguments.as_object().unwrap().clone())
}

async fn round(server: &Server, action: &str, calls: usize, into: &mut Vec<Duration>) {
    let params = params(action);
    for _ in 0..calls {
        let started = Instant::now();
        let result = server.call(params.clone()).await.expect("a known tool");
        into.push(started.elapsed());
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1e6
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let calls = args.first().copied().unwrap_or(2000);
    let rounds = args.get(1).copied().unwrap_or(10);
    let redis = mcp_fusion_drivers::redis_server::RedisServer::start()?;
    let memory = Server::builder("memory", "1")
        .limit_store(MemoryStore::new())
        .tool(Limited)
        .build()?;
    let shared = Server::builder("redis", "1")
        .limit_store(
            RedisStore::builder(redis.url())
                .fail(FailPolicy::Closed)
                .build()?,
        )
        .tool(Limited)
        .build()?;

    println!("{calls} calls × {rounds} rounds per row, interleaved; Redis on loopback");
    println!(
        "| action | memory p50 | memory p99 | Redis p50 | Redis p99 | added p50 | added p99 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for action in ["rated", "slotted"] {
        // Warm-up: connections, scripts loaded, caches.
        let mut ignored = Vec::new();
        round(&memory, action, 500, &mut ignored).await;
        round(&shared, action, 500, &mut ignored).await;
        let (mut in_memory, mut on_redis) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            round(&memory, action, calls, &mut in_memory).await;
            round(&shared, action, calls, &mut on_redis).await;
        }
        in_memory.sort();
        on_redis.sort();
        let (m50, m99) = (percentile(&in_memory, 0.5), percentile(&in_memory, 0.99));
        let (r50, r99) = (percentile(&on_redis, 0.5), percentile(&on_redis, 0.99));
        println!(
            "| {action} | {m50:.1} µs | {m99:.1} µs | {r50:.1} µs | {r99:.1} µs | {:.1} µs | {:.1} µs |",
            r50 - m50,
            r99 - m99
        );
    }
    // The floor: one round trip of the client library, nothing else.
    let client = redis::Client::open(redis.url())?;
    let mut connection = redis::aio::ConnectionManager::new(client).await?;
    let mut pings = Vec::new();
    for _ in 0..rounds * calls {
        let started = Instant::now();
        let _: String = redis::cmd("PING").query_async(&mut connection).await?;
        pings.push(started.elapsed());
    }
    pings.sort();
    println!(
        "| (one PING) | | | {:.1} µs | {:.1} µs | | |",
        percentile(&pings, 0.5),
        percentile(&pings, 0.99)
    );
    let keys = redis.integer(&["DBSIZE"]);
    println!("keys in Redis afterwards: {keys}");
    Ok(())
}
