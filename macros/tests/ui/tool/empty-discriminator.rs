use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool(discriminator = "")]
impl Billing {
    /// Lists invoices.
    async fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

fn main() {}
