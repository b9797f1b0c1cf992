use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub struct GetInvoice {
    pub id: String,
}

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice by ID.
    async fn get_invoice(&self, args: GetInvoice, verbose: bool) -> Result<String, ToolError> {
        Ok(if verbose {
            format!("invoice {}", args.id)
        } else {
            args.id
        })
    }
}

fn main() {}
