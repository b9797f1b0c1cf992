#![deny(warnings, missing_docs, unused_qualifications)]
//! `ToolErrors` beside thiserror's derive: thiserror writes `Display`, `Error` and `From`
//! (`#[error]`, `#[from]`), and with `skip_display` this derive reads only `#[tool_error]`.

use mcp_fusion::{ToolError, ToolErrors};

/// What the ledger can fail with.
#[derive(Debug, thiserror::Error, ToolErrors)]
#[tool_error(skip_display)]
pub enum LedgerError {
    /// The disk failed.
    #[error("the ledger failed: {0}")]
    #[tool_error(internal, "the ledger failed")]
    Io(#[from] std::io::Error),
    /// Nothing there.
    #[error("no entry")]
    #[tool_error(NOT_FOUND, "No entry", recovery = "List the entries first")]
    Missing,
}

fn main() {
    let from = LedgerError::from(std::io::Error::other("disk"));
    assert_eq!(from.to_string(), "the ledger failed: disk");
    assert_eq!(ToolError::from(LedgerError::Missing).code().as_str(), "NOT_FOUND");
}
