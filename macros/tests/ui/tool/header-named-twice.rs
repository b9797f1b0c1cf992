use mcp_fusion::{ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Deploy {
    pub region: String,
    pub zone: String,
}

/// Deploys.
#[tool(header(region = "Region", zone = "region"))]
async fn deploy(args: Deploy) -> Result<String, ToolError> {
    Ok(args.zone)
}

fn main() {}
