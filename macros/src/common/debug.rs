//! `MCP_FUSION_MACROS_DEBUG=1` prints every expansion to stderr while building: the opt-in way
//! to see what the macros generate.

use proc_macro2::TokenStream;

pub(crate) fn dump(name: &str, tokens: TokenStream) -> TokenStream {
    if std::env::var_os("MCP_FUSION_MACROS_DEBUG").is_some_and(|v| v != "0") {
        eprintln!("// mcp-fusion: expansion of {name}\n{tokens}\n");
    }
    tokens
}
