//! Limits shared by a fleet: billing replicas as separate processes on stateless streamable
//! HTTP, one real Redis started by the test on a free loopback port (`redis-server` must be
//! installed; the test fails, never skips, when it cannot start), spoken to in raw HTTP.

use std::time::Duration;

use mcp_fusion::server::ServerBuilder;
use mcp_fusion_drivers::raw_http;
use mcp_fusion_drivers::redis_server;
use raw_http::Billing;
use redis_server::RedisServer;
use serde_json::{Value, json};
use sha2::Digest;
use tokio::time::Instant;

use crate::support::{eventually, latest_score};

/// The secret the replicas hash caller keys under.
const SECRET: &str = "a test secret of more than sixteen bytes";

/// Every key under `prefix` and every value, read as whoever can read Redis would (`SCAN`,
/// `DUMP`), holds none of the caller keys, nor their plain SHA-256: only keyed hashes.
fn assert_keys_unreadable(redis: &RedisServer, prefix: &str, callers: &[String]) {
    use redis::Commands;
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let keys: Vec<String> = connection
        .scan_match::<_, String>(format!("{prefix}*"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        keys.iter().filter(|k| k.contains(":rate:")).count() >= callers.len(),
        "{keys:?}"
    );
    for key in &keys {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut connection).unwrap();
        let dump = String::from_utf8_lossy(&dump);
        for caller in callers {
            let plain: String = sha2::Sha256::digest(caller.as_bytes())[..16]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            for text in [caller.as_str(), plain.as_str()] {
                assert!(!key.contains(text), "{key} names {caller}");
                assert!(!dump.contains(text), "{key}'s value names {caller}");
            }
        }
    }
}

fn redis() -> RedisServer {
    RedisServer::start().unwrap_or_else(|e| panic!("these tests need a Redis of their own: {e}"))
}

/// `count` replicas of the billing server on `redis`, each with `args`.
async fn replicas(redis: &RedisServer, count: usize, args: &[&str]) -> Vec<Billing> {
    let mut started = Vec::new();
    for _ in 0..count {
        started.push(replica(&[], redis, args).await);
    }
    started
}

async fn replica(env: &[(&str, &str)], redis: &RedisServer, args: &[&str]) -> Billing {
    let url = redis.url();
    let mut all = vec!["--stateless", "--redis", &url];
    all.extend_from_slice(args);
    Billing::start_with_env(env, &mcp_fusion_drivers::artifacts::billing(), &all)
        .await
        .expect("a billing replica starts")
}

fn call(id: u64, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "billing", "arguments": arguments}})
}

pub(crate) fn create_invoice(id: u64) -> Value {
    call(
        id,
        json!({"action": "create_invoice", "customer_email": "ada@example.com",
               "amount_cents": 1200, "currency": "EUR",
               "lines": [{"description": "Tea", "quantity": 1}]}),
    )
}

fn export(id: u64) -> Value {
    call(id, json!({"action": "export_invoices", "format": "csv"}))
}

/// The outcome of one call: `ok`, or the envelope's code; panics unless the call got exactly
/// one JSON-RPC answer with its own id.
async fn outcome(addr: String, message: Value) -> String {
    let reply = raw_http::post(&addr, &[], message.to_string().as_bytes()).await;
    assert_eq!(reply.status, 200, "{addr}: {}", reply.body);
    let answers = reply.messages();
    assert_eq!(answers.len(), 1, "one answer per call: {}", reply.body);
    assert_eq!(answers[0]["id"], message["id"]);
    let result = &answers[0]["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    if result["isError"] == false {
        return "ok".to_owned();
    }
    let code = text
        .split("code=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("an envelope: {text}"));
    match text.contains("cannot take calls right now") {
        true => format!("{code} (store)"),
        false => code.to_owned(),
    }
}

/// A call to a replica that will be killed while it runs: the HTTP status (0 for none).
async fn hold(addr: String, message: Value) -> u16 {
    raw_http::post(&addr, &[], message.to_string().as_bytes())
        .await
        .status
}

/// How long a wait may last before the test calls it hung: far above what any machine needs,
/// never a claim about speed (timing is the drivers' business).
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

const EXPORT_SLOTS: &str = "billing:slots:billing.export_invoices";

/// Starts two exports on `replica`, waits until both hold a lease in Redis, then kills the
/// replica (SIGKILL): the calls get no answer and the leases stay. When it was killed.
async fn kill_holding_leases(redis: &RedisServer, replica: &mut Billing, first_id: u64) -> Instant {
    let holding: Vec<_> = (0..2)
        .map(|i| tokio::spawn(hold(replica.addr.clone(), export(first_id + i))))
        .collect();
    eventually("both exports' leases in Redis", async || {
        (redis.integer(&["ZCARD", EXPORT_SLOTS]) >= 2).then_some(())
    })
    .await;
    replica.child.kill().await.unwrap();
    let killed = Instant::now();
    for call in holding {
        assert_eq!(
            call.await.unwrap(),
            0,
            "the killed replica's calls got no answer"
        );
    }
    killed
}

/// A dead replica's leases last their time to live (the deadline, 2 s, plus the 1 s margin),
/// on Redis's clock: no less. (Not forever either: the call that waited for them ran, where
/// leases that never expired would have had it refused at its own deadline.)
fn assert_lease_lifetime(killed: Instant) {
    let waited = killed.elapsed();
    assert!(waited > Duration::from_millis(2_400), "{waited:?}");
}

/// Sends every customer's 10 lists at once, spread over `fleet`: each customer's 4 a minute are
/// admitted, wherever they land.
async fn each_customer_admitted_four(fleet: &[Billing], customers: &[&str]) {
    let n = customers.len();
    let calls = (0..10 * n)
        .map(|i| {
            let email = format!("{}@example.com", customers[i % n]);
            let list = call(
                i as u64,
                json!({"action": "list_invoices", "customer_email": email}),
            );
            (i % fleet.len(), list)
        })
        .collect();
    let outcomes = all_at_once(fleet, calls).await;
    for (c, customer) in customers.iter().enumerate() {
        let admitted = outcomes
            .iter()
            .enumerate()
            .filter(|(i, o)| i % n == c && *o == "ok")
            .count();
        assert_eq!(admitted, 4, "{customer}: {outcomes:?}");
    }
}

/// Sends every `(replica, message)` at once; the outcomes in order.
pub(crate) async fn all_at_once(fleet: &[Billing], calls: Vec<(usize, Value)>) -> Vec<String> {
    let tasks: Vec<_> = calls
        .into_iter()
        .map(|(i, message)| tokio::spawn(outcome(fleet[i].addr.clone(), message)))
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("a call task"));
    }
    outcomes
}

pub(crate) fn count(outcomes: &[String], what: &str) -> usize {
    outcomes.iter().filter(|o| *o == what).count()
}

#[tokio::test]
async fn three_replicas_admit_exactly_the_limit_together() {
    let redis = redis();
    let fleet = replicas(&redis, 3, &["--no-audit"]).await;

    // create_invoice: 10 per minute, from 30 calls spread over the replicas at once.
    let calls = (0..30).map(|i| (i % 3, create_invoice(i as u64))).collect();
    let outcomes = all_at_once(&fleet, calls).await;
    assert_eq!(count(&outcomes, "ok"), 10, "{outcomes:?}");
    assert_eq!(count(&outcomes, "RATE_LIMITED"), 20, "{outcomes:?}");

    // Per caller, on a fleet of its own (another prefix, the same Redis): each customer's 4
    // calls per minute, wherever they land.
    let keyed = [
        "--no-audit",
        "--rate-limit",
        "4/60",
        "--redis-prefix",
        "keyed",
        "--redis-key-secret",
        SECRET,
    ];
    let fleet = replicas(&redis, 3, &keyed).await;
    let customers = ["ada", "grace", "alan", "edsger"];
    each_customer_admitted_four(&fleet, &customers).await;
    assert_keys_unreadable(
        &redis,
        "keyed:",
        &customers.map(|c| format!("{c}@example.com")),
    );
    // A call the action's budget refuses gives the tool's back (REFUND): ada's tool budget of
    // 12 holds her 10 creates and 2 lists, whatever the 11th create did.
    let refund = [
        "--no-audit",
        "--rate-limit",
        "12/60",
        "--redis-prefix",
        "refund",
        "--redis-key-secret",
        SECRET,
    ];
    let fleet = replicas(&redis, 3, &refund).await;
    let list = |id| {
        call(
            id,
            json!({"action": "list_invoices", "customer_email": "ada@example.com"}),
        )
    };
    let calls = (0..11)
        .map(create_invoice)
        .chain([list(11), list(12), list(13)]);
    let mut outcomes = Vec::new();
    for (i, message) in calls.enumerate() {
        outcomes.push(outcome(fleet[i % 3].addr.clone(), message).await);
    }
    let expected: Vec<&str> = ["ok"; 10]
        .into_iter()
        .chain(["RATE_LIMITED", "ok", "ok", "RATE_LIMITED"])
        .collect();
    assert_eq!(outcomes, expected);

    // The buckets are keyed by a hash: no email is in Redis.
    let keys = redis.command(&["KEYS", "*example.com*"]).unwrap();
    assert_eq!(keys, "*0", "no caller key is stored as such");
}

/// Where each export call ran, as (start, end) in µs of the day, from the audit logs.
fn export_spans(log: &str) -> Vec<(i64, i64)> {
    log.lines()
        .filter(|line| line.contains("action=billing.export_invoices") && line.contains("ok"))
        .map(|line| {
            // `2026-12-01T07:30:23.426103Z  INFO mcp_fusion::audit: ... micros=200774`
            let time = &line[11..26];
            let parts: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
            let end = ((parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]) * 1e6) as i64;
            let micros: i64 = line.rsplit("micros=").next().unwrap().parse().unwrap();
            (end - micros, end)
        })
        .collect()
}

fn peak(spans: &[(i64, i64)]) -> usize {
    let mut events: Vec<(i64, i32)> = spans
        .iter()
        .flat_map(|&(start, end)| [(start, 1), (end, -1)])
        .collect();
    // At equal times an end comes first: back to back is not overlapping.
    events.sort();
    let (mut now, mut peak) = (0i32, 0i32);
    for (_, step) in events {
        now += step;
        peak = peak.max(now);
    }
    peak as usize
}

#[tokio::test]
async fn max_active_is_never_exceeded_fleet_wide() {
    let redis = redis();
    let fleet = replicas(&redis, 3, &[]).await;
    // Three waves of twelve exports (200 ms each), four per replica: 2 run fleet-wide, each
    // replica queues 2 of its own, the rest are told the tool is busy.
    let mut outcomes = Vec::new();
    for wave in 0..3 {
        let calls = (0..12)
            .map(|i| (i % 3, export(wave * 100 + i as u64)))
            .collect();
        outcomes.extend(all_at_once(&fleet, calls).await);
    }
    let ran = count(&outcomes, "ok");
    assert_eq!(ran + count(&outcomes, "SERVER_BUSY"), 36, "{outcomes:?}");
    assert!(ran >= 6, "{outcomes:?}");

    let mut spans = Vec::new();
    for billing in fleet {
        let mut billing = billing;
        billing.child.kill().await.unwrap();
        let log = String::from_utf8(billing.log.await.unwrap()).unwrap();
        spans.extend(export_spans(&log));
    }
    assert_eq!(spans.len(), ran, "every call that ran is in an audit log");
    assert_eq!(peak(&spans), 2, "at most 2 at once, fleet-wide: {spans:?}");
}

#[tokio::test]
async fn a_replica_killed_holding_leases_frees_them_by_their_time_to_live() {
    let redis = redis();
    // Leases last export's deadline (2 s) plus 1 s.
    let args = ["--no-audit", "--lease-margin", "1"];
    let mut doomed = replica(&[], &redis, &args).await;
    let survivor = replica(&[], &redis, &args).await;
    let killed = kill_holding_leases(&redis, &mut doomed, 0).await;
    assert_eq!(
        redis.integer(&["ZCARD", EXPORT_SLOTS]),
        2,
        "the dead replica's leases"
    );

    // The survivor's call waits in line until they expire, then runs.
    assert_eq!(outcome(survivor.addr.clone(), export(9)).await, "ok");
    assert_lease_lifetime(killed);
    assert_eq!(outcome(survivor.addr.clone(), export(10)).await, "ok");
}

#[tokio::test]
async fn a_redis_outage_refuses_or_serves_as_configured_and_recovers() {
    let mut redis = redis();
    let closed = replica(&[], &redis, &["--no-audit"]).await;
    let mut open = replica(
        &[],
        &redis,
        &[
            "--fail-open",
            "--redis-prefix",
            "open",
            "--redis-replicas",
            "2",
        ],
    )
    .await;
    let (c, o) = (closed.addr.clone(), open.addr.clone());
    assert_eq!(outcome(c.clone(), create_invoice(1)).await, "ok");
    assert_eq!(outcome(o.clone(), create_invoice(2)).await, "ok");

    redis.stop();
    let mut id = 10;
    for _ in 0..3 {
        id += 1;
        // Fail closed: SERVER_BUSY with the §4 message.
        assert_eq!(
            outcome(c.clone(), create_invoice(id)).await,
            "SERVER_BUSY (store)"
        );
        assert_eq!(outcome(c.clone(), export(id)).await, "SERVER_BUSY (store)");
        // Fail open: served, under the replica's own limits.
        assert_eq!(outcome(o.clone(), create_invoice(id)).await, "ok");
        assert_eq!(outcome(o.clone(), export(id)).await, "ok");
        // Actions without limits never ask the store.
        let get = call(id, json!({"action": "get_invoice", "id": "inv_2026_0001"}));
        assert_eq!(outcome(c.clone(), get).await, "ok");
    }
    // Its share of create_invoice's 10 calls a minute, 10 / 2 replicas: 3 served above, 2
    // more, then refused as the limit would.
    for _ in 0..2 {
        id += 1;
        assert_eq!(outcome(o.clone(), create_invoice(id)).await, "ok");
    }
    id += 1;
    assert_eq!(outcome(o.clone(), create_invoice(id)).await, "RATE_LIMITED");
    let envelope = raw_http::post(&c, &[], create_invoice(99).to_string().as_bytes()).await;
    let text = envelope.message()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("<recovery>Wait, then call the tool again. If it keeps failing, tell the user.</recovery>")
            && text.contains("<retry_after>1 second</retry_after>"),
        "{text}"
    );

    redis.restart().expect("Redis starts again");
    // Both recover once Redis answers again: limited calls run, under the limits again.
    eventually("the closed replica to recover", async || {
        id += 1;
        (outcome(c.clone(), create_invoice(id)).await == "ok").then_some(())
    })
    .await;
    assert_eq!(
        redis.integer(&["EXISTS", "billing:rate:billing.create_invoice"]),
        1,
        "the budget is kept in Redis again"
    );
    // A replica that fails open serves either way (its own share spent, it refuses as the limit
    // does): it is back once its budget is in Redis.
    eventually("the open replica's budget in Redis again", async || {
        if redis.integer(&["EXISTS", "open:rate:billing.create_invoice"]) == 1 {
            return Some(());
        }
        id += 1;
        let served = outcome(o.clone(), create_invoice(id)).await;
        assert!(served == "ok" || served == "RATE_LIMITED", "{served}");
        None
    })
    .await;

    // The open replica logged the outage once, and its end.
    open.child.kill().await.unwrap();
    let log = String::from_utf8(open.log.await.unwrap()).unwrap();
    assert_eq!(
        log.matches("under this replica's own limits").count(),
        1,
        "{log}"
    );
    assert_eq!(log.matches("answers again").count(), 1, "{log}");
}

/// How to preload libfaketime (Debian's `faketime` package, Homebrew's `libfaketime`), which
/// moves the wall clock of the process it is preloaded into: the environment variables that
/// load it. `cargo xtask test` installs it.
fn preload_libfaketime() -> Vec<(&'static str, &'static str)> {
    let (variables, candidates): (&[(&str, &str)], &[&str]) = if cfg!(target_os = "macos") {
        (
            &[("DYLD_FORCE_FLAT_NAMESPACE", "1")],
            &[
                "/opt/homebrew/lib/faketime/libfaketime.1.dylib",
                "/usr/local/lib/faketime/libfaketime.1.dylib",
            ],
        )
    } else {
        (
            &[],
            &[
                "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
                "/usr/lib/faketime/libfaketimeMT.so.1",
                "/usr/local/lib/faketime/libfaketimeMT.so.1",
            ],
        )
    };
    let library = candidates
        .iter()
        .find(|path| std::path::Path::new(path).exists())
        .unwrap_or_else(|| {
            panic!("the clock-skew test needs libfaketime: `cargo xtask test` installs it")
        });
    let preload = if cfg!(target_os = "macos") {
        "DYLD_INSERT_LIBRARIES"
    } else {
        "LD_PRELOAD"
    };
    let mut env = vec![(preload, *library)];
    env.extend_from_slice(variables);
    env
}

/// Seconds of the day of the first timestamped line of a log.
fn first_time_of_day(log: &str) -> f64 {
    let line = log
        .lines()
        .find(|l| l.starts_with("20"))
        .unwrap_or_else(|| panic!("a timestamped line: {log}"));
    let parts: Vec<f64> = line[11..26]
        .split(':')
        .map(|p| p.parse().unwrap())
        .collect();
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
}

#[tokio::test]
async fn replicas_with_skewed_clocks_admit_what_the_fleet_admits() {
    let redis = redis();
    let args = ["--lease-margin", "1"];
    // The wall clock only: the monotonic clock (timers, deadlines) is every process's own.
    let skewed = |offset| {
        let mut env = preload_libfaketime();
        env.extend([("FAKETIME", offset), ("FAKETIME_DONT_FAKE_MONOTONIC", "1")]);
        env
    };
    let ahead = replica(&skewed("+1h"), &redis, &args).await;
    let behind = replica(&skewed("-1h"), &redis, &args).await;
    let on_time = replica(&[], &redis, &args).await;
    // One audited call, so that the replica ahead logs a timestamp of its own.
    let get = call(0, json!({"action": "get_invoice", "id": "inv_2026_0001"}));
    assert_eq!(outcome(ahead.addr.clone(), get).await, "ok");
    let fleet = [ahead, behind, on_time];

    // Rate limits: exactly 10 of 30, as without skew.
    let calls = (0..30).map(|i| (i % 3, create_invoice(i as u64))).collect();
    let outcomes = all_at_once(&fleet, calls).await;
    assert_eq!(count(&outcomes, "ok"), 10, "{outcomes:?}");

    // Leases: taken by the replica an hour ahead, which dies; the one an hour behind waits
    // their time to live (3 s) on Redis's clock, not an hour more or less.
    let [mut ahead, behind, _on_time] = fleet;
    let killed = kill_holding_leases(&redis, &mut ahead, 100).await;
    assert_eq!(outcome(behind.addr.clone(), export(200)).await, "ok");
    assert_lease_lifetime(killed);

    // The skew was real: the replica ahead logged (its audit lines) an hour ahead of us.
    let log = String::from_utf8(ahead.log.await.unwrap()).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        % 86_400.0;
    let skew = (first_time_of_day(&log) - now).rem_euclid(86_400.0);
    assert!((3_500.0..3_700.0).contains(&skew), "skew {skew} s: {log}");
}

#[tokio::test]
async fn per_caller_limits_on_redis_need_a_key_secret() {
    use mcp_fusion::server::limits::RedisStore;
    let server = |store: RedisStore| {
        mcp_fusion::Server::builder("billing-server", "1")
            .tool(crate::support::billing::Billing::seeded())
            .rate_limit(4, Duration::from_secs(60))
            .rate_limit_key(|call| Some(call.tool().to_owned()))
            .limit_store(store)
            .build()
    };
    // Connected lazily: nothing listens there, and nothing needs to.
    let url = "redis://127.0.0.1:1";
    let refused = server(RedisStore::builder(url).build().unwrap()).unwrap_err();
    assert!(refused.to_string().contains("key_secret"), "{refused}");
    let store = RedisStore::builder(url).key_secret(SECRET).build().unwrap();
    assert!(server(store).is_ok());
    // A tool keeping its limits in a store of its own: that store is asked.
    let own = |store: RedisStore| {
        mcp_fusion::Server::builder("billing-server", "1")
            .tool_with(
                crate::support::billing::Billing::seeded(),
                mcp_fusion::server::ToolSettings::new().limit_store(store),
            )
            .rate_limit(4, Duration::from_secs(60))
            .rate_limit_key(|call| Some(call.tool().to_owned()))
            .build()
    };
    let refused = own(RedisStore::builder(url).build().unwrap()).unwrap_err();
    let refused = refused.to_string();
    assert!(
        refused.contains("tool \"billing\"") && refused.contains("key_secret"),
        "{refused}"
    );
    assert!(own(RedisStore::builder(url).key_secret(SECRET).build().unwrap()).is_ok());
    // A secret short enough to guess is refused.
    assert!(
        RedisStore::builder(url)
            .key_secret("short")
            .build()
            .is_err()
    );
}

/// A billing server whose default rate limit (`max` calls a minute) is kept in `store`, per
/// `customer_email` when `keyed`.
fn billing_on(
    store: mcp_fusion::server::limits::RedisStore,
    max: u64,
    keyed: bool,
) -> ServerBuilder {
    let builder = mcp_fusion::Server::builder("billing-server", "1")
        .tool(crate::support::billing::Billing::seeded())
        .rate_limit(max, Duration::from_secs(60))
        .limit_store(store);
    match keyed {
        true => builder.rate_limit_key(|call| {
            Some(call.arguments().get("customer_email")?.as_str()?.to_owned())
        }),
        false => builder,
    }
}

/// `list_invoices` of `customer`, as a client would call it.
fn list_invoices(customer: &str) -> mcp_fusion::rmcp::model::CallToolRequestParams {
    serde_json::from_value(json!({"name": "billing", "arguments":
        {"action": "list_invoices", "customer_email": customer}}))
    .unwrap()
}

/// `ok`, or the code of the envelope a call was answered with (`SERVER_BUSY (store)` when the
/// store could not answer).
fn code_of(result: Option<mcp_fusion::rmcp::model::CallToolResult>) -> String {
    let result = result.expect("an answer");
    if result.is_error != Some(true) {
        return "ok".to_owned();
    }
    let text = result.content[0].as_text().unwrap().text.clone();
    let code = text
        .split("code=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("an envelope: {text}"));
    match text.contains("cannot take calls right now") {
        true => format!("{code} (store)"),
        false => code.to_owned(),
    }
}

/// The keys under `pattern`, as whoever reads Redis sees them.
fn keys(redis: &RedisServer, pattern: &str) -> Vec<String> {
    use redis::Commands;
    let client = redis::Client::open(redis.url()).unwrap();
    let mut connection = client.get_connection().unwrap();
    let mut keys: Vec<String> = connection
        .scan_match::<_, String>(pattern)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    keys.sort();
    keys
}

/// An OAuth resource server for these tests (nothing is verified before a request comes).
fn with_oauth() -> mcp_fusion::server::HttpOptions {
    use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
    let mut options = mcp_fusion::server::HttpOptions::default();
    options.stateless = true;
    let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp");
    options.oauth = Some(OAuth::jwt(verifier));
    options
}

/// A verified caller spends a budget of its own, named by its subject, as a `rate_limit_key`
/// would: a server keeping rate limits in a Redis store without a key secret is refused when
/// it is served with OAuth (the subjects would be stored as plain SHA-256, which whoever reads
/// Redis can test guesses of an email against), and serves with one, or without OAuth.
#[tokio::test]
async fn verified_subjects_on_redis_need_a_key_secret() {
    use mcp_fusion::server::limits::RedisStore;
    // Connected lazily: nothing listens there, and nothing needs to.
    let url = "redis://127.0.0.1:1";
    let unkeyed = billing_on(RedisStore::builder(url).build().unwrap(), 4, false)
        .build()
        .unwrap();
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        unkeyed.http_service(with_oauth())
    }))
    .expect_err("http_service refuses to serve verified callers' budgets unkeyed");
    let refused = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        refused.contains("HttpOptions::oauth") && refused.contains("key_secret"),
        "{refused}"
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = unkeyed.clone().serve_http(listener, with_oauth());
    let refused = tokio::time::timeout(PATIENCE, served.into_future())
        .await
        .expect("refused at once, not served")
        .expect_err("refused");
    let cause = std::error::Error::source(&refused).map(ToString::to_string);
    assert!(
        cause.as_deref().is_some_and(|c| c.contains("key_secret")),
        "{refused}: {cause:?}"
    );
    // Without OAuth, the budgets are the limit's own, shared: nothing to key.
    let _ = unkeyed.http_service(mcp_fusion::server::HttpOptions::default());
    // With a secret, verified subjects are keyed.
    let keyed = RedisStore::builder(url).key_secret(SECRET).build().unwrap();
    let keyed = billing_on(keyed, 4, false).build().unwrap();
    let _ = keyed.http_service(with_oauth());
}

/// A caller that reaches a store without a key secret some other way (a layer of the
/// application putting a `Caller` on the request) is not stored in Redis as a plain hash:
/// the call is answered as the store's fail policy says, and nothing names the caller.
#[tokio::test]
async fn a_caller_key_without_a_secret_is_never_stored() {
    use mcp_fusion::server::limits::RedisStore;
    use tower::ServiceExt;
    let redis = redis();
    let store = RedisStore::builder(redis.url())
        .prefix("unkeyed")
        .build()
        .unwrap();
    let server = billing_on(store, 4, false).build().unwrap();
    let mut options = mcp_fusion::server::HttpOptions::default();
    options.stateless = true;
    let endpoint = server.http_service(options);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "list_invoices"}}});
    let mut request = axum::http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(axum::body::Body::from(message.to_string()))
        .unwrap();
    request
        .extensions_mut()
        .insert(mcp_fusion::tools::Caller::new(
            "ada@example.com",
            Vec::<String>::new(),
        ));
    let reply = endpoint.oneshot(request).await.unwrap();
    let body = axum::body::to_bytes(axum::body::Body::new(reply.into_body()), usize::MAX)
        .await
        .unwrap();
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("cannot take calls right now"), "{body}");
    assert_eq!(keys(&redis, "unkeyed:*"), Vec::<String>::new());
}

/// A script Redis runs but fails (here the budget's key holds a hash, as a bug of ours or
/// another program writing under the prefix would leave it) is not an outage: the call is
/// answered as the fail policy says, the error is logged as the bug it is, and the store does
/// not log an outage, nor its end when the next script succeeds.
#[tokio::test(flavor = "current_thread")]
async fn a_script_error_is_a_bug_not_an_outage() {
    use mcp_fusion::server::limits::{FailPolicy, RedisStore};
    let redis = redis();
    let lines = crate::support::Lines::default();
    let _guard = lines.capture();
    let store = |prefix: &str, policy| {
        RedisStore::builder(redis.url())
            .prefix(prefix)
            .fail(policy)
            .build()
            .unwrap()
    };
    let open = billing_on(store("bug-open", FailPolicy::Open), 4, false)
        .build()
        .unwrap();
    let closed = billing_on(store("bug-closed", FailPolicy::Closed), 4, false)
        .build()
        .unwrap();
    for prefix in ["bug-open", "bug-closed"] {
        let bucket = format!("{prefix}:rate:billing");
        assert_eq!(redis.command(&["HSET", &bucket, "x", "1"]).unwrap(), ":1");
    }
    assert_eq!(code_of(open.call(list_invoices("a@x.com")).await), "ok");
    assert_eq!(
        code_of(closed.call(list_invoices("a@x.com")).await),
        "SERVER_BUSY (store)"
    );
    for prefix in ["bug-open", "bug-closed"] {
        redis
            .command(&["DEL", &format!("{prefix}:rate:billing")])
            .unwrap();
    }
    assert_eq!(code_of(open.call(list_invoices("a@x.com")).await), "ok");
    assert_eq!(code_of(closed.call(list_invoices("a@x.com")).await), "ok");
    let log = lines.text();
    assert_eq!(log.matches("WRONGTYPE").count(), 2, "{log}");
    assert!(!log.contains("cannot answer"), "{log}");
    assert!(!log.contains("answers again"), "{log}");
}

/// The caller keys a replica creates in Redis for one limit are capped as in memory
/// (`max_rate_limit_keys`): past the cap, calls under a key not yet tracked share one
/// overflow budget, so a flood of made-up keys cannot fill Redis.
#[tokio::test]
async fn caller_keys_in_redis_are_capped_per_limit() {
    use mcp_fusion::server::limits::RedisStore;
    let redis = redis();
    let store = RedisStore::builder(redis.url())
        .prefix("cap")
        .key_secret(SECRET)
        .build()
        .unwrap();
    let server = billing_on(store, 1, true)
        .max_rate_limit_keys(2)
        .build()
        .unwrap();
    // Two callers tracked, each with a budget of its own.
    assert_eq!(code_of(server.call(list_invoices("a@x.com")).await), "ok");
    assert_eq!(code_of(server.call(list_invoices("b@x.com")).await), "ok");
    assert_eq!(
        code_of(server.call(list_invoices("a@x.com")).await),
        "RATE_LIMITED"
    );
    // The rest share one budget: the first spends it, the others find it spent.
    assert_eq!(code_of(server.call(list_invoices("c@x.com")).await), "ok");
    for i in 0..20 {
        let made_up = format!("flood-{i}@x.com");
        assert_eq!(
            code_of(server.call(list_invoices(&made_up)).await),
            "RATE_LIMITED",
            "{made_up}"
        );
    }
    let stored = keys(&redis, "cap:rate:*");
    assert_eq!(stored.len(), 3, "two callers and the overflow: {stored:?}");
    assert_keys_unreadable(&redis, "cap", &["a@x.com".to_owned(), "b@x.com".to_owned()]);
}

/// Runs quickly, one at a time.
struct Quick;

/// Runs quickly.
#[mcp_fusion::tool]
impl Quick {
    /// Answers at once; one call at a time, none waiting.
    #[action(concurrency(max_active = 1, max_queued = 0))]
    async fn run(&self) -> Result<(), mcp_fusion::ToolError> {
        Ok(())
    }
}

/// Subscribes to `channel` (raw RESP, a connection of its own); the returned future completes
/// with the first message published on it.
async fn first_message(redis: &RedisServer, channel: &str) -> impl Future<Output = String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", redis.port))
        .await
        .unwrap();
    let mut stream = BufReader::new(stream);
    let subscribe = format!(
        "*2\r\n$9\r\nSUBSCRIBE\r\n${}\r\n{channel}\r\n",
        channel.len()
    );
    stream
        .get_mut()
        .write_all(subscribe.as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    // Subscribed: `*3`, `$9`, `subscribe`, the channel's length and name, `:1`.
    for _ in 0..6 {
        line.clear();
        stream.read_line(&mut line).await.unwrap();
    }
    assert_eq!(line.trim_end(), ":1");
    async move {
        let mut last = Vec::new();
        loop {
            line.clear();
            assert_ne!(stream.read_line(&mut line).await.unwrap(), 0, "closed");
            last.push(line.trim_end().to_owned());
            // `*3`, `$7`, `message`, `$n`, channel, `$n`, payload.
            if last.len() >= 7 && last[last.len() - 5] == "message" {
                return last.pop().unwrap();
            }
        }
    }
}

/// A lease taken by a script whose reply came after the store's timeout (Redis paused: the
/// call was refused SERVER_BUSY meanwhile) is released once the script has run, not left to
/// expire a minute later: the one slot is free for the next call.
#[tokio::test]
async fn a_lease_taken_after_the_timeout_is_released() {
    let redis = redis();
    let store = mcp_fusion::server::limits::RedisStore::builder(redis.url())
        .prefix("late")
        .timeout(Duration::from_millis(100))
        .leases(Duration::from_millis(300), Duration::from_secs(60))
        .build()
        .unwrap();
    let server = mcp_fusion::Server::builder("quick", "1")
        .tool(Quick)
        .limit_store(store)
        .build()
        .unwrap();
    let run = || -> mcp_fusion::rmcp::model::CallToolRequestParams {
        serde_json::from_value(json!({"name": "quick", "arguments": {"action": "run"}})).unwrap()
    };
    // Connected, its scripts loaded, and its lease given back (announced before it is gone).
    assert_eq!(code_of(server.call(run()).await), "ok");
    eventually("the lease given back", async || {
        (redis.integer(&["ZCARD", "late:slots:quick.run"]) == 0).then_some(())
    })
    .await;
    let released = first_message(&redis, "late:released").await;
    // Every client's commands wait two seconds (Redis 7.0 cannot be told to stop earlier: its
    // CLIENT UNPAUSE waits too); the call gives up after 100 ms, the script runs after that.
    assert_eq!(
        redis.command(&["CLIENT", "PAUSE", "2000", "ALL"]).unwrap(),
        "+OK"
    );
    assert_eq!(code_of(server.call(run()).await), "SERVER_BUSY (store)");
    let key = tokio::time::timeout(PATIENCE, released)
        .await
        .expect("the late lease is released, not left to expire");
    assert_eq!(key, "late:slots:quick.run");
    assert_eq!(redis.integer(&["ZCARD", "late:slots:quick.run"]), 0);
    assert_eq!(code_of(server.call(run()).await), "ok");
}

/// What a store and its builder print (`{:?}`, in a log or a panic) holds no credential: not
/// the password of a Redis URL (its userinfo's, or a `pass` parameter), not the key secret.
#[tokio::test]
async fn a_store_and_its_builder_print_no_secret() {
    use mcp_fusion::server::limits::RedisStore;
    let secret = "a secret of more than sixteen bytes";
    let bytes = format!("{:?}", secret.as_bytes());
    let bytes = bytes.trim_matches(['[', ']']);
    let builders = [
        (
            RedisStore::builder("redis://limits:hunter2@127.0.0.1:1/0"),
            "redis://limits:",
        ),
        (
            RedisStore::builder("redis+unix:///run/redis.sock?db=1&pass=hunter2"),
            "/run/redis.sock?db=1&pass=",
        ),
        (
            RedisStore::cluster([
                "redis://:hunter2@10.0.0.5:6379",
                "redis://:hunter2@10.0.0.6:6379",
            ]),
            "@10.0.0.5:6379",
        ),
        (
            RedisStore::sentinel(["redis://sentinel:hunter2@10.0.0.5:26379"], "limits"),
            "@10.0.0.5:26379",
        ),
    ];
    for (builder, shown) in builders {
        let builder = builder.key_secret(secret);
        let printed = format!("{builder:?}");
        for secret in ["hunter2", secret, bytes] {
            assert!(!printed.contains(secret), "{printed}");
        }
        // What is not secret is still shown, to tell stores apart.
        assert!(printed.contains(shown), "{printed}");
        let store = format!("{:?}", builder.build().unwrap());
        for secret in ["hunter2", secret, bytes] {
            assert!(!store.contains(secret), "{store}");
        }
    }
}

/// Holds a slot of a concurrency limit without a deadline for 1.5 s.
struct Hold;

/// Holds slots.
#[mcp_fusion::tool]
impl Hold {
    /// Holds a slot for 1.5 s: real time, for the leases it holds live in Redis, on Redis's
    /// clock (the workload, not a wait of the test's).
    #[action(concurrency(max_active = 20, max_queued = 0))]
    async fn hold(&self) -> Result<(), mcp_fusion::ToolError> {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        Ok(())
    }
}

/// Polls every future to completion in the calling task (no task of their own).
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (future, output) in futures.iter_mut().zip(&mut outputs) {
            if output.is_none()
                && let std::task::Poll::Ready(done) = future.as_mut().poll(cx)
            {
                *output = Some(done);
            }
        }
        match outputs.iter().all(Option::is_some) {
            true => std::task::Poll::Ready(()),
            false => std::task::Poll::Pending,
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// A server of [`Hold`] keeping its leases on `redis` under `prefix`: leases of 600 ms, renewed
/// every 200 ms, held for 1.5 s.
fn holding(redis: &RedisServer, prefix: &str) -> mcp_fusion::Server {
    let store = mcp_fusion::server::limits::RedisStore::builder(redis.url())
        .prefix(prefix)
        .timeout(Duration::from_millis(100))
        .leases(Duration::from_millis(300), Duration::from_millis(600))
        .build()
        .unwrap();
    mcp_fusion::Server::builder("hold", "1")
        .tool(Hold)
        .limit_store(store)
        .build()
        .unwrap()
}

fn hold_call() -> mcp_fusion::rmcp::model::CallToolRequestParams {
    serde_json::from_value(json!({"name": "hold", "arguments": {"action": "hold"}})).unwrap()
}

#[tokio::test]
async fn one_task_renews_every_lease_of_a_replica() {
    let redis = redis();
    // Leases of 600 ms, renewed every 200 ms, held for 1.5 s: only renewals keep them.
    let server = holding(&redis, "renew");
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let calls = (0..20).map(|_| server.call(hold_call())).collect();
    let key = "renew:slots:hold.hold";
    // Once every lease is taken, until every one is renewed (its expiry moved past the latest
    // any had when all were taken): the leases alive, and the tasks alive, then.
    let watch = async {
        eventually("every lease taken", async || {
            (redis.integer(&["ZCARD", key]) == 20).then_some(())
        })
        .await;
        let latest = latest_score(&redis, key);
        let later = format!("({latest:.0}");
        eventually("every lease renewed", async || {
            (redis.integer(&["ZCOUNT", key, &later, "+inf"]) == 20).then_some(())
        })
        .await;
        (redis.integer(&["ZCARD", key]), metrics.num_alive_tasks())
    };
    let (results, (live, tasks)) = tokio::join!(join_all(calls), watch);
    for result in results {
        let result = result.unwrap();
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
    assert_eq!(live, 20, "every lease is alive, renewed");
    assert!(
        tasks <= before + 1,
        "one renewer for 20 leases: {before} tasks before, {tasks} while held"
    );
}

#[tokio::test]
async fn leases_gone_from_redis_are_put_back_while_their_calls_run() {
    let redis = redis();
    let server = holding(&redis, "lost");
    let key = "lost:slots:hold.hold";
    let calls = join_all(vec![server.call(hold_call()), server.call(hold_call())]);
    // The set lost, as when a master dies before its replica had it: the next renewal puts
    // both leases back.
    let watch = async {
        eventually("both leases taken", async || {
            (redis.integer(&["ZCARD", key]) == 2).then_some(())
        })
        .await;
        redis.command(&["DEL", key]).unwrap();
        assert_eq!(redis.integer(&["ZCARD", key]), 0);
        eventually("the lost leases put back", async || {
            (redis.integer(&["ZCARD", key]) == 2).then_some(())
        })
        .await;
    };
    let (results, ()) = tokio::join!(calls, watch);
    for result in results {
        assert_eq!(result.unwrap().is_error, Some(false));
    }
    // Released as the calls end, not left to expire.
    eventually("the leases given back", async || {
        (redis.integer(&["ZCARD", key]) == 0).then_some(())
    })
    .await;
}

/// `count` replicas keeping their limits in `cluster`, each with `args`.
async fn cluster_replicas(
    cluster: &redis_server::RedisCluster,
    count: usize,
    args: &[&str],
) -> Vec<Billing> {
    let urls = cluster.urls();
    let mut all = vec!["--stateless", "--redis-cluster", &urls];
    all.extend_from_slice(args);
    let mut started = Vec::new();
    for _ in 0..count {
        let replica = Billing::start(&mcp_fusion_drivers::artifacts::billing(), &all)
            .await
            .expect("a billing replica starts");
        started.push(replica);
    }
    started
}

#[tokio::test]
async fn a_redis_cluster_keeps_the_fleet_limits_as_one_node_does() {
    let cluster = redis_server::RedisCluster::start(3)
        .unwrap_or_else(|e| panic!("this test needs a Redis Cluster of its own: {e}"));

    // create_invoice: 10 per minute, from 30 calls spread over three replicas at once.
    let fleet = cluster_replicas(&cluster, 3, &["--no-audit"]).await;
    let calls = (0..30).map(|i| (i % 3, create_invoice(i as u64))).collect();
    let outcomes = all_at_once(&fleet, calls).await;
    assert_eq!(count(&outcomes, "ok"), 10, "{outcomes:?}");
    assert_eq!(count(&outcomes, "RATE_LIMITED"), 20, "{outcomes:?}");

    // Per customer, keyed hashes spread over the cluster's slots: each customer's 4 a minute.
    let keyed = [
        "--no-audit",
        "--rate-limit",
        "4/60",
        "--redis-prefix",
        "keyed",
        "--redis-key-secret",
        SECRET,
    ];
    let fleet = cluster_replicas(&cluster, 3, &keyed).await;
    let customers = ["ada", "grace", "alan", "edsger", "barbara", "donald"];
    each_customer_admitted_four(&fleet, &customers).await;
    let holding = cluster
        .nodes
        .iter()
        .filter(|node| node.integer(&["DBSIZE"]) > 0)
        .count();
    assert!(holding >= 2, "the budgets are spread over the masters");

    // export_invoices: at most 2 at once fleet-wide, its leases on the node of their slot.
    let fleet = cluster_replicas(&cluster, 3, &["--redis-prefix", "slots"]).await;
    let calls = (0..12).map(|i| (i % 3, export(100 + i as u64))).collect();
    let outcomes = all_at_once(&fleet, calls).await;
    let ran = count(&outcomes, "ok");
    assert_eq!(ran + count(&outcomes, "SERVER_BUSY"), 12, "{outcomes:?}");
    assert!(ran >= 2, "{outcomes:?}");
    let mut spans = Vec::new();
    for mut billing in fleet {
        billing.child.kill().await.unwrap();
        let log = String::from_utf8(billing.log.await.unwrap()).unwrap();
        spans.extend(export_spans(&log));
    }
    assert_eq!(spans.len(), ran, "every call that ran is in an audit log");
    assert_eq!(peak(&spans), 2, "at most 2 at once, fleet-wide: {spans:?}");
}

#[tokio::test]
async fn a_budget_whose_slot_moves_to_another_master_stays_one_budget() {
    let cluster = redis_server::RedisCluster::start(3)
        .unwrap_or_else(|e| panic!("this test needs a Redis Cluster of its own: {e}"));
    let fleet = cluster_replicas(&cluster, 2, &["--no-audit"]).await;
    let creates = |ids: std::ops::Range<u64>| {
        ids.map(|i| (i as usize % 2, create_invoice(i)))
            .collect::<Vec<_>>()
    };
    let outcomes = all_at_once(&fleet, creates(0..5)).await;
    assert_eq!(count(&outcomes, "ok"), 5, "{outcomes:?}");

    // Move the slot of create_invoice's budget to another master, as a resharding does.
    let key = "billing:rate:billing.create_invoice";
    let first = &cluster.nodes[0];
    let slot = cluster.query(first, &["CLUSTER", "KEYSLOT", key]).unwrap();
    let keys_in_slot = |node: &RedisServer| node.integer(&["CLUSTER", "COUNTKEYSINSLOT", &slot]);
    let owner = cluster
        .nodes
        .iter()
        .position(|node| keys_in_slot(node) == 1)
        .expect("a master holds the budget");
    let target = (owner + 1) % cluster.nodes.len();
    let (from, to) = (&cluster.nodes[owner], &cluster.nodes[target]);
    let id = |node| cluster.query(node, &["CLUSTER", "MYID"]).unwrap();
    let (from_id, to_id) = (id(from), id(to));
    cluster
        .query(to, &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &from_id])
        .unwrap();
    cluster
        .query(from, &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &to_id])
        .unwrap();
    let port = to.port.to_string();
    cluster
        .query(
            from,
            &["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS", key],
        )
        .unwrap();
    // The new owner first, then the old one, then the others, as the Redis manual orders it.
    let others = cluster
        .nodes
        .iter()
        .filter(|node| node.port != to.port && node.port != from.port);
    for node in [to, from].into_iter().chain(others) {
        cluster
            .query(node, &["CLUSTER", "SETSLOT", &slot, "NODE", &to_id])
            .unwrap();
    }
    assert_eq!(keys_in_slot(to), 1, "the budget moved");
    assert_eq!(keys_in_slot(from), 0);

    // The replicas follow the slot: the budget's other 5 calls, no more.
    let outcomes = all_at_once(&fleet, creates(5..15)).await;
    assert_eq!(count(&outcomes, "ok"), 5, "{outcomes:?}");
    assert_eq!(count(&outcomes, "RATE_LIMITED"), 5, "{outcomes:?}");
}
