use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub struct Id {
    pub id: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Options {
    pub verbose: bool,
}

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Gets one invoice.
    async fn get(&self, args: Id, options: Options) -> Result<String, ToolError> {
        let _ = options.verbose;
        Ok(args.id)
    }
}

fn main() {}
