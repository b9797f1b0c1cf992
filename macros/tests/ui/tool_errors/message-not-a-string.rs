use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, 404)]
    InvoiceNotFound { id: String },
}

fn main() {}
