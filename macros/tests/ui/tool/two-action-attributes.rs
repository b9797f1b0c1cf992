use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Lists invoices.
    #[action(read_only)]
    #[action(idempotent)]
    async fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

fn main() {}
