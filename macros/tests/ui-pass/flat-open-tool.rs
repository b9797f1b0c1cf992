#![deny(warnings, missing_docs, unused_qualifications)]
//! A flat tool (one MCP tool per action) whose actions are open to undeclared fields, compiled
//! under `deny(warnings, missing_docs, unused_qualifications)`.

use mcp_fusion::{Tool, ToolError, tool};
use mcp_fusion::tools::Exposition;
use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of `search`.
#[derive(Deserialize, JsonSchema)]
pub struct Search {
    /// What to look for.
    pub query: String,
}

/// Search, flat and open.
pub struct Finder;

/// Finds things.
#[tool(exposition = "flat", open_arguments)]
impl Finder {
    /// Searches.
    async fn search(&self, args: Search) -> Result<String, ToolError> {
        Ok(args.query)
    }

    /// Searches, accepting only what it declares.
    async fn strict(&self, args: Search) -> Result<String, ToolError> {
        Ok(args.query)
    }
}

fn main() {
    let def = Finder.definition();
    assert_eq!(def.exposition(), Some(Exposition::Flat));
    assert!(def.actions().iter().all(|a| a.accepts_unknown_fields()));
}
