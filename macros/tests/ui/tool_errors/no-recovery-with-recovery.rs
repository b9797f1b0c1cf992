use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(CONFLICT, "Invoice {id} is paid.", recovery = "Check it first.", no_recovery)]
    AlreadyPaid { id: String },
}

fn main() {}
