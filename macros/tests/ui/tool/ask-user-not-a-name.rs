use mcp_fusion::{ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Delete {
    pub id: String,
    pub confirm: Option<bool>,
}

pub struct Notes;

/// Notes.
#[tool]
impl Notes {
    /// Deletes a note.
    #[action(ask_user(Delete::confirm))]
    async fn delete(&self, args: Delete) -> Result<String, ToolError> {
        Ok(args.id)
    }
}

fn main() {}
