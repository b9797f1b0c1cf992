use mcp_fusion::{ToolError, tool};

pub struct Invoice {
    pub id: String,
}

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice.
    async fn get_invoice(&self) -> Result<Invoice, ToolError> {
        Ok(Invoice {
            id: "inv_2026_0001".into(),
        })
    }
}

fn main() {}
