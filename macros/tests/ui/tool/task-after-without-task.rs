use mcp_fusion::{ToolError, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Exports invoices once the user named the format.
    #[action(task_after = "format")]
    async fn export(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {}
