//! The expansions of the macros must not lean on the prelude or on a relative `mcp_fusion`
//! path: every name they need is spelled absolutely.

#![allow(dead_code, non_camel_case_types)]

struct Result;
struct Ok;
struct Err;
struct Option;
struct Some;
struct None;
struct Box;
struct Vec;
struct String;
struct Default;
struct Clone;
struct Send;
struct Sync;
mod mcp_fusion {}
mod core {}
mod std {}

#[derive(Debug, ::mcp_fusion::ToolErrors)]
enum Problem {
    #[tool_error(NOT_FOUND, "No invoice {id}", recovery = "List first", actions(Billing::list), details(id = id), retry_after = 3)]
    Missing { id: ::std::string::String },
    #[tool_error(code = "ODD", severity = critical, "Odd: {0}", no_recovery)]
    Odd(u8),
}

#[derive(::serde::Deserialize, ::schemars::JsonSchema)]
struct Args {
    id: ::std::string::String,
}

struct Billing;

/// A tool in a hostile namespace.
#[::mcp_fusion::tool(rate_limit(max = 5, window = "1s"))]
impl Billing {
    /// Lists.
    #[action(read_only, timeout = "1s")]
    async fn list(&self) -> ::core::result::Result<u8, Problem> {
        ::core::result::Result::Ok(1)
    }

    /// Gets.
    #[action(deprecated = "Use list.", replacement = list)]
    async fn get(
        &self,
        args: Args,
        f: ::mcp_fusion::Context,
    ) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        let _ = (args.id, f.action());
        ::core::result::Result::Err(::mcp_fusion::ToolError::from(Problem::Odd(1)))
    }
}

/// Single.
#[::mcp_fusion::tool]
async fn single(args: Args) -> ::core::result::Result<u8, ::std::io::Error> {
    let _ = args;
    ::core::result::Result::Ok(2)
}

struct Shadows;

/// Actions named like the methods the generated code calls: every call in the expansion is
/// fully qualified, so none of them is taken for an action.
#[::mcp_fusion::tool]
impl Shadows {
    /// Named like `Tool::definition`.
    async fn definition(&self) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        ::core::result::Result::Ok(1)
    }
    /// Named like `Tool::call`.
    async fn call(&self) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        ::core::result::Result::Ok(2)
    }
    /// Named like `Tool::invoke`.
    async fn invoke(&self) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        ::core::result::Result::Ok(3)
    }
    /// Named `run`.
    async fn run(&self) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        ::core::result::Result::Ok(4)
    }
    /// Named `name`.
    async fn name(&self) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        ::core::result::Result::Ok(5)
    }
    /// Named `new`.
    #[allow(clippy::new_ret_no_self, clippy::wrong_self_convention)]
    async fn new(&self) -> ::core::result::Result<u8, ::mcp_fusion::ToolError> {
        ::core::result::Result::Ok(6)
    }
}

/// A choice in a hostile namespace.
#[derive(::serde::Deserialize, ::mcp_fusion::tools::ElicitChoice)]
enum Pick {
    /// The first.
    First,
    #[choice(title = "The second")]
    Second,
    Third,
}

/// A form in a hostile namespace, one option of each kind.
#[derive(::serde::Deserialize, ::mcp_fusion::tools::ElicitForm)]
#[serde(rename_all = "camelCase")]
struct Ask {
    /// Who.
    #[form(
        title = "Email",
        format = "email",
        min_length = 3,
        max_length = 9,
        default = "a@b.c"
    )]
    email_address: ::std::string::String,
    #[form(min = 1, max = 3, default = 2)]
    count: u8,
    #[form(min = 0, max = 1.5, default = 0.5)]
    ratio: f64,
    #[form(default = Pick::Second)]
    pick: Pick,
    #[form(min_items = 1, max_items = 2, default = [Pick::First])]
    picks: ::std::vec::Vec<Pick>,
    maybe: ::core::option::Option<bool>,
}

#[test]
fn forms_compile_in_a_hostile_namespace() {
    use ::mcp_fusion::tools::{ElicitChoice as _, ElicitForm as _};
    let schema = Ask::schema();
    assert_eq!(schema.properties.len(), 6);
    assert_eq!(
        schema.required.map(|r| r.len()),
        ::core::option::Option::Some(5)
    );
    assert_eq!(Pick::Third.value(), "Third");
    assert_eq!(Pick::choices().len(), 3);
}

#[::tokio::test]
async fn actions_may_be_named_like_the_trait_methods() {
    for (i, action) in ["definition", "call", "invoke", "run", "name", "new"]
        .into_iter()
        .enumerate()
    {
        let arguments = ::serde_json::json!({ "action": action });
        let result = ::mcp_fusion::Tool::call(&Shadows, arguments.as_object().cloned()).await;
        assert_eq!(result.text(), (i + 1).to_string(), "{action}");
    }
}

#[test]
fn expansions_compile_in_a_hostile_namespace() {
    use ::mcp_fusion::Tool as _;
    assert_eq!(Billing.definition().actions().len(), 2);
    assert_eq!(SingleTool.definition().name(), "single");
    let err = ::mcp_fusion::ToolError::from(Problem::Missing { id: "inv_1".into() });
    assert_eq!(
        err.available_actions().collect::<::std::vec::Vec<_>>(),
        ["billing.list"]
    );
    assert_eq!(Problem::Odd(7).to_string(), "Odd: 7");
}
