use mcp_fusion::tool;

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// The currency invoices are written in.
    pub const CURRENCY: &'static str = "EUR";
}

fn main() {}
