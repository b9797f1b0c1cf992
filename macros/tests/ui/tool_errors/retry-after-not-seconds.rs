use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(RATE_LIMITED, "Too many exports at once", retry_after = "30s")]
    TooFast,
}

fn main() {}
