use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(
        NOT_FOUND,
        "No invoice with ID {id}",
        recovry = "List invoices first, then retry with a real ID"
    )]
    InvoiceNotFound { id: String },
}

fn main() {}
