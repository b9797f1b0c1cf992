use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice.
    async fn get_invoice<T: DeserializeOwned + JsonSchema>(
        &self,
        args: T,
    ) -> Result<(), ToolError> {
        let _ = args;
        Ok(())
    }
}

fn main() {}
