use mcp_fusion::{ToolError, tool};

pub struct Store<T>(pub Vec<T>);

#[tool]
impl<T: Send + Sync + 'static> Store<T> {
    /// Counts the items.
    async fn count(&self) -> Result<usize, ToolError> {
        Ok(self.0.len())
    }
}

fn main() {}
