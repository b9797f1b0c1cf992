//! `crate = path` on the macros: the runtime reached through a re-export. The shim's
//! `__private` is a decoy whose `error` and `docs` mark what they build, proving the generated
//! code goes through the path given (serde's trick, in its repository:
//! serde-rs/serde `test_suite/tests/test_serde_path.rs`).

mod shim {
    pub(super) use ::mcp_fusion::*;

    #[doc(hidden)]
    pub(super) mod __private {
        pub(crate) use ::mcp_fusion::__private::*;

        /// Shadows the glob import: descriptions and titles from doc comments are marked when
        /// built through here.
        pub(crate) fn docs(text: &str) -> String {
            format!("(via shim) {}", ::mcp_fusion::__private::docs(text))
        }

        /// Shadows the glob import: the derive's messages are marked when built through here.
        pub(crate) fn error(
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

/// A choice reached through the shim.
#[derive(serde::Deserialize, shim::tools::ElicitChoice)]
#[choice(crate = shim)]
enum Answer {
    /// Yes.
    Yes,
    /// No.
    No,
}

/// A form reached through the shim.
#[derive(serde::Deserialize, shim::tools::ElicitForm)]
#[form(crate = shim)]
struct Confirm {
    /// Go ahead.
    answer: Answer,
    #[form(min = 1)]
    copies: Option<u8>,
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
    assert_eq!(err.get_details().collect::<Vec<_>>(), [("via", "shim")]);
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

#[test]
fn the_form_derives_go_through_the_given_path() {
    use shim::tools::ElicitForm as _;
    let schema = serde_json::to_value(Confirm::schema()).unwrap();
    assert_eq!(
        schema["properties"]["answer"],
        serde_json::json!({
            "type": "string",
            "description": "(via shim) Go ahead.",
            "oneOf": [
                {"const": "Yes", "title": "(via shim) Yes."},
                {"const": "No", "title": "(via shim) No."},
            ],
        })
    );
    assert_eq!(schema["required"], serde_json::json!(["answer"]));
    let answer: Confirm = serde_json::from_value(serde_json::json!({"answer": "No"})).unwrap();
    assert!(matches!(answer.answer, Answer::No) && answer.copies.is_none());
}
