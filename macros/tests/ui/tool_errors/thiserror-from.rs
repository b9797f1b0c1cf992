use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
enum LedgerError {
    #[tool_error(internal, "the ledger failed")]
    Io(#[from] std::io::Error),
    #[tool_error(NOT_FOUND, "No entry")]
    Missing {
        #[source]
        cause: std::io::Error,
    },
    #[error("busy")]
    #[tool_error(CONFLICT, "Busy")]
    Busy,
}

fn main() {}
