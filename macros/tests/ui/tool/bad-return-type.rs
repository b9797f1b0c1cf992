use mcp_fusion::tool;

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Lists invoices.
    async fn list_invoices(&self) -> String {
        String::from("inv_2026_0001")
    }
}

fn main() {}
