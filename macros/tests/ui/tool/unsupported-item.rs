use mcp_fusion::tool;

#[tool]
pub struct Billing {
    pub currency: String,
}

fn main() {}
