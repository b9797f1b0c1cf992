//! `#[tool]` on an impl block: each async method is an action, selected by `action`.
//!
//! `cargo run --example actions_impl`

use mcp_fusion::{Context, ErrorCode, Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewProject {
    /// A short name, lowercase with dashes.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9-]{2,30}$"))]
    slug: String,
    /// Who owns it.
    #[schemars(email)]
    owner: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ProjectId {
    id: String,
}

#[derive(Serialize)]
struct Project {
    id: String,
    slug: String,
}

/// The projects of a workspace.
struct Projects;

/// Projects: list, create, archive.
#[tool(name = "projects")]
impl Projects {
    /// Lists the projects.
    #[action(read_only)]
    async fn list(&self) -> Result<Vec<Project>, ToolError> {
        Ok(vec![Project {
            id: "proj_1".into(),
            slug: "website".into(),
        }])
    }

    /// Creates a project.
    async fn create(&self, args: NewProject, f: Context) -> Result<Project, ToolError> {
        if args.slug == "website" {
            return Err(f
                .error(
                    ErrorCode::CONFLICT,
                    format!("A project named '{}' already exists.", args.slug),
                )
                .suggest("Pick another slug, or list projects to find the existing one.")
                .actions([Projects::ACTIONS.list]));
        }
        let _owner = args.owner;
        Ok(Project {
            id: "proj_2".into(),
            slug: args.slug,
        })
    }

    /// Archives a project.
    #[action(destructive, deprecated = "Archiving moved to the admin tool.")]
    async fn archive(&self, args: ProjectId) -> Result<Value, ToolError> {
        Ok(json!({"archived": args.id}))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    for call in [
        json!({"action": "projects.list"}),
        json!({"action": "create", "slug": "website", "owner": "ada@example.com"}),
        json!({"action": "create", "slug": "Web Site!", "owner": "ada", "team": "core"}),
        json!({"action": "archive", "id": "proj_1"}),
        json!({"action": "delete", "id": "proj_1"}),
    ] {
        let result = Projects.call(call.as_object().cloned()).await;
        println!("call {call}\nisError: {}", result.is_error());
        println!("{}\n", result.text());
    }
}
