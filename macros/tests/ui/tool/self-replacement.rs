use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Voids an invoice.
    #[action(deprecated, replacement = void_invoice)]
    async fn void_invoice(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn main() {}
