//! Serving that holds over stdio, tried as a hostile or careless client would: the billing
//! server as a child process, spoken to in raw newline-delimited JSON-RPC.
//!
//! Every request with an id is answered exactly once, also when stdin closes right after it;
//! a request reusing an id in flight is refused; a cancelled call stops and frees its slot;
//! messages before `initialize` do not stop the server; rate limits are per caller; and memory
//! stays bounded (read from `/proc/PID/status` on Linux) under floods, a client that never
//! reads stdout, and lines of the smallest JSON values. `drivers/src/bin/stdio_limits.rs` runs
//! the same at length.

use std::time::Duration;

use mcp_fusion_drivers::raw_stdio as raw;
use raw::{Billing, call, cancel, outcome, too_deep, zeros};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::time::timeout;

/// How long any one answer may take in these tests.
const ANSWER: Duration = Duration::from_secs(10);

async fn start(args: &[&str]) -> Billing {
    Billing::start(&mcp_fusion_drivers::artifacts::billing(), args)
        .await
        .expect("the billing server starts")
}

async fn send(billing: &mut Billing, message: &Value) {
    billing
        .send(message)
        .await
        .expect("the server reads its input");
}

async fn answer(billing: &mut Billing) -> Value {
    billing.receive(ANSWER).await.expect("an answer in time")
}

/// Closes stdin; every message written until stdout ends, and the exit code.
async fn close(billing: &mut Billing) -> (Vec<Value>, Option<i32>) {
    billing.stdin = None;
    let answers = billing.receive_all(ANSWER).await;
    let status = timeout(ANSWER, billing.child.wait()).await;
    (answers, status.expect("the server exits").unwrap().code())
}

#[tokio::test]
async fn answers_made_while_reading_are_written_when_stdin_closes_right_after() {
    let mut billing = start(&[]).await;
    for id in 1..=10 {
        billing.send_line(&too_deep(id)).await.unwrap();
    }
    let (answers, code) = close(&mut billing).await;
    let ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids, (1..=10).map(Value::from).collect::<Vec<_>>());
    assert!(answers.iter().all(|a| a["error"]["code"] == -32600));
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn calls_in_flight_when_stdin_closes_are_answered_within_the_drain() {
    let export = call(1, "export_invoices", json!({"format": "csv"}));
    let mut billing = start(&[]).await;
    send(&mut billing, &export).await;
    let (answers, code) = close(&mut billing).await;
    let seen: Vec<(Value, String)> = answers
        .iter()
        .map(|a| (a["id"].clone(), outcome(a)))
        .collect();
    assert_eq!(seen, [(json!(1), "ok".to_owned())]);
    assert_eq!(code, Some(0));

    // With no drain period, the call is stopped instead: no answer, and a prompt exit.
    let mut billing = start(&["--drain", "0"]).await;
    send(&mut billing, &export).await;
    assert_eq!(close(&mut billing).await, (vec![], Some(0)));
}

#[tokio::test]
async fn an_id_in_flight_is_refused_and_free_again_once_answered() {
    let mut billing = start(&[]).await;
    send(
        &mut billing,
        &call(7, "export_invoices", json!({"format": "csv"})),
    )
    .await;
    send(&mut billing, &call(7, "list_invoices", json!({}))).await;
    let refused = answer(&mut billing).await;
    assert_eq!(
        (&refused["id"], &refused["error"]["code"]),
        (&json!(7), &json!(-32600))
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("already used by a request in flight"),
        "{message}"
    );
    let first = answer(&mut billing).await;
    assert_eq!((&first["id"], outcome(&first).as_str()), (&json!(7), "ok"));
    // Answered: the id may be used again.
    send(&mut billing, &call(7, "list_invoices", json!({}))).await;
    let again = answer(&mut billing).await;
    assert_eq!((&again["id"], outcome(&again).as_str()), (&json!(7), "ok"));
}

#[tokio::test]
async fn a_cancelled_call_stops_and_gives_back_its_slot() {
    let mut billing = start(&[]).await;
    let export = |id: u64| call(id, "export_invoices", json!({"format": "csv"}));
    // export_invoices runs 2 at a time with 2 waiting; four fill it.
    for id in 1..=4 {
        send(&mut billing, &export(id)).await;
    }
    for id in 1..=4 {
        send(&mut billing, &cancel(id)).await;
    }
    for id in 5..=8 {
        send(&mut billing, &export(id)).await;
    }
    let mut seen = Vec::new();
    for _ in 5..=8 {
        let answer = answer(&mut billing).await;
        seen.push((answer["id"].as_u64().unwrap(), outcome(&answer)));
    }
    seen.sort();
    let expected: Vec<(u64, String)> = (5..=8).map(|id| (id, "ok".to_owned())).collect();
    assert_eq!(seen, expected);
    // The cancelled calls are never answered: a ping behind them is the next message.
    send(
        &mut billing,
        &json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}),
    )
    .await;
    assert_eq!(answer(&mut billing).await["id"], "ping");
}

#[tokio::test]
async fn messages_before_initialize_do_not_stop_the_server() {
    let mut billing = Billing::spawn(&mcp_fusion_drivers::artifacts::billing(), &[]).unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    send(&mut billing, &initialized).await;
    send(
        &mut billing,
        &json!({"jsonrpc": "2.0", "id": 99, "result": {}}),
    )
    .await;
    send(&mut billing, &cancel(5)).await;
    // A request is answered, as rmcp does before initialization: a ping, or an error.
    send(
        &mut billing,
        &json!({"jsonrpc": "2.0", "id": "early", "method": "ping"}),
    )
    .await;
    let pong = answer(&mut billing).await;
    assert_eq!(
        (&pong["id"], &pong["result"]),
        (&json!("early"), &json!({}))
    );
    send(
        &mut billing,
        &json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}),
    )
    .await;
    let refused = answer(&mut billing).await;
    assert_eq!(refused["id"], "list");
    assert!(refused["error"]["code"].is_i64(), "{refused}");
    billing.initialize().await.unwrap();
    send(&mut billing, &call(1, "list_invoices", json!({}))).await;
    let listed = answer(&mut billing).await;
    assert_eq!(
        (&listed["id"], outcome(&listed).as_str()),
        (&json!(1), "ok")
    );
}

#[tokio::test]
async fn rate_limits_are_per_caller_whatever_the_middleware() {
    let mut billing = start(&["--rate-limit", "2/3600", "--no-audit"]).await;
    let outcomes = billing
        .list_as(&["alice", "alice", "bob", "carol", "alice"])
        .await
        .unwrap();
    assert_eq!(outcomes, ["ok", "ok", "ok", "ok", "RATE_LIMITED"]);
}

#[tokio::test]
async fn past_the_key_cap_new_callers_share_one_budget_and_known_ones_keep_theirs() {
    let args = [
        "--rate-limit",
        "1/3600",
        "--rate-limit-keys",
        "2",
        "--no-audit",
    ];
    let mut billing = start(&args).await;
    let outcomes = billing
        .list_as(&["alice", "bob", "carol", "dave", "alice"])
        .await
        .unwrap();
    // carol spends the shared overflow budget, dave finds it empty; alice's own is spent.
    assert_eq!(outcomes, ["ok", "ok", "ok", "RATE_LIMITED", "RATE_LIMITED"]);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_flood_of_lines_the_server_answers_stays_bounded() {
    for read_stdout in [false, true] {
        let mut billing = start(&[]).await;
        billing
            .flood(b"[]", Duration::from_secs(2), read_stdout)
            .await;
        let peak = billing.peak_mib();
        assert!(peak < 64.0, "peak {peak} MiB (stdout read: {read_stdout})");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_client_that_never_reads_stdout_cannot_grow_the_server() {
    let mut billing = start(&[]).await;
    let list = call(1, "list_invoices", json!({"limit": 100})).to_string();
    billing
        .flood(list.as_bytes(), Duration::from_secs(2), false)
        .await;
    let peak = billing.peak_mib();
    assert!(peak < 64.0, "peak {peak} MiB");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn lines_of_the_smallest_values_cost_a_bounded_memory() {
    // Over the limit (1 MiB by default): refused without being held.
    let mut billing = start(&[]).await;
    billing.send_line(&zeros(1, 16 << 20)).await.unwrap();
    let refused = answer(&mut billing).await;
    assert_eq!(
        (&refused["id"], &refused["error"]["code"]),
        (&json!(1), &json!(-32600))
    );
    let peak = billing.peak_mib();
    assert!(peak < 64.0, "peak {peak} MiB for a refused 16 MiB line");
    send(&mut billing, &call(2, "list_invoices", json!({}))).await;
    assert_eq!(outcome(&answer(&mut billing).await), "ok");

    // Just within it: read, answered, at most the bound StdioOptions states.
    let mut billing = start(&[]).await;
    billing.send_line(&zeros(1, 1 << 20)).await.unwrap();
    assert_eq!(outcome(&answer(&mut billing).await), "VALIDATION_ERROR");
    let peak = billing.peak_mib();
    assert!(peak < 160.0, "peak {peak} MiB for a 1 MiB line");
}

/// Also a client that pipelines calls faster than they are answered: at most
/// `max_pending_answers` are held.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn many_distinct_callers_cost_a_bounded_memory() {
    let args = [
        "--rate-limit",
        "1000000/1",
        "--rate-limit-keys",
        "1000",
        "--no-audit",
    ];
    let mut billing = start(&args).await;
    async fn exchange(billing: &mut Billing, from: usize, count: usize) {
        let batch = raw::distinct_callers(from, count);
        let mut stdin = billing.stdin.take().unwrap();
        let writing = async move {
            stdin.write_all(&batch).await.unwrap();
            stdin
        };
        let reading = async {
            for _ in 0..count {
                answer(billing).await;
            }
        };
        let (stdin, ()) = tokio::join!(writing, reading);
        billing.stdin = Some(stdin);
    }
    exchange(&mut billing, 0, 5_000).await;
    let warm = billing.peak_mib();
    exchange(&mut billing, 5_000, 35_000).await;
    let peak = billing.peak_mib();
    assert!(
        peak <= warm + 4.0,
        "{warm} MiB after 5,000 callers, {peak} MiB after 40,000"
    );
}

/// A hundred calls whose trace context would once panic the server (a multi-byte character
/// where a field of the traceparent starts), then an ordinary call: every one answered. Before,
/// each such call held its place unanswered, and the 65th stopped the server reading.
#[tokio::test]
async fn hostile_trace_contexts_are_answered() {
    let mut billing = start(&[]).await;
    let traceparent = format!("0é{}", "a".repeat(52));
    for id in 0..100 {
        let mut message = call(id, "list_invoices", json!({}));
        message["params"]["_meta"] = json!({"traceparent": traceparent});
        send(&mut billing, &message).await;
    }
    send(&mut billing, &call(100, "list_invoices", json!({}))).await;
    let mut answered = Vec::new();
    for _ in 0..=100 {
        let reply = answer(&mut billing).await;
        assert_eq!(outcome(&reply), "ok", "{reply}");
        answered.push(reply["id"].as_u64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, (0..=100).collect::<Vec<u64>>());
}

/// A request the transport refuses while reading (too deep here) whose id is in flight is
/// refused as a second request with that id is: the refusal names the rule, and the first
/// request is still answered.
#[tokio::test]
async fn a_refusal_of_an_id_in_flight_names_the_rule() {
    let mut billing = start(&[]).await;
    send(
        &mut billing,
        &call(7, "export_invoices", json!({"format": "csv"})),
    )
    .await;
    billing.send_line(&too_deep(7)).await.unwrap();
    let refused = answer(&mut billing).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("already used by a request in flight"),
        "{message}"
    );
    let first = answer(&mut billing).await;
    assert_eq!((&first["id"], outcome(&first).as_str()), (&json!(7), "ok"));
}
