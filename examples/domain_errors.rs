//! `#[derive(ToolErrors)]` on a domain error enum, end to end through a handler: `?` sends the
//! envelope intact; an unexpected error becomes INTERNAL_ERROR without leaking its cause.
//!
//! `cargo run --example domain_errors`

use mcp_fusion::{Tool, ToolErrors, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with that ID", recovery = "List invoices first, then retry with a real ID",
                 actions(Billing::list_invoices), details(requestedId = id))]
    InvoiceNotFound { id: String },
    #[tool_error(
        CONFLICT,
        "Invoice {id} is already paid.",
        actions(Billing::get_invoice)
    )]
    AlreadyPaid { id: String },
    #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "The card was declined: {reason}",
                 recovery = "Do not retry with the same card; ask the user for another one")]
    Declined { reason: String },
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct InvoiceId {
    #[schemars(regex(pattern = r"^inv_[0-9]{4}_[0-9]{4}$"))]
    id: String,
}

struct Billing;

fn find(id: &str) -> Result<&'static str, BillingError> {
    match id {
        "inv_2026_0001" => Ok("open"),
        "inv_2026_0002" => Ok("paid"),
        _ => Err(BillingError::InvoiceNotFound { id: id.into() }),
    }
}

/// Invoices.
#[tool]
impl Billing {
    /// Lists invoices.
    async fn list_invoices(&self) -> Result<Vec<&'static str>, BillingError> {
        Ok(vec!["inv_2026_0001", "inv_2026_0002"])
    }

    /// Gets an invoice's status.
    async fn get_invoice(&self, args: InvoiceId) -> Result<&'static str, BillingError> {
        find(&args.id)
    }

    /// Pays an invoice.
    async fn pay_invoice(&self, args: InvoiceId) -> Result<&'static str, BillingError> {
        match find(&args.id)? {
            "paid" => Err(BillingError::AlreadyPaid { id: args.id }),
            _ if args.id.ends_with('1') => Err(BillingError::Declined {
                reason: "insufficient funds".into(),
            }),
            _ => Ok("paid"),
        }
    }

    /// Refunds an invoice (the payment provider is down).
    async fn refund_invoice(&self, args: InvoiceId) -> Result<&'static str, std::io::Error> {
        Err(std::io::Error::other(format!(
            "connect postgres://billing:s3cret@10.0.0.5/{} refused",
            args.id
        )))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    for call in [
        json!({"action": "get_invoice", "id": "inv_2026_0404"}),
        json!({"action": "pay_invoice", "id": "inv_2026_0002"}),
        json!({"action": "pay_invoice", "id": "inv_2026_0001"}),
        json!({"action": "refund_invoice", "id": "inv_2026_0001"}),
    ] {
        let result = Billing.call(call.as_object().cloned()).await;
        println!("call {call}\nisError: {}", result.is_error());
        println!("{}\n", result.text());
    }
}
