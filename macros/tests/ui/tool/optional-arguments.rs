use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub struct Filter {
    pub status: Option<String>,
}

pub struct Tickets;

/// A tool.
#[tool]
impl Tickets {
    /// Lists tickets.
    async fn list(&self, args: Option<Filter>) -> Result<(), ToolError> {
        let _ = args;
        Ok(())
    }
}

fn main() {}
