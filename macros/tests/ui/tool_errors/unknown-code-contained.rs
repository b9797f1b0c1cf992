use mcp_fusion::ToolErrors;

// `FOUND` is inside `NOT_FOUND`: close by the runtime's rule (ERRORS.md §4), so the derive
// suggests it rather than taking `FOUND` for a custom code.
#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(FOUND, "No invoice with ID {id}")]
    InvoiceNotFound { id: String },
}

fn main() {}
