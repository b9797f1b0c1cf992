use mcp_fusion::{ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Deploy {
    pub region: String,
    pub zone: String,
}

pub struct Ops;

/// Operations.
#[tool]
impl Ops {
    /// Deploys.
    #[action(header(region = "Region"))]
    async fn deploy(&self, args: Deploy) -> Result<String, ToolError> {
        Ok(args.region)
    }

    /// Undeploys.
    #[action(header(region = "Zone"))]
    async fn undeploy(&self, args: Deploy) -> Result<String, ToolError> {
        Ok(args.region)
    }
}

fn main() {}
