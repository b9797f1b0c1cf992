use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(code = "PAYMENT_DECLINED", "The card was declined: {reason}", severity = fatal)]
    Declined { reason: String },
}

fn main() {}
