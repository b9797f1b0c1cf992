//! Procedural macros of `mcp-fusion`: `#[tool]` and `#[derive(ToolErrors)]`.
//!
//! Depend on `mcp-fusion`, which re-exports both and documents them; the code generated here
//! reaches the runtime through its hidden `__private` module only.

mod common;
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
