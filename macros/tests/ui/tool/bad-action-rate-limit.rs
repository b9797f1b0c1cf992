use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Creates an invoice.
    #[action(rate_limit(max = 0, window = "a minute"))]
    async fn create_invoice(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }

    /// Pays an invoice.
    #[action(rate_limit(max = 0, window = "1m"))]
    async fn pay_invoice(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {}
