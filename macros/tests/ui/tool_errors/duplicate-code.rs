use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", code = "INVOICE_MISSING")]
    InvoiceNotFound { id: String },
}

fn main() {}
