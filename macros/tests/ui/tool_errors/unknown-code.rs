use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FUOND, "No invoice with ID {id}")]
    InvoiceNotFound { id: String },
}

fn main() {}
