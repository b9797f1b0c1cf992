use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error("No invoice with ID {id}")]
    InvoiceNotFound { id: String },
}

fn main() {}
