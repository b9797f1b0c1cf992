//! What several modules share. The binaries they start and the raw clients are
//! `mcp_fusion_drivers`' ([`mcp_fusion_drivers::artifacts`]).

/// The billing tool of the examples, served in process.
#[path = "../../examples/common/billing.rs"]
#[allow(dead_code)] // The examples use all of it, the tests part.
pub mod billing;

/// A tool of a hand-built definition whose every action answers an empty success: for tests of
/// what a server does with a definition (registration checks, contract notes), not of handlers.
pub struct Defined(pub mcp_fusion::tools::ToolDef);

impl mcp_fusion::Tool for Defined {
    fn definition(&self) -> &mcp_fusion::tools::ToolDef {
        &self.0
    }

    fn invoke(
        &self,
        _: usize,
        _: serde_json::Value,
        _: mcp_fusion::Context,
    ) -> mcp_fusion::tools::BoxFuture<
        '_,
        Result<mcp_fusion::rmcp::model::CallToolResult, mcp_fusion::tools::Failure>,
    > {
        Box::pin(async { Ok(mcp_fusion::rmcp::model::CallToolResult::success(vec![])) })
    }
}
