use mcp_fusion::{ToolError, tool};

pub struct Tickets;

/// A tool.
#[tool(exposition = "flatten")]
impl Tickets {
    /// Lists tickets.
    async fn list(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

/// One action: one MCP tool either way.
#[tool(exposition = "flat")]
async fn ping() -> Result<(), ToolError> {
    Ok(())
}

fn main() {}
