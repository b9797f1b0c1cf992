use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Lists open invoices.
    #[action(name = "list")]
    async fn list_open(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }

    /// Lists paid invoices.
    #[action(name = "list")]
    async fn list_paid(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

fn main() {}
