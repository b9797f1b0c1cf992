use mcp_fusion::tool;

pub struct Billing;

#[tool]
impl Default for Billing {
    fn default() -> Self {
        Billing
    }
}

fn main() {}
