use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
#[tool_error(from_envelope)]
enum PaymentError {
    #[tool_error(CONFLICT, "Invoice {id} is {status}.", recovery = "Check its status first.")]
    Blocked { id: String, status: &'static str },
}

fn main() {}
