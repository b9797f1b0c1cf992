use mcp_fusion::{ToolError, tool};
use mcp_fusion::tools::Response;

pub struct Reports;

/// A tool.
#[tool]
impl Reports {
    /// A `Response` has no JSON Schema: it is text, not data.
    #[action(output_schema)]
    async fn export(&self) -> Result<Response, ToolError> {
        Ok(Response::text("done"))
    }
}

fn main() {}
