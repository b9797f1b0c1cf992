use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Exports invoices.
    #[action(task = "sometimes")]
    async fn export(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {}
