//! Limits on the Redis master a Sentinel names, through a failover: a master, its replica and a
//! Sentinel started by the test on loopback ports (`redis-server` must be installed; the test
//! fails, never skips, when they cannot start). The master is killed (SIGKILL) while calls
//! hold leases; the Sentinel promotes the replica; the store follows it without a restart.

use std::time::Duration;

use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult};
use mcp_fusion::server::limits::RedisStore;
use mcp_fusion_drivers::raw_http::Billing;
use mcp_fusion_drivers::redis_server::{self, RedisSentinel};
use serde_json::json;

use crate::support::{eventually, latest_score};

use crate::redis_limits::{all_at_once, count, create_invoice};

fn sentinel() -> RedisSentinel {
    RedisSentinel::start()
        .unwrap_or_else(|e| panic!("these tests need a Redis master, replica and Sentinel: {e}"))
}

/// Two slots, each held for 8 s by a call.
struct Long;

/// Holds slots.
#[mcp_fusion::tool]
impl Long {
    /// Holds a slot for 8 s: real time, for the leases it holds live in Redis, on Redis's
    /// clock (the workload, not a wait of the test's).
    #[action(concurrency(max_active = 2, max_queued = 0))]
    async fn hold(&self) -> Result<(), mcp_fusion::ToolError> {
        tokio::time::sleep(Duration::from_secs(8)).await;
        Ok(())
    }
}

const SLOTS: &str = "failover:slots:long.hold";

fn hold_call() -> CallToolRequestParams {
    serde_json::from_value(json!({"name": "long", "arguments": {"action": "hold"}})).unwrap()
}

/// `ok`, the envelope's code, or `SERVER_BUSY (store)` when the store could not answer.
fn outcome(result: &CallToolResult) -> String {
    if result.is_error != Some(true) {
        return "ok".to_owned();
    }
    let text = result.content[0].as_text().map_or("", |t| t.text.as_str());
    let code = text
        .split("code=\"")
        .nth(1)
        .and_then(|r| r.split('"').next());
    let code = code.unwrap_or_else(|| panic!("an envelope: {text}"));
    match text.contains("cannot take calls right now") {
        true => format!("{code} (store)"),
        false => code.to_owned(),
    }
}

#[tokio::test]
async fn a_master_killed_under_held_leases_fails_over_losing_none() {
    let mut redis = sentinel();
    // Leases of 6 s renewed every 2 s, held 8 s: past 6 s only renewals on the promoted
    // replica keep them.
    let store = RedisStore::sentinel([redis.url()], RedisSentinel::NAME)
        .prefix("failover")
        .timeout(Duration::from_millis(100))
        .leases(Duration::from_secs(1), Duration::from_secs(6))
        .build()
        .unwrap();
    let server = mcp_fusion::Server::builder("long", "1")
        .tool(Long)
        .limit_store(store)
        .build()
        .unwrap();
    let (old, new) = (redis.nodes[0].port, redis.nodes[1].port);
    assert_eq!(redis.master_port(), Some(old));

    let holders = async {
        let (a, b) = tokio::join!(server.call(hold_call()), server.call(hold_call()));
        [a.unwrap(), b.unwrap()].map(|r| outcome(&r))
    };
    let scenario = async {
        // Both leases taken, and on the replica too.
        eventually("both leases on the replica", async || {
            (redis.nodes[1].integer(&["ZCARD", SLOTS]) == 2).then_some(())
        })
        .await;
        let third = server.call(hold_call()).await.unwrap();
        assert_eq!(outcome(&third), "SERVER_BUSY", "both slots are held");

        redis.nodes[0].stop();
        eventually("the Sentinel to promote the replica", async || {
            (redis.master_port() == Some(new)).then_some(())
        })
        .await;
        // Refused while no master answers (fail closed), then refused because the promoted
        // replica has both leases: never admitted.
        let after = eventually("the store to find the new master", async || {
            let result = server.call(hold_call()).await.unwrap();
            match outcome(&result).as_str() {
                "SERVER_BUSY (store)" => None,
                other => Some(other.to_owned()),
            }
        })
        .await;
        assert_eq!(after, "SERVER_BUSY", "the leases came through the failover");
        // The leases are renewed on the new master: each expiry (its score) moves past the
        // latest one it had once the store found that master.
        let latest = latest_score(&redis.nodes[1], SLOTS);
        let later = format!("({latest:.0}");
        eventually("both leases renewed on the new master", async || {
            (redis.nodes[1].integer(&["ZCOUNT", SLOTS, &later, "+inf"]) == 2).then_some(())
        })
        .await;
    };
    let (held, ()) = tokio::join!(holders, scenario);
    assert_eq!(
        held,
        ["ok", "ok"],
        "the calls holding the leases ran to the end"
    );
    // Their leases given back on the new master as the calls end: a call runs again.
    eventually("the leases given back", async || {
        (redis.nodes[1].integer(&["ZCARD", SLOTS]) == 0).then_some(())
    })
    .await;
    let again = server.call(hold_call());
    let watch = eventually("a lease taken after the failover", async || {
        (redis.nodes[1].integer(&["ZCARD", SLOTS]) >= 1).then_some(())
    });
    let (again, ()) = tokio::join!(again, watch);
    assert_eq!(outcome(&again.unwrap()), "ok");
    redis.nodes[1].stop();
}

#[tokio::test]
async fn billing_replicas_share_the_limits_of_the_master_a_sentinel_names() {
    let redis = sentinel();
    let url = redis.url();
    let args = [
        "--stateless",
        "--no-audit",
        "--redis-sentinel",
        &url,
        "--redis-master",
        RedisSentinel::NAME,
    ];
    let mut fleet = Vec::new();
    for _ in 0..2 {
        let replica = Billing::start(&mcp_fusion_drivers::artifacts::billing(), &args)
            .await
            .expect("a billing replica starts");
        fleet.push(replica);
    }
    let calls = (0..16)
        .map(|i| (i as usize % 2, create_invoice(i)))
        .collect();
    let outcomes = all_at_once(&fleet, calls).await;
    assert_eq!(
        count(&outcomes, "ok"),
        10,
        "10 a minute, fleet-wide: {outcomes:?}"
    );
    assert_eq!(count(&outcomes, "RATE_LIMITED"), 6, "{outcomes:?}");
    let bucket = "billing:rate:billing.create_invoice";
    let master = redis_server::query(&redis.nodes[0], &["EXISTS", bucket]).unwrap();
    assert_eq!(master, "1", "the budget is kept on the master");
}
