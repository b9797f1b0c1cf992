use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// Invoices.
#[tool(name = "billing/v2")]
impl Billing {
    /// Lists invoices.
    async fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

fn main() {}
