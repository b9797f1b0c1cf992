use mcp_fusion::{ToolError, tool};

pub struct Counter {
    pub calls: u64,
}

/// A tool.
#[tool]
impl Counter {
    /// Counts a call.
    async fn bump(&mut self) -> Result<u64, ToolError> {
        self.calls += 1;
        Ok(self.calls)
    }
}

fn main() {}
