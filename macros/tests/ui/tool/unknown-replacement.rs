use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Voids an invoice.
    #[action(deprecated, replacement = cancel_invoce)]
    async fn void_invoice(&self) -> Result<(), ToolError> {
        Ok(())
    }

    /// Cancels an invoice.
    async fn cancel_invoice(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn main() {}
