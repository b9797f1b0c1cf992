// A mistake in the enum's own options and one in a variant: both are reported by one build.
use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
#[tool_error(skip_dispaly)]
pub enum BillingError {
    #[tool_error("No invoice {id}")]
    Missing { id: String },
}

fn main() {}
