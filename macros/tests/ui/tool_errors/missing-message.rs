use mcp_fusion::{ToolError, ToolErrors};

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, recovery = "List invoices first, then retry with a real ID")]
    InvoiceNotFound { id: String },
}

// Uses of the enum: the derive's stubs keep them from adding errors of their own.
fn find(id: &str) -> Result<(), ToolError> {
    Err(BillingError::InvoiceNotFound { id: id.into() })?
}

fn main() {
    let err = BillingError::InvoiceNotFound { id: "inv_9".into() };
    println!("{err}");
    let _: &dyn std::error::Error = &err;
    let _ = find("inv_9");
}
