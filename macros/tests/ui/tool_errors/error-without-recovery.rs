#![deny(deprecated)]

use mcp_fusion::ToolErrors;

// An error the model cannot act on: what failed, but not what to do next.
#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(CONFLICT, "Invoice {id} is already paid.")]
    AlreadyPaid { id: String },
    #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "The card was declined")]
    Declined,
    // Not warned of: a warning, a recovery, actions, or said to be deliberate.
    #[tool_error(CONFLICT, "Invoice {id} is a draft.", severity = warning)]
    Draft { id: String },
    #[tool_error(NOT_FOUND, "No invoice {id}.", recovery = "List the invoices first.")]
    Missing { id: String },
    #[tool_error(CONFLICT, "Invoice {id} is void: tell the user.", no_recovery)]
    Void { id: String },
}

fn main() {}
