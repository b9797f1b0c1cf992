//! Procedural macros of `mcp-fusion`: `#[tool]`, `#[derive(ToolErrors)]`,
//! `#[derive(ElicitForm)]` and `#[derive(ElicitChoice)]`.
//!
//! Depend on `mcp-fusion`, which re-exports them and documents them; the code generated here
//! reaches the runtime through its hidden `__private` module only.

mod common;
mod elicit;
mod tool;
mod tool_errors;

use proc_macro::TokenStream;

/// See `mcp_fusion::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    common::debug::dump("tool", tool::expand(args.into(), item.into())).into()
}

/// See `mcp_fusion::ToolErrors`. thiserror's `from`, `source` and `error` are declared only so
/// that a misplaced one gets an error naming ours (beside thiserror, with `skip_display`, they
/// are left to it).
#[proc_macro_derive(ToolErrors, attributes(tool_error, from, source, error))]
pub fn derive_tool_errors(input: TokenStream) -> TokenStream {
    common::debug::dump("ToolErrors", tool_errors::expand(input.into())).into()
}

/// See `mcp_fusion::tools::ElicitForm`.
#[proc_macro_derive(ElicitForm, attributes(form))]
pub fn derive_elicit_form(input: TokenStream) -> TokenStream {
    common::debug::dump("ElicitForm", elicit::expand_form(input.into())).into()
}

/// See `mcp_fusion::tools::ElicitChoice`.
#[proc_macro_derive(ElicitChoice, attributes(choice))]
pub fn derive_elicit_choice(input: TokenStream) -> TokenStream {
    common::debug::dump("ElicitChoice", elicit::expand_choice(input.into())).into()
}
