use mcp_fusion::{ToolError, tool};

/// Pings.
#[tool(header(region = "Region"))]
async fn ping() -> Result<String, ToolError> {
    Ok("pong".to_owned())
}

fn main() {}
