use mcp_fusion::{ToolError, tool};

pub struct Billing;

#[tool]
impl Billing {
    /// Lists invoices.
    async fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
        Ok(vec![])
    }

    async fn get_invoice(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

#[tool]
async fn ping() -> Result<&'static str, ToolError> {
    Ok("pong")
}

fn main() {}
