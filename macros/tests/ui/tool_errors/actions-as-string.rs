use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice {id}.", actions("billing.list_invoices"))]
    Missing { id: String },
}

fn main() {}
