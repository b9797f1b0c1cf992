use mcp_fusion::{ErrorCode, ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice.
    async fn get_invoice(&self) -> Result<ToolError, ToolError> {
        Ok(ToolError::new(ErrorCode::NOT_FOUND, "No invoice with that ID"))
    }
}

fn main() {}
