use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}")]
    #[tool_error(recovery = "List invoices first, then retry with a real ID")]
    InvoiceNotFound { id: String },
}

fn main() {}
