//! The tour: a real MCP server (the billing server) answering real calls over stdio, and
//! exactly what the model receives each time.
//!
//! `cargo run --example tour`. The tour starts itself a second time with `--serve` as the
//! server (a child process speaking MCP on stdin/stdout) and connects the typed client to it.

#[path = "common/billing.rs"]
mod billing;

use billing::BillingError;
use mcp_fusion::Server;
use mcp_fusion::client::{CallError, Client, ClientError};
use mcp_fusion::contract::{Contract, Diff};
use mcp_fusion::middleware::Audit;
use mcp_fusion::rmcp::model::CallToolResult;
use mcp_fusion::server::StdioOptions;
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--serve") {
        let mut server = Server::builder("billing-server", env!("CARGO_PKG_VERSION"))
            .middleware(Audit)
            .tool(billing::Billing::seeded());
        if let Some(at) = args.iter().position(|a| a == "--lock") {
            server = server.contract_lock(Contract::read(&args[at + 1])?);
        }
        return Ok(server.build()?.serve_stdio(StdioOptions::default()).await?);
    }

    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    command.arg("--serve").stderr(std::process::Stdio::null());
    let (client, connection) = Client::spawn(command).await?;

    section("tools/list: the billing tool, its actions and the schema the model sees");
    for tool in client.list_tools().await? {
        let schema = serde_json::to_value(&tool.input_schema)?;
        let actions = &schema["properties"]["action"]["enum"];
        println!(
            "{} — {}\nactions: {actions}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }

    section("1. A successful call");
    call(
        &client,
        "billing.list_invoices",
        json!({"status": "open", "limit": 2}),
    )
    .await;

    section("2. A record that does not exist (NOT_FOUND, from a #[derive(ToolErrors)] enum)");
    call(
        &client,
        "billing.get_invoice",
        json!({"id": "inv_2026_9999"}),
    )
    .await;
    let missing = client
        .call_raw("billing.get_invoice", json!({"id": "inv_2026_9999"}))
        .await?;
    println!(
        "and what a host or a typed client reads, the same facts as JSON in _meta:\n\n{}",
        serde_json::to_string_pretty(&missing.meta)?
    );

    section("3. Bad arguments: every problem at once, before the handler runs (VALIDATION_ERROR)");
    call(
        &client,
        "billing.create_invoice",
        json!({
            "customer_email": "ada.example.com",
            "amount_cents": 0,
            "lines": [{"description": "", "quantity": "2"}],
            "due_date": "31/12/2026",
            "note": "rush"
        }),
    )
    .await;
    // A missing or mistyped field is described whole (allowed values, bounds, `or null`), so
    // the model fixes it in one try.
    call(
        &client,
        "billing.list_invoices",
        json!({"status": "Paid", "limit": "10"}),
    )
    .await;
    // A pattern shows an example it accepts; the same mistake in 25 lines is one line.
    call(
        &client,
        "billing.get_invoice",
        json!({"id": "INV-2026-0001"}),
    )
    .await;
    let lines: Vec<Value> = (1..=25)
        .map(|n| json!({"description": format!("Session {n}"), "quantity": 0}))
        .collect();
    call(
        &client,
        "billing.create_invoice",
        json!({"customer_email": "ada@example.com", "amount_cents": 2500, "currency": "EUR", "lines": lines}),
    )
    .await;

    section("4. An action that does not exist: did you mean? (UNKNOWN_ACTION)");
    call(
        &client,
        "billing.get_invoise",
        json!({"id": "inv_2026_0001"}),
    )
    .await;
    // No action named: the actions that take the fields sent (MISSING_DISCRIMINATOR).
    call(
        &client,
        "billing",
        json!({"id": "inv_2026_0001", "reason": "Created by mistake"}),
    )
    .await;

    section("5. A deprecated action still works, with a warning (isError false)");
    call(
        &client,
        "billing.void_invoice",
        json!({"id": "inv_2026_0002"}),
    )
    .await;

    section("6. Paying twice (CONFLICT, pointing at the action that helps)");
    call(
        &client,
        "billing.pay_invoice",
        json!({"id": "inv_2026_0003"}),
    )
    .await;

    section("7. A burst of 6 slow exports against 2 running + 2 queued (SERVER_BUSY)");
    let burst = (0..6).map(|_| ("billing.export_invoices", json!({"format": "csv"})));
    let outcomes = client.batch(burst).await;
    for (i, outcome) in outcomes.iter().enumerate() {
        match outcome {
            Ok(result) if result.is_error == Some(true) => {
                let parsed = mcp_fusion::client::ToolCallError::from_result(result.clone());
                println!(
                    "call {i}: {} (retry after {:?} s)",
                    parsed.code(),
                    parsed.error.retry_after
                );
            }
            Ok(_) => println!("call {i}: exported"),
            Err(e) => println!("call {i}: {e}"),
        }
    }
    if let Some(Ok(busy)) = outcomes
        .iter()
        .find(|o| matches!(o, Ok(r) if r.is_error == Some(true)))
    {
        println!("\nwhat the model receives for a refused call:\n");
        show(busy);
    }

    section("8. The typed client: envelopes come back as Rust errors");
    let strict = client.clone();
    match strict
        .call("billing.get_invoice", json!({"id": "inv_2026_0404"}))
        .await
    {
        Err(ClientError::Tool(e)) => println!(
            "Err(Tool): code {}, recovery {:?}, actions {:?}, details {:?}",
            e.code(),
            e.error.recovery,
            e.error.actions,
            e.error.details
        ),
        other => println!("{other:?}"),
    }
    let invoice: Value = strict
        .call_as("billing.get_invoice", json!({"id": "inv_2026_0001"}))
        .await?;
    println!("Ok: {invoice}");
    // The caller's own error type, read back from the envelope (`from_envelope`).
    for id in ["inv_2026_0404", "inv_2026_0003"] {
        let paid: Result<Value, CallError<BillingError>> = client
            .call_typed("billing.pay_invoice", json!({"id": id}))
            .await;
        match paid {
            Err(CallError::Domain(err)) => println!("Err(Domain): {err:?}"),
            other => println!("{other:?}"),
        }
    }

    drop(connection);

    section("9. The contract changed since the model learned it (contract lockfile)");
    let old = billing::contract_before_currency();
    let lockfile = std::env::temp_dir().join(format!("tour-{}.lock", std::process::id()));
    std::fs::write(&lockfile, old.to_lockfile())?;
    let running = Server::builder("billing-server", "").tool(billing::Billing::seeded());
    println!(
        "the lockfile of yesterday's deployment vs today's server:\n\n{}",
        Diff::between(&old, &Contract::of(&running))
    );
    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    command
        .args(["--serve", "--lock"])
        .arg(&lockfile)
        .stderr(std::process::Stdio::null());
    let (healing, connection) = Client::spawn(command).await?;
    let yesterday = json!({
        "customer_email": "ada@example.com",
        "amount_cents": 4200,
        "lines": [{"description": "Consulting", "quantity": 1}],
    });
    call(&healing, "billing.create_invoice", yesterday).await;
    drop(connection);
    std::fs::remove_file(&lockfile)?;
    Ok(())
}

async fn call(client: &Client, target: &str, arguments: Value) {
    println!("call {target} {arguments}\n");
    match client.call_raw(target, arguments).await {
        Ok(result) => show(&result),
        Err(e) => println!("{e}\n"),
    }
}

fn section(title: &str) {
    println!("\n== {title}\n");
}

/// Prints what the model receives: `isError` and each text block.
fn show(result: &CallToolResult) {
    println!("isError: {}", result.is_error.unwrap_or(false));
    for block in &result.content {
        if let Some(text) = block.as_text() {
            println!("{}\n", text.text);
        }
    }
}
