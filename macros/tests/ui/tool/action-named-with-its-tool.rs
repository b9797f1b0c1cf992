use mcp_fusion::{ToolError, tool};

pub struct Tickets;

/// A tool.
#[tool]
impl Tickets {
    /// Gets a ticket.
    #[action(name = "tickets.get")]
    async fn get(&self) -> Result<(), ToolError> {
        Ok(())
    }

    /// Dotted names that do not repeat the tool are fine.
    #[action(name = "v2.list")]
    async fn list(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn main() {}
