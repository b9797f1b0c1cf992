//! `crate = path` on both macros: the runtime reached through a re-export. The shim's
//! `__private` is a decoy whose `error` marks what it builds, proving the generated code goes
//! through the path given (serde's trick in `test_serde_path.rs`).

mod shim {
    pub use ::mcp_fusion::*;

    #[doc(hidden)]
    pub mod __private {
        pub use ::mcp_fusion::__private::*;

        /// Shadows the glob import: the derive's messages are marked when built through here.
        pub fn error(
            code: ::mcp_fusion::ErrorCode,
            message: impl Into<::mcp_fusion::errors::Text>,
        ) -> ::mcp_fusion::ToolError {
            ::mcp_fusion::ToolError::new(code, message).detail("via", "shim")
        }
    }
}

#[derive(Debug, shim::ToolErrors)]
#[tool_error(crate = shim)]
enum Problem {
    #[tool_error(CONFLICT, "Busy", no_recovery)]
    Busy,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {}

struct Renamed;

/// A tool reached through the shim.
#[shim::tool(crate = shim)]
impl Renamed {
    /// Pings.
    async fn ping(&self, _args: Args) -> Result<&'static str, Problem> {
        Ok("pong")
    }
}

#[test]
fn the_derive_goes_through_the_given_path() {
    let err = shim::ToolError::from(Problem::Busy);
    assert_eq!(err.detail_pairs().collect::<Vec<_>>(), [("via", "shim")]);
}

#[tokio::test]
async fn the_tool_goes_through_the_given_path() {
    use shim::Tool as _;
    let result = Renamed
        .call(serde_json::json!({"action": "ping"}).as_object().cloned())
        .await;
    assert!(!result.is_error());
    assert_eq!(Renamed::ACTIONS.ping.as_str(), "renamed.ping");
}
