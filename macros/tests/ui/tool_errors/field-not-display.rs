use mcp_fusion::ToolErrors;

#[derive(Debug)]
pub struct InvoiceId(pub u64);

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", recovery = "List invoices first")]
    InvoiceNotFound { id: InvoiceId },
}

fn main() {}
