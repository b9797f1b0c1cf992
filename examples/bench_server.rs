//! Workload 5 of `shared/bench/WORKLOADS.md`: the server under load, built with this library.
//!
//! On stdio: the `bench` tool of workload 4 (20 actions `op00` … `op19`, each echoing
//! `{"id", "limit"}`) and the `users` tool of workload 3 (action `create`). No logging, a
//! single-threaded runtime. Driven by `examples/load.rs`; `cargo build --release --examples`.
//!
//! `--pipes` serves on `rmcp::transport::stdio_pipes()` explicitly, which is also what
//! `Server::serve_stdio` uses (non-blocking pipes on Linux),
//! so the driver can tell the library's cost from the transport's.

use mcp_fusion::rmcp::ServiceExt;
use mcp_fusion::server::Server;
use mcp_fusion::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new("bench-server", env!("CARGO_PKG_VERSION"))
        .tool(Bench)
        .tool(Users);
    if std::env::args().any(|a| a == "--pipes") {
        let running = server
            .serve(mcp_fusion::rmcp::transport::stdio_pipes())
            .await?;
        running.waiting().await?;
    } else {
        server.serve_stdio().await?;
    }
    Ok(())
}

// ---- workload 4: `bench` ----

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    #[schemars(length(min = 1))]
    id: String,
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u32>,
}

#[derive(Serialize)]
struct Echo {
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

struct Bench;

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

// ---- workload 3: `users` ----

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Role {
    Admin,
    Editor,
    Viewer,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Address {
    #[schemars(length(min = 1))]
    street: String,
    #[schemars(length(min = 1))]
    city: String,
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateUser {
    #[schemars(email)]
    email: String,
    #[schemars(range(min = 18, max = 120))]
    age: u32,
    role: Role,
    address: Address,
    #[schemars(length(max = 10))]
    tags: Vec<String>,
    #[schemars(length(min = 1, max = 100))]
    name: String,
}

struct Users;

/// Users of the benchmark.
#[tool(name = "users")]
impl Users {
    /// Creates a user and returns it.
    async fn create(&self, args: CreateUser) -> Result<CreateUser, ToolError> {
        Ok(args)
    }
}
