//! The `bench` tool of workload 4 (`shared/bench/WORKLOADS.md`): 20 read-only actions
//! `op00` … `op19`, each taking `{id, limit?}` and echoing it. Shared by the in-process bench
//! (`benches/dispatch.rs`) and the stdio server under load (`src/bin/bench_server.rs`).

use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The arguments of every action: an id and an optional limit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1))]
    id: String,
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

/// What every action answers: its arguments, echoed.
#[derive(Debug, Serialize)]
pub struct Echo {
    id: String,
    limit: Option<u32>,
}

impl From<Args> for Echo {
    fn from(args: Args) -> Self {
        Echo {
            id: args.id,
            limit: args.limit,
        }
    }
}

/// The benchmark tool (its actions below).
#[derive(Debug)]
pub struct Bench;

/// Benchmark tool with 20 actions.
#[tool(name = "bench", discriminator = "action")]
impl Bench {
    /// Action op00.
    #[action(read_only)]
    async fn op00(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op01.
    #[action(read_only)]
    async fn op01(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op02.
    #[action(read_only)]
    async fn op02(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op03.
    #[action(read_only)]
    async fn op03(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op04.
    #[action(read_only)]
    async fn op04(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op05.
    #[action(read_only)]
    async fn op05(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op06.
    #[action(read_only)]
    async fn op06(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op07.
    #[action(read_only)]
    async fn op07(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op08.
    #[action(read_only)]
    async fn op08(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op09.
    #[action(read_only)]
    async fn op09(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op10.
    #[action(read_only)]
    async fn op10(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op11.
    #[action(read_only)]
    async fn op11(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op12.
    #[action(read_only)]
    async fn op12(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op13.
    #[action(read_only)]
    async fn op13(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op14.
    #[action(read_only)]
    async fn op14(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op15.
    #[action(read_only)]
    async fn op15(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op16.
    #[action(read_only)]
    async fn op16(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op17.
    #[action(read_only)]
    async fn op17(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op18.
    #[action(read_only)]
    async fn op18(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }

    /// Action op19.
    #[action(read_only)]
    async fn op19(&self, args: Args) -> Result<Echo, ToolError> {
        Ok(args.into())
    }
}
