use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(RATE_LIMITED, "Too many exports at once", retry_after = wait, recovery = "Export one at a time")]
    TooFast { wait: String },
}

fn main() {}
