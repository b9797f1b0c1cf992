use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub struct Get<'a> {
    pub id: &'a str,
}

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice.
    async fn get(&self, args: Get<'_>) -> Result<String, ToolError> {
        Ok(args.id.to_owned())
    }
}

fn main() {}
