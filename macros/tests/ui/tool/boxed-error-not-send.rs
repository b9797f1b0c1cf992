use mcp_fusion::tool;

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Exports invoices.
    async fn export(&self) -> Result<String, Box<dyn std::error::Error>> {
        Ok(String::new())
    }
}

fn main() {}
