use mcp_fusion::{Context, ToolError, tool};

pub struct Notes;

/// Notes.
#[tool]
impl Notes {
    /// Summarizes the notes with the client's model.
    #[action(read_only, needs(samplng, roots))]
    async fn summarize(&self, f: Context) -> Result<String, ToolError> {
        let _ = f;
        Ok(String::new())
    }
}

fn main() {}
