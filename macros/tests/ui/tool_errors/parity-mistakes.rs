// Every misuse of from, source, transparent and internal, reported at once.
use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub enum LedgerError {
    #[tool_error(transparent)]
    Two(std::io::Error, String),
    #[tool_error(internal, NOT_FOUND, "gone", recovery = "retry")]
    Coded { id: String },
    #[tool_error(INTERNAL_ERROR, "read failed")]
    FromWithMore {
        #[tool_error(from)]
        cause: std::io::Error,
        path: String,
    },
    #[tool_error(CONFLICT, "locked")]
    TwoSources {
        #[tool_error(source)]
        first: std::io::Error,
        #[tool_error(source)]
        second: std::io::Error,
    },
    #[tool_error(transparent, internal)]
    Both(std::io::Error),
}

fn main() {}
