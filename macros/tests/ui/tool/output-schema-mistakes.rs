use mcp_fusion::{ToolError, tool};

pub struct Reports;

// `#[tool(output_schema)]` on the block asks it of every action: each is checked.

/// A tool.
#[tool(output_schema)]
impl Reports {
    /// The success type is not written as `Result<T, E>`: nothing to read a schema from.
    #[action]
    async fn count(&self) -> Counted {
        Ok(3)
    }

    /// Nor here.
    #[action]
    async fn total(&self) -> u32 {
        3
    }
}

type Counted = Result<u32, ToolError>;

fn main() {}
