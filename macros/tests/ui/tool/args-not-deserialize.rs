use mcp_fusion::{ToolError, tool};

pub struct GetInvoice {
    pub id: String,
}

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice by ID.
    async fn get_invoice(&self, args: GetInvoice) -> Result<String, ToolError> {
        Ok(args.id)
    }
}

fn main() {}
