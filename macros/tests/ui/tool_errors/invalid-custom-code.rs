use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(code = "payment-declined", "The card was declined: {reason}")]
    Declined { reason: String },
}

fn main() {}
