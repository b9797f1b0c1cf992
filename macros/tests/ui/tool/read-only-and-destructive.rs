use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Voids an invoice.
    #[action(read_only, destructive)]
    async fn void_invoice(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn main() {}
