use mcp_fusion::{ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Delete {
    pub id: String,
    pub confirm: Option<bool>,
}

pub struct Notes;

/// Notes.
#[tool(ask_user(confirm))]
impl Notes {
    /// Deletes a note.
    async fn delete(&self, args: Delete) -> Result<String, ToolError> {
        Ok(args.id)
    }
}

fn main() {}
