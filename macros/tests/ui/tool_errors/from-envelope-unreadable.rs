use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
#[tool_error(from_envelope)]
enum PaymentError {
    // `attempt` is neither a detail nor in the message; `{amount:.2}` does not read back.
    #[tool_error(CONFLICT, "Card {last4} declined {amount:.2}", details(card = last4))]
    Declined { last4: String, attempt: u32, amount: f64 },
    // A source error cannot travel in an envelope.
    #[tool_error(code = "LEDGER_DOWN", "The ledger is down")]
    Ledger(#[tool_error(source)] std::io::Error),
}

fn main() {}
