//! What a task costs its store: a task's create and its `tasks/get` read, in microseconds, in
//! process (`MemoryTaskStore`) and on a Redis of its own (`RedisTaskStore`, started here on a
//! free loopback port, like the tests'), interleaved in rounds so both see the same machine;
//! and the memory a held task takes in each (heap bytes counted by this binary's allocator for
//! the process, `INFO memory`'s `used_memory` for Redis).
//!
//! `cargo run --release -p mcp-fusion-drivers --bin task_cost [-- TASKS_PER_ROUND ROUNDS]`
//! (defaults 2000, 5). Needs `redis-server` on the PATH. Prints the medians (p50) and p99 of
//! each operation, beside the floor (one `PING` through the same client library), and the bytes
//! per task held `working` and `completed` with a small result.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use mcp_fusion::rmcp::model::JsonObject;
use mcp_fusion::server::tasks::{MemoryTaskStore, NewTask, RedisTaskStore, TaskStore, TaskUpdate};

/// Counts the heap bytes in use, to weigh what the in-process store holds.
struct Counting;

static IN_USE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is handed to the system allocator unchanged; only a counter is added.
#[allow(unsafe_code)] // A global allocator is an unsafe trait.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        IN_USE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

type Error = Box<dyn std::error::Error>;

/// How long a task is kept: longer than the run.
const TTL: Duration = Duration::from_secs(600);

/// Task ids as a server mints them: 32 hex digits.
fn ids(round: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("{:08x}{:024x}", round as u64 + 1, i as u64))
        .collect()
}

/// A small result: what a short export answers.
fn small_result() -> JsonObject {
    serde_json::from_value(serde_json::json!({
        "content": [{"type": "text", "text": "id,customer_email,amount_cents\ninv_2026_0001,ada@example.com,12000"}],
        "isError": false
    }))
    .expect("an object")
}

/// Creates then reads `ids` in `store`, adding each operation's time.
async fn round(
    store: &dyn TaskStore,
    ids: &[String],
    creates: &mut Vec<Duration>,
    gets: &mut Vec<Duration>,
) -> Result<(), Error> {
    for id in ids {
        let started = Instant::now();
        store
            .create(NewTask::new(id, None, TTL).max_per_caller(usize::MAX))
            .await?;
        creates.push(started.elapsed());
    }
    for id in ids {
        let started = Instant::now();
        let read = store.get(None, id).await?;
        gets.push(started.elapsed());
        assert!(read.is_some(), "task {id} reads back");
    }
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1e6
}

fn row(what: &str, mut times: Vec<Duration>) {
    times.sort_unstable();
    println!(
        "| {what} | {:.1} | {:.1} |",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}

/// `used_memory` of the Redis at `url`, in bytes.
fn redis_used(connection: &mut redis::Connection) -> Result<i64, Error> {
    let info: String = redis::cmd("INFO").arg("memory").query(connection)?;
    let used = info
        .lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .ok_or("no used_memory in INFO memory")?;
    Ok(used.trim().parse()?)
}

/// Bytes per task `store` holds for `count` tasks, `working` then `completed`, as `weigh` reads.
async fn per_task(
    store: &dyn TaskStore,
    count: usize,
    mut weigh: impl FnMut() -> Result<i64, Error>,
) -> Result<(f64, f64), Error> {
    let ids = ids(1_000, count);
    let before = weigh()?;
    for id in &ids {
        store
            .create(NewTask::new(id, None, TTL).max_per_caller(usize::MAX))
            .await?;
    }
    let working = weigh()?;
    for id in &ids {
        store
            .record(id, TaskUpdate::Completed(small_result()))
            .await?;
    }
    let completed = weigh()?;
    let per = |bytes: i64| bytes as f64 / count as f64;
    Ok((per(working - before), per(completed - before)))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let per_round = args.first().copied().unwrap_or(2000);
    let rounds = args.get(1).copied().unwrap_or(5);
    let redis = mcp_fusion_drivers::redis_server::RedisServer::start()?;
    let on_redis = RedisTaskStore::builder(redis.url()).build()?;
    let mut connection = redis::Client::open(redis.url())?.get_connection()?;

    let (mut memory_creates, mut memory_gets) = (Vec::new(), Vec::new());
    let (mut redis_creates, mut redis_gets) = (Vec::new(), Vec::new());
    let mut pings = Vec::new();
    let mut async_connection = redis::Client::open(redis.url())?
        .get_multiplexed_async_connection()
        .await?;
    for r in 0..rounds {
        // A store per round, so each round creates into a store of the same size.
        let in_memory = MemoryTaskStore::new().max_tasks(usize::MAX);
        let ids = ids(r, per_round);
        round(&in_memory, &ids, &mut memory_creates, &mut memory_gets).await?;
        round(&on_redis, &ids, &mut redis_creates, &mut redis_gets).await?;
        for _ in 0..per_round {
            let started = Instant::now();
            let _: String = redis::cmd("PING")
                .query_async(&mut async_connection)
                .await?;
            pings.push(started.elapsed());
        }
        let _: () = redis::cmd("FLUSHALL").query(&mut connection)?;
    }

    println!("{per_round} tasks × {rounds} rounds per row, interleaved; Redis on loopback");
    println!("| operation | p50 µs | p99 µs |");
    println!("|---|---|---|");
    row("create, in process", memory_creates);
    row("get, in process", memory_gets);
    row("create, on Redis", redis_creates);
    row("get, on Redis", redis_gets);
    row("Redis PING (the floor)", pings);

    let held = 10_000;
    let in_memory = MemoryTaskStore::new().max_tasks(usize::MAX);
    let (memory_working, memory_completed) = per_task(&in_memory, held, || {
        Ok(IN_USE.load(Ordering::Relaxed) as i64)
    })
    .await?;
    let (redis_working, redis_completed) =
        per_task(&on_redis, held, || redis_used(&mut connection)).await?;
    println!();
    println!(
        "{held} tasks held; a completed one holds a result of {} bytes of JSON",
        serde_json::Value::Object(small_result()).to_string().len()
    );
    println!("| store | bytes per working task | bytes per completed task |");
    println!("|---|---|---|");
    println!("| in process | {memory_working:.0} | {memory_completed:.0} |");
    println!("| Redis (used_memory) | {redis_working:.0} | {redis_completed:.0} |");
    Ok(())
}
