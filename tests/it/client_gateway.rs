//! What an upstream asks while the gateway forwards a call (sampling, elicitation, roots) is
//! relayed to the gateway's client of that call, on both of its protocol eras: on a
//! 2025-11-25 session as a request on the client's back-channel; on 2026-07-28 as the round's
//! `input_required`, the upstream asked again when the client retries. A client that cannot
//! be asked is never asked, and the upstream's handler hears why.

#![allow(deprecated)] // Sampling and roots are legacy in rmcp (SEP-2577); still served.

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::*;
use mcp_fusion::rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use mcp_fusion::rmcp::transport::StreamableHttpClientTransport;
use mcp_fusion::server::HttpOptions;
use mcp_fusion::server::gateway::{SamplingRelay, Upstream};
use serde_json::json;

use crate::client::{Answer, Person, call, envelope, notes, over_http, over_stdio, text};

/// A gateway mounting `notes` (served over streamable HTTP with sessions) as `up`, relaying
/// its sampling and roots too. Each elicitation the user sees names it (`[up] `).
async fn gateway() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(
        notes()
            .serve_http(listener, HttpOptions::default())
            .into_future(),
    );
    Server::builder("gateway", "1")
        .mount(
            "up",
            (Upstream::http(url))
                .relay_sampling(SamplingRelay::new())
                .relay_roots(true),
        )
        .build()
        .expect("the gateway builds")
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstreams_asks_reach_the_client_of_the_call_on_a_session() {
    let person = Person::new(&["elicitation", "sampling", "roots"], Answer::Confirm);
    let client = over_stdio(gateway().await, person.clone()).await;
    // The first listing waits for the upstream.
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "up_notes"), "{tools:?}");

    let ask = |arguments| client.call_tool(call("up_notes", arguments));
    let deleted = ask(json!({"action": "delete", "note": "a"})).await.unwrap();
    assert_eq!(text(&deleted), "Deleted a");
    let summarized = ask(json!({"action": "summarize", "note": "b"}))
        .await
        .unwrap();
    assert_eq!(text(&summarized), "Summarize b: short (small-model)");
    let folders = ask(json!({"action": "folders"})).await.unwrap();
    assert_eq!(text(&folders), "file:///work/a file:///work/b");
    assert_eq!(
        person.asked(),
        [
            "form: [up] Delete a?",
            "form: [up] Send the note to the model?",
            "model: Summarize b",
            "roots"
        ]
    );

    // What the user declines reaches the upstream's handler, whose envelope comes back.
    let person = Person::new(&["elicitation"], Answer::Decline);
    let client = over_http(gateway().await, person.clone()).await;
    client.list_all_tools().await.expect("tools/list");
    let declined = client.call_tool(call("up_notes", json!({"action": "delete", "note": "a"})));
    let declined = declined.await.unwrap();
    assert_eq!(envelope(&declined), ("USER_DECLINED".into(), Some(true)));
    assert_eq!(person.asked(), ["form: [up] Delete a?"]);
}

/// A client that declared no roots is not asked for them: the gateway refuses the upstream's
/// request, saying why, and the upstream's handler answers an envelope of its own.
#[tokio::test(flavor = "current_thread")]
async fn a_client_that_cannot_be_asked_is_not_asked_through_the_gateway() {
    let person = Person::new(&["elicitation"], Answer::Confirm);
    let client = over_stdio(gateway().await, person.clone()).await;
    client.list_all_tools().await.expect("tools/list");
    let folders = client.call_tool(call("up_notes", json!({"action": "folders"})));
    let folders = folders.await.unwrap();
    assert_eq!(envelope(&folders), ("CLIENT_FAILED".into(), Some(true)));
    assert!(
        text(&folders).contains("the gateway's client cannot be asked this"),
        "{}",
        text(&folders)
    );
    assert!(person.asked().is_empty(), "{:?}", person.asked());
}

/// On 2026-07-28 the gateway's client answers by rounds: each upstream ask ends the round
/// `input_required`; the retried call is forwarded again, and the upstream, asking the same,
/// gets the answer the client sent.
#[tokio::test(flavor = "current_thread")]
async fn an_upstreams_asks_are_rounds_for_a_2026_07_28_client() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let mut options = HttpOptions::default();
    options.stateless = true;
    tokio::spawn(gateway().await.serve_http(listener, options).into_future());
    let person = Person::new(&["elicitation", "sampling"], Answer::Confirm);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = (person.clone())
        .serve_with_lifecycle(StreamableHttpClientTransport::from_uri(url), lifecycle)
        .await
        .expect("the client discovers the gateway");
    client.list_all_tools().await.expect("tools/list");
    let summarized = client.call_tool(call(
        "up_notes",
        json!({"action": "summarize", "note": "b"}),
    ));
    let summarized = summarized.await.expect("tools/call");
    assert_eq!(text(&summarized), "Summarize b: short (small-model)");
    assert_eq!(
        person.asked(),
        [
            "form: [up] Send the note to the model?",
            "model: Summarize b"
        ]
    );
}
