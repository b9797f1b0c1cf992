#![deny(warnings, missing_docs, unused_qualifications)]
//! A tool grouping several actions on an impl block, with an error enum that names one of its
//! actions, compiled under `deny(warnings, missing_docs, unused_qualifications)`.

use mcp_fusion::{Context, Tool, ToolError, ToolErrors, tool};
use mcp_fusion::tools::ActionRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The arguments of `get_invoice`.
#[derive(Deserialize, JsonSchema)]
pub struct GetInvoice {
    /// The invoice ID, such as `inv_2026_0001`.
    pub id: String,
}

/// An invoice.
#[derive(Serialize)]
pub struct Invoice {
    /// Its ID.
    pub id: String,
    /// `open`, `paid` or `void`.
    pub status: &'static str,
}

/// What the billing tool's actions fail with.
#[derive(Debug, ToolErrors)]
pub enum BillingError {
    /// No invoice has this ID.
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", recovery = "List invoices first, then retry with a real ID",
                 actions(Billing::list_invoices), details(requestedId = id))]
    InvoiceNotFound {
        /// The ID asked for.
        id: String,
    },
}

/// Invoices of the billing system.
pub struct Billing;

/// Invoices of the billing system.
#[tool(
    discriminator = "action",
    concurrency(max_active = 2, max_queued = 4),
    rate_limit(max = 10, window = "1m")
)]
impl Billing {
    /// Lists invoices.
    #[action(read_only)]
    async fn list_invoices(&self) -> Result<Vec<Invoice>, ToolError> {
        Ok(vec![Invoice {
            id: "inv_2026_0001".into(),
            status: "open",
        }])
    }

    /// Gets one invoice by ID.
    #[action(read_only, idempotent, timeout = "5s")]
    pub async fn get_invoice(&self, args: GetInvoice) -> Result<Invoice, BillingError> {
        match args.id.as_str() {
            "inv_2026_0001" => Ok(Invoice {
                id: args.id,
                status: "open",
            }),
            _ => Err(BillingError::InvoiceNotFound { id: args.id }),
        }
    }

    /// Voids an invoice.
    #[action(name = "void", deprecated = "voiding is final", replacement = cancel_invoice)]
    async fn void_invoice(&self, args: GetInvoice, f: Context) -> Result<Invoice, ToolError> {
        let _ = f.action();
        Ok(Invoice {
            id: args.id,
            status: "void",
        })
    }

    /// Cancels an invoice.
    #[action(destructive, open_world)]
    async fn cancel_invoice(&self, args: GetInvoice) -> Result<(), std::io::Error> {
        let _ = args;
        Ok(())
    }
}

fn main() {
    let def = Billing.definition();
    assert_eq!(def.name(), "billing");
    assert_eq!(def.discriminator(), Some("action"));
    assert_eq!(def.actions().len(), 4);
    let list: ActionRef = Billing::ACTIONS.list_invoices;
    assert_eq!(list.as_str(), "billing.list_invoices");
    assert_eq!(Billing::ACTIONS.void_invoice.as_str(), "billing.void");

    let err = ToolError::from(BillingError::InvoiceNotFound { id: "inv_9".into() });
    assert_eq!(err.message(), "No invoice with ID inv_9");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let args: Map<String, Value> = json!({"action": "get_invoice", "id": "inv_2026_0001"})
        .as_object()
        .cloned()
        .expect("an object");
    let result = runtime.block_on(Billing.call(Some(args)));
    assert!(!result.is_error());
}
