use mcp_fusion::{Context, ToolError, tool};
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
    async fn get_invoice(
        &self,
        args: GetInvoice,
        f: Context,
        verbose: bool,
    ) -> Result<String, ToolError> {
        let _ = (f, verbose);
        Ok(args.id)
    }
}

fn main() {}
