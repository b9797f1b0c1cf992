//! The billing server as a child process on stdio, driven by the typed client over rmcp: the
//! envelopes of ERRORS.md §4 produced for real, and a burst answered exactly once per call.
//!
//! It runs the `billing` example's binary, which `cargo test` builds with the examples.

use mcp_fusion::client::parse_envelope;
use mcp_fusion::client::{Client, Connection, ToolCallError};
use serde_json::{Value, json};

async fn connect() -> (Client, Connection) {
    let mut command = tokio::process::Command::new(mcp_fusion_drivers::artifacts::billing());
    command.stderr(std::process::Stdio::null());
    let (client, connection) = Client::spawn(command)
        .await
        .expect("the billing server starts");
    (client, connection)
}

async fn envelope(client: &Client, target: &str, arguments: Value) -> (bool, Vec<String>) {
    let result = client
        .call_raw(target, arguments)
        .await
        .expect("the call completes");
    let texts = result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect();
    (result.is_error == Some(true), texts)
}

#[tokio::test(flavor = "current_thread")]
async fn envelopes_over_a_real_transport() {
    let (client, _connection) = connect().await;

    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "billing");
    assert_eq!(tools[0].input_schema["type"], "object");

    let (is_error, texts) = envelope(&client, "billing", json!({})).await;
    assert!(is_error);
    assert_eq!(parse_envelope(&texts[0]).code, "MISSING_DISCRIMINATOR");

    let (_, texts) = envelope(
        &client,
        "billing.get_invoise",
        json!({"id": "inv_2026_0001"}),
    )
    .await;
    let unknown = parse_envelope(&texts[0]);
    assert_eq!(unknown.code, "UNKNOWN_ACTION");
    assert!(
        unknown
            .recovery
            .unwrap()
            .starts_with("Did you mean \"billing.get_invoice\"?")
    );

    let (_, texts) = envelope(
        &client,
        "billing.create_invoice",
        json!({"amount_cents": 0, "extra": 1}),
    )
    .await;
    let invalid = parse_envelope(&texts[0]);
    assert_eq!(invalid.code, "VALIDATION_ERROR");
    assert_eq!(invalid.action.as_deref(), Some("billing.create_invoice"));
    let names: Vec<&str> = invalid
        .fields
        .iter()
        .map(|field| field.path.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "customer_email",
            "amount_cents",
            "currency",
            "lines",
            "extra"
        ]
    );

    let (_, texts) = envelope(
        &client,
        "billing.get_invoice",
        json!({"id": "inv_2026_9999"}),
    )
    .await;
    let not_found = parse_envelope(&texts[0]);
    assert_eq!(
        (not_found.code.as_str(), not_found.message.as_str()),
        ("NOT_FOUND", "No invoice with that ID")
    );
    assert_eq!(
        not_found.details,
        [("requestedId".to_owned(), "inv_2026_9999".to_owned())]
    );

    let (is_error, texts) = envelope(
        &client,
        "billing.void_invoice",
        json!({"id": "inv_2026_0005"}),
    )
    .await;
    assert!(!is_error);
    assert_eq!(texts.len(), 2);
    assert_eq!(parse_envelope(&texts[1]).code, "DEPRECATED");

    // An unknown tool is a JSON-RPC error, not an envelope; the server keeps serving.
    assert!(client.call_raw("payments.refund", json!({})).await.is_err());
    let (is_error, _) = envelope(&client, "billing.list_invoices", json!({})).await;
    assert!(!is_error);
}

#[tokio::test(flavor = "current_thread")]
async fn a_burst_is_answered_exactly_once_per_call() {
    let (client, _connection) = connect().await;
    let calls = (0..40).map(|_| ("billing.export_invoices", json!({"format": "json"})));
    let outcomes = client.batch(calls).await;
    assert_eq!(outcomes.len(), 40);
    let mut exported = 0;
    let mut busy = 0;
    for outcome in outcomes {
        let result = outcome.expect("every call is answered");
        if result.is_error == Some(true) {
            let error = ToolCallError::from_result(result);
            assert_eq!(error.code(), "SERVER_BUSY");
            assert_eq!(error.error.retry_after, Some(1));
            busy += 1;
        } else {
            exported += 1;
        }
    }
    assert_eq!(exported + busy, 40);
    assert!(
        exported >= 4,
        "2 running and 2 queued get through: {exported}"
    );
    assert!(busy > 0);
}
