//! What several test files share.

use std::path::PathBuf;

/// The `billing` example's binary, which `cargo test` builds with the examples (running one
/// test file alone does not: build it with `cargo build --example billing`).
/// `MCP_FUSION_BILLING=path` runs another build of it instead (a release build, an older
/// commit's).
#[allow(dead_code)] // Not every test file that shares this module starts the billing server.
pub fn billing_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_FUSION_BILLING") {
        return path.into();
    }
    let test = std::env::current_exe().expect("the test binary has a path");
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let binary = profile
        .join("examples")
        .join(format!("billing{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.exists(),
        "{} is missing: run the whole suite (`cargo test`), which builds the examples",
        binary.display()
    );
    binary
}

/// A tool of a hand-built definition whose every action answers an empty success: for tests of
/// what a server does with a definition (registration checks, contract notes), not of handlers.
#[allow(dead_code)] // Not every test file that shares this module registers one.
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
