// One attribute, three independent mistakes: all three are reported by one build.
use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(code = "payment-declined", "The card was declined: {reson}", severity = fatal)]
    Declined { reason: String },
}

fn main() {}
