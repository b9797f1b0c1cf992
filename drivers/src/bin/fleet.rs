//! The ceiling of limits kept by a fleet: N replicas of the billing server (stateless HTTP,
//! release build) with their limits in memory (each replica its own: the floor), on one Redis
//! node, and on a three-master Redis Cluster, all started here on loopback; M callers, each on
//! a keep-alive connection, sending a mix of limited calls round-robin over the replicas for a
//! while. One run, every store and replica count in turn.
//!
//! `cargo run --release -p mcp-fusion-drivers --bin fleet`, with `FLEET_REPLICAS` (default
//! `1,3,6`), `FLEET_CALLERS` (32), `FLEET_SECONDS` (5), `FLEET_STORES` (`memory,node,cluster`).
//! Needs `redis-server` on the PATH.
//!
//! The replicas run with `--rate-limit 600/60`: the tool's budget of 600 calls a minute per
//! customer (its `customer_email`; calls naming none share one budget). The mix, per caller in
//! turn: `list_invoices` and `create_invoice` of the caller's customer (create also has its own
//! 10 a minute per customer) and `get_invoice` (no customer: the shared budget). Reported per
//! store and replica count: calls answered per second, how many were admitted and refused,
//! p50/p99 of each call as the caller saw it, the Redis servers' CPU per admitted call, and
//! whether any limit was exceeded fleet-wide (GCRA admits a full budget at once, then the
//! limit's pace: a customer's creates over 10 + 10/min, its calls or the gets over 600 +
//! 600/min for the run's length): with Redis the fleet holds each limit exactly; in memory every
//! replica holds its own, so the fleet may admit N times.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_fusion_drivers::measure::{cpu_ns, env_list, env_usize, percentile_ms};
use mcp_fusion_drivers::raw_http::{Billing, Pool};
use mcp_fusion_drivers::redis_server::{RedisCluster, RedisServer};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A customer's calls a minute (the tool's limit), and the calls naming no customer.
const PER_CUSTOMER: usize = 600;
/// Customers, so that budgets spread over the cluster's slots.
const CUSTOMERS: usize = 64;
/// create_invoice's own limit, a minute, per customer (the billing example's).
const CREATES: usize = 10;

/// Where the fleet keeps its limits.
enum Store {
    Memory,
    Node(RedisServer),
    Cluster(RedisCluster),
}

impl Store {
    fn start(kind: &str) -> Result<Store, Error> {
        Ok(match kind {
            "memory" => Store::Memory,
            "node" => Store::Node(RedisServer::start()?),
            "cluster" => Store::Cluster(RedisCluster::start(3)?),
            other => return Err(format!("unknown store {other:?}").into()),
        })
    }

    fn args(&self) -> Vec<String> {
        let secret = [
            "--redis-key-secret".into(),
            "a fleet driver secret, 32 bytes".into(),
        ];
        match self {
            Store::Memory => Vec::new(),
            Store::Node(redis) => [vec!["--redis".into(), redis.url()], secret.to_vec()].concat(),
            Store::Cluster(cluster) => [
                vec!["--redis-cluster".into(), cluster.urls()],
                secret.to_vec(),
            ]
            .concat(),
        }
    }

    /// The Redis servers' CPU so far, in ns.
    fn cpu(&self) -> u64 {
        let pids: Vec<u32> = match self {
            Store::Memory => Vec::new(),
            Store::Node(redis) => redis.pid().into_iter().collect(),
            Store::Cluster(cluster) => cluster.nodes.iter().filter_map(RedisServer::pid).collect(),
        };
        pids.iter().map(|pid| cpu_ns(*pid).unwrap_or(0)).sum()
    }
}

/// What the callers saw.
#[derive(Default)]
struct Seen {
    latencies: Vec<Duration>,
    admitted: usize,
    refused: usize,
    failed: usize,
    /// Admitted per customer: creates, and every call naming it.
    creates: Vec<usize>,
    keyed: Vec<usize>,
    gets: usize,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            creates: vec![0; CUSTOMERS],
            keyed: vec![0; CUSTOMERS],
            ..Seen::default()
        }
    }
}

fn body(id: u64, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "billing", "arguments": arguments}})
    .to_string()
    .into_bytes()
}

/// The calls of caller `c`, in the order it sends them: (kind, body).
fn mix(c: usize) -> Vec<(&'static str, Vec<u8>)> {
    let email = format!("customer{}@example.com", c % CUSTOMERS);
    vec![
        (
            "list",
            body(
                1,
                json!({"action": "list_invoices", "customer_email": email, "limit": 1}),
            ),
        ),
        (
            "get",
            body(2, json!({"action": "get_invoice", "id": "inv_2026_0001"})),
        ),
        (
            "create",
            body(
                3,
                json!({"action": "create_invoice", "customer_email": email,
                           "amount_cents": 100, "currency": "EUR",
                           "lines": [{"description": "Tea", "quantity": 1}]}),
            ),
        ),
    ]
}

async fn caller(c: usize, pools: Arc<Vec<Pool>>, until: Instant) -> Seen {
    let calls = mix(c);
    let mut seen = Seen::new();
    let mut n = c;
    while Instant::now() < until {
        let (kind, body) = &calls[n % calls.len()];
        // Each kind of call goes to every replica in turn.
        let pool = &pools[(n / calls.len()) % pools.len()];
        n += 1;
        let started = Instant::now();
        let answer = pool.post(body).await;
        seen.latencies.push(started.elapsed());
        let Ok(answer) = answer else {
            seen.failed += 1;
            continue;
        };
        let answer: Value = serde_json::from_slice(&answer).unwrap_or_default();
        let result = &answer["result"];
        if result["isError"] == false {
            seen.admitted += 1;
            match *kind {
                "get" => seen.gets += 1,
                "create" => {
                    seen.creates[c % CUSTOMERS] += 1;
                    seen.keyed[c % CUSTOMERS] += 1;
                }
                _ => seen.keyed[c % CUSTOMERS] += 1,
            }
        } else {
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            match text.contains("RATE_LIMITED") || text.contains("SERVER_BUSY") {
                true => seen.refused += 1,
                false => seen.failed += 1,
            }
        }
    }
    seen
}

async fn run(kind: &str, replicas: usize, callers: usize, seconds: u64) -> Result<String, Error> {
    let store = Store::start(kind)?;
    let billing = mcp_fusion_drivers::artifacts::billing();
    let rate = format!("{PER_CUSTOMER}/60");
    let mut args: Vec<String> = ["--stateless", "--no-audit", "--rate-limit", &rate]
        .map(String::from)
        .to_vec();
    args.extend(store.args());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut fleet = Vec::new();
    for _ in 0..replicas {
        fleet.push(Billing::start(&billing, &args).await?);
    }
    let pools: Arc<Vec<Pool>> = Arc::new(
        fleet
            .iter()
            .map(|b| Pool::new(&format!("http://{}/mcp", b.addr)))
            .collect::<Result<_, _>>()?,
    );
    let cpu_before = store.cpu();
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..callers)
        .map(|c| tokio::spawn(caller(c, pools.clone(), until)))
        .collect();
    let mut all = Seen::new();
    for task in tasks {
        let seen = task.await?;
        all.latencies.extend(seen.latencies);
        all.admitted += seen.admitted;
        all.refused += seen.refused;
        all.failed += seen.failed;
        all.gets += seen.gets;
        for (total, n) in all.creates.iter_mut().zip(seen.creates) {
            *total += n;
        }
        for (total, n) in all.keyed.iter_mut().zip(seen.keyed) {
            *total += n;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let redis_cpu = store.cpu().saturating_sub(cpu_before);
    all.latencies.sort();
    let answered = all.latencies.len();
    // In memory each replica keeps its own budgets: the fleet may admit N times the limit.
    let allowed = match store {
        Store::Memory => replicas,
        _ => 1,
    };
    // GCRA: a full budget at once, then the limit's pace (max per minute) for the rest of the
    // run, each replica's own in memory.
    let budget = |max: usize| (max + (max as f64 * elapsed / 60.0).ceil() as usize) * allowed;
    let most = |counts: &[usize]| counts.iter().copied().max().unwrap_or(0);
    let over = most(&all.creates) > budget(CREATES)
        || most(&all.keyed) > budget(PER_CUSTOMER)
        || all.gets > budget(PER_CUSTOMER);
    let held = match over {
        false => format!("yes (creates ≤ {})", most(&all.creates)),
        true => format!(
            "NO (a customer's creates {}, calls {}; gets {})",
            most(&all.creates),
            most(&all.keyed),
            all.gets
        ),
    };
    let cpu_per_call = match (kind, all.admitted) {
        ("memory", _) | (_, 0) => "-".to_owned(),
        _ => format!("{:.1}", redis_cpu as f64 / 1000.0 / all.admitted as f64),
    };
    Ok(format!(
        "| {kind} | {replicas} | {:.0} | {} | {} | {} | {:.2} | {:.2} | {cpu_per_call} | {held} |",
        answered as f64 / elapsed,
        all.admitted,
        all.refused,
        all.failed,
        percentile_ms(&all.latencies, 0.50),
        percentile_ms(&all.latencies, 0.99),
    ))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let replicas = env_list("FLEET_REPLICAS", "1,3,6");
    let stores = env_list("FLEET_STORES", "memory,node,cluster");
    let callers = env_usize("FLEET_CALLERS", 32).map_err(|e| e.to_string())?;
    let seconds = env_usize("FLEET_SECONDS", 5).map_err(|e| e.to_string())? as u64;
    println!(
        "{callers} callers, {seconds} s per row; {PER_CUSTOMER} calls/min per customer ({CUSTOMERS} customers) and for gets, {CREATES} creates/min per customer"
    );
    println!(
        "| store | replicas | calls/s | admitted | refused | failed | p50 ms | p99 ms | Redis CPU µs / admitted call | limits held |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for kind in &stores {
        for n in &replicas {
            let n: usize = n.parse()?;
            println!("{}", run(kind, n, callers, seconds).await?);
        }
    }
    Ok(())
}
