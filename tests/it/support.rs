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

/// How long [`eventually`] polls before it fails: it turns a hang into a failure and claims no
/// speed (real time, so a loaded machine does not fail a test that would pass).
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Polls `check` until it gives `Some`, and gives that; fails naming `what` once [`PATIENCE`]
/// has passed. The first polls only yield to the runtime (enough for what runs in process);
/// later ones wait 10 ms between polls, for a condition a child process or the network makes
/// true. On a paused tokio clock, those waits advance the clock (only when every task waits).
pub async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let started = std::time::Instant::now();
    let mut polls = 0u32;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        polls += 1;
        assert!(
            started.elapsed() < PATIENCE,
            "waited {PATIENCE:?} ({polls} polls) for {what}, in vain"
        );
        if polls < 100 {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}
