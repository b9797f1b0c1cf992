//! What a gateway relays of an upstream's requests to the client of a forwarded call, against
//! an upstream that asks whatever it likes (`hostile_upstream`): only what its mount turns on
//! is declared and relayed; an elicitation names its upstream and shows only `https` links;
//! sampling is clamped, counted per call and bounded in time.

#![allow(deprecated)] // Sampling and roots are legacy in rmcp (SEP-2577); still relayed.

use std::time::Duration;

use mcp_fusion::Server;
use mcp_fusion::server::gateway::{SamplingRelay, UPSTREAM_KEY, Upstream};
use serde_json::{Value, json};

use crate::client::{Answer, Person, call, over_stdio, text};
use crate::hostile_upstream::{Hostile, declared};

/// Has the hostile upstream, mounted as `h`, ask the gateway's client `request` `times` times
/// in one call: what came back of each, a line each.
async fn asked(
    client: &mcp_fusion::rmcp::service::RunningService<mcp_fusion::rmcp::RoleClient, Person>,
    request: Value,
    times: u64,
) -> Vec<String> {
    let mut arguments = request;
    arguments["times"] = times.into();
    let result = client.call_tool(call("h_ask", arguments)).await.unwrap();
    text(&result).lines().map(str::to_owned).collect()
}

/// A gateway mounting `upstream` as `h`, its client `person` (who can be asked anything).
async fn through(
    upstream: Upstream,
    person: &Person,
) -> mcp_fusion::rmcp::service::RunningService<mcp_fusion::rmcp::RoleClient, Person> {
    let server = Server::builder("gateway", "1").mount("h", upstream).build();
    let client = over_stdio(server.expect("the gateway builds"), person.clone()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "h_ask"), "{tools:?}");
    client
}

fn form(message: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}},
        "_meta": {UPSTREAM_KEY: "bank"}
    }})
}

fn link(url: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "url", "message": "Sign in", "url": url, "elicitationId": "e1"
    }})
}

fn sampling(max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Spend"}}],
        "maxTokens": max_tokens, "includeContext": "allServers"
    }})
}

const ROOTS: fn() -> Value = || json!({"method": "roots/list"});

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_is_declared_and_relayed_only_what_its_mount_allows() {
    let hostile = Hostile::start().await;
    let person = Person::new(&["elicitation", "sampling", "roots"], Answer::Confirm);
    // By default: elicitation only.
    let client = through(Upstream::http(&hostile.url), &person).await;
    let declared_to = declared(&hostile);
    assert!(declared_to.elicitation.is_some(), "{declared_to:?}");
    assert!(declared_to.sampling.is_none() && declared_to.roots.is_none());
    // Asked anyway, the gateway refuses without asking its client.
    let refused = asked(&client, sampling(10), 1).await;
    assert_eq!(
        refused,
        ["error: the gateway does not relay sampling for upstream h"]
    );
    let refused = asked(&client, ROOTS(), 1).await;
    assert_eq!(
        refused,
        ["error: the gateway does not relay roots for upstream h"]
    );
    assert!(person.asked().is_empty(), "{:?}", person.asked());

    // Turned on for this upstream, sampling and roots; elicitation turned off.
    let upstream = (Upstream::http(&hostile.url))
        .relay_sampling(SamplingRelay::new())
        .relay_roots(true)
        .relay_elicitation(false);
    let client = through(upstream, &person).await;
    let declared_to = declared(&hostile);
    assert!(declared_to.elicitation.is_none(), "{declared_to:?}");
    assert!(declared_to.sampling.is_some() && declared_to.roots.is_some());
    let roots = asked(&client, ROOTS(), 1).await;
    assert!(
        roots[0].starts_with("ok: ") && roots[0].contains("file:///work/a"),
        "{roots:?}"
    );
    let refused = asked(&client, form("Password?"), 1).await;
    assert_eq!(
        refused,
        ["error: the gateway does not relay elicitation for upstream h"]
    );
    assert_eq!(person.asked(), ["roots"]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_relayed_elicitation_names_its_upstream_and_shows_only_https_links() {
    let hostile = Hostile::start().await;
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = through(Upstream::http(&hostile.url), &person).await;
    let answered = asked(&client, form("Your bank password?"), 1).await;
    assert!(answered[0].starts_with("ok: "), "{answered:?}");
    // The upstream cannot pass itself off as another: its own `_meta` name is replaced.
    let sent = person.params.lock().unwrap()[0].clone();
    assert_eq!(sent["message"], "[h] Your bank password?", "{sent}");
    assert_eq!(sent["_meta"][UPSTREAM_KEY], "h", "{sent}");

    for refused in [
        "http://evil.example/login",
        "http://localhost:8080/admin",
        "javascript:alert(1)",
    ] {
        let answered = asked(&client, link(refused), 1).await;
        assert!(
            answered[0].starts_with("error: the gateway relays only https links"),
            "{refused}: {answered:?}"
        );
    }
    let answered = asked(&client, link("https://bank.example/login"), 1).await;
    assert!(answered[0].starts_with("ok: "), "{answered:?}");
    assert_eq!(
        person.asked(),
        [
            "form: [h] Your bank password?",
            "url: https://bank.example/login"
        ]
    );
    let sent = person.params.lock().unwrap()[1].clone();
    assert_eq!(
        (&sent["message"], &sent["_meta"][UPSTREAM_KEY]),
        (&json!("[h] Sign in"), &json!("h"))
    );
}

#[tokio::test(flavor = "current_thread")]
async fn relayed_sampling_is_clamped_counted_per_call_and_bounded_in_time() {
    let hostile = Hostile::start().await;
    let person = Person::new(&["sampling"], Answer::Confirm);
    let bounds = SamplingRelay::new().max_tokens(100).asks_per_call(2);
    let client = through(Upstream::http(&hostile.url).relay_sampling(bounds), &person).await;
    let answered = asked(&client, sampling(1_000_000), 3).await;
    assert!(
        answered[0].starts_with("ok: ") && answered[1].starts_with("ok: "),
        "{answered:?}"
    );
    assert_eq!(
        answered[2],
        "error: this call already relayed 2 sampling requests, the most the gateway relays per call for upstream h"
    );
    let sent = person.params.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    for sent in &sent {
        assert_eq!(sent["maxTokens"], 100, "{sent}");
        assert!(sent.get("includeContext").is_none(), "{sent}");
    }
    // The next call has asks of its own.
    let answered = asked(&client, sampling(10), 1).await;
    assert!(answered[0].starts_with("ok: "), "{answered:?}");

    // A model that does not answer is given up on at the bound, well before `ask_timeout`.
    let mut slow = Person::new(&["sampling"], Answer::Confirm);
    slow.thinks = Duration::from_secs(3600);
    let bounds = SamplingRelay::new().timeout(Duration::from_millis(300));
    let client = through(Upstream::http(&hostile.url).relay_sampling(bounds), &slow).await;
    let answered = asked(&client, sampling(10), 1).await;
    assert_eq!(
        answered,
        [
            "error: the gateway's client: no answer of its model within 300 ms, the most the gateway waits for upstream h"
        ]
    );
}

/// Over stdio nothing says which call an upstream's request belongs to: it is refused, even
/// with one call in flight (the gateway used to hand it to that call, which could be another
/// caller's than the one the upstream meant).
#[tokio::test(flavor = "current_thread")]
async fn a_request_over_stdio_that_names_no_call_is_refused() {
    let binary = mcp_fusion_drivers::artifacts::driver("upstream");
    let upstream = Upstream::command(binary.to_string_lossy(), ["--asks"])
        .connect_timeout(Duration::from_secs(20));
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let server = Server::builder("gateway", "1").mount("h", upstream).build();
    let client = over_stdio(server.expect("the gateway builds"), person.clone()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "h_ask"), "{tools:?}");
    let result = client.call_tool(call("h_ask", json!({}))).await.unwrap();
    assert!(
        text(&result).starts_with("error: the gateway cannot tell which of its calls"),
        "{}",
        text(&result)
    );
    assert!(person.asked().is_empty(), "{:?}", person.asked());
}
