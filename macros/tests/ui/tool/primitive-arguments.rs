use mcp_fusion::{ToolError, tool};

pub struct Notes;

/// A tool.
#[tool]
impl Notes {
    /// Gets one note by ID.
    async fn get(&self, id: u32) -> Result<String, ToolError> {
        Ok(id.to_string())
    }

    /// Tags notes.
    async fn tag(&self, ids: Vec<u32>) -> Result<usize, ToolError> {
        Ok(ids.len())
    }
}

fn main() {}
