use mcp_fusion::{ToolError, ToolErrors, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Lists invoices.
    async fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", actions(Billing::list_invoce))]
    InvoiceNotFound { id: String },
}

fn main() {}
