// Every mistake of one tool is reported at once.
use mcp_fusion::{ToolError, tool};

pub struct Tickets;

/// A tool.
#[tool]
impl Tickets {
    /// Closes a ticket.
    #[action(read_only, destructive, deprecated, replacement = close)]
    async fn close(&self) -> Result<(), ToolError> {
        Ok(())
    }

    /// Reopens a ticket.
    #[action(name = "tickets.reopen")]
    async fn reopen(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn main() {}
