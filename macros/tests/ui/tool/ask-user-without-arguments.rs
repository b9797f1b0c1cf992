use mcp_fusion::{ToolError, tool};

pub struct Notes;

/// Notes.
#[tool]
impl Notes {
    /// Deletes every note.
    #[action(destructive, ask_user(confirm))]
    async fn delete_all(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

fn main() {}
