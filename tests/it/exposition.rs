//! What `tools/list` tells the model is what the server enforces: grouped schemas that are
//! faithful when actions disagree, flat exposition (one MCP tool per action), arguments closed
//! by default, and the mistakes refused when a tool is registered, each with its whole message.

#![allow(dead_code)] // Argument types whose schemas matter more than their fields.

use crate::support::Defined;
use mcp_fusion::Server;
use mcp_fusion::rmcp::model::{CallToolRequestParams, CallToolResult};
use mcp_fusion::tools::Exposition;
use mcp_fusion::validate::Schema;
use mcp_fusion::{Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

mod open {
    use super::*;

    /// A status of the `open` workflow.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub(super) enum Status {
        Open,
        Closed,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(super) struct Move {
        /// Where to move the ticket.
        pub to: Status,
        /// The ticket: `T-` and digits.
        #[schemars(regex(pattern = r"^T-[0-9]+$"))]
        pub id: String,
    }
}

mod review {
    use super::*;

    /// A status of the `review` workflow.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub(super) enum Status {
        Pending,
        Resolved,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(super) struct Move {
        pub to: Status,
        /// The ticket number.
        pub id: u64,
    }
}

/// No `deny_unknown_fields`: closed anyway.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct List {
    pub limit: Option<u32>,
}

/// A tagged enum: one shape per variant.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum Notify {
    Email {
        address: String,
    },
    Sms {
        number: String,
        country: Option<String>,
    },
}

/// A recursive type: its schema refers to its own root (`"#"`).
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Tree {
    pub label: String,
    #[serde(default)]
    pub children: Vec<Tree>,
}

pub(crate) struct Tickets;

/// Tickets of two workflows.
#[tool]
impl Tickets {
    /// Moves a ticket of the open workflow.
    #[action(idempotent)]
    async fn move_open(&self, args: open::Move) -> Result<String, ToolError> {
        Ok(format!("{} moved", args.id))
    }

    /// Moves a ticket of the review workflow.
    #[action(destructive)]
    async fn move_review(&self, args: review::Move) -> Result<String, ToolError> {
        Ok(format!("{} moved", args.id))
    }

    /// Lists tickets.
    #[action(read_only)]
    async fn list(&self, args: List) -> Result<u32, ToolError> {
        Ok(args.limit.unwrap_or(20))
    }

    /// Lists tickets, the old way.
    #[action(read_only, deprecated, replacement = list)]
    async fn list_all(&self) -> Result<u32, ToolError> {
        Ok(20)
    }

    /// Notifies the owner.
    async fn notify(&self, args: Notify) -> Result<&'static str, ToolError> {
        Ok(match args {
            Notify::Email { .. } => "mailed",
            Notify::Sms { .. } => "texted",
        })
    }

    /// Files a tree of labels.
    #[action(open_arguments)]
    async fn file(&self, args: Tree) -> Result<usize, ToolError> {
        Ok(args.children.len())
    }

    /// Fails, pointing at another action.
    async fn fail(&self) -> Result<(), ToolError> {
        Err(
            mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::NOT_FOUND, "No such ticket.")
                .actions([Tickets::ACTIONS.list]),
        )
    }
}

fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    params
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(server: &Server, name: &str, arguments: Value) -> (bool, String) {
    let result = server
        .call(params(name, arguments))
        .await
        .expect("a known tool");
    (result.is_error == Some(true), text(&result))
}

fn listed(server: &Server) -> Vec<mcp_fusion::rmcp::model::Tool> {
    server
        .definitions()
        .flat_map(|def| def.listed(def.exposition().unwrap_or(Exposition::Grouped)))
        .collect()
}

#[test]
fn same_named_types_of_two_actions_keep_their_own_definitions() {
    let schema = Value::Object(Tickets.definition().input_schema().clone());
    let defs = schema["$defs"].as_object().unwrap();
    assert_eq!(defs["move_open.Status"]["enum"], json!(["open", "closed"]));
    assert_eq!(
        defs["move_review.Status"]["enum"],
        json!(["pending", "resolved"])
    );
    assert!(!defs.contains_key("Status"), "{defs:?}");
    let to = &schema["properties"]["to"];
    assert_eq!(to["anyOf"][0]["$ref"], "#/$defs/move_open.Status", "{to}");
    assert_eq!(to["anyOf"][1]["$ref"], "#/$defs/move_review.Status");
    // The advertised schema accepts what each action accepts.
    let advertised = Schema::new(&schema).unwrap();
    for args in [
        json!({"action": "move_open", "to": "closed", "id": "T-12"}),
        json!({"action": "move_review", "to": "resolved", "id": 12}),
    ] {
        assert!(advertised.is_valid(&args), "{args}");
    }
}

#[test]
fn a_field_declared_differently_is_shown_as_each_actions_alternative() {
    let schema = Value::Object(Tickets.definition().input_schema().clone());
    let id = &schema["properties"]["id"];
    assert_eq!(
        id["description"],
        "For move_open, move_review; required by move_open, move_review. Its accepted values \
         depend on the action: one alternative per schema, each saying its actions."
    );
    assert_eq!(id["anyOf"][0]["pattern"], "^T-[0-9]+$");
    assert_eq!(
        id["anyOf"][0]["description"],
        "The ticket: `T-` and digits. (For move_open; required by move_open.)"
    );
    assert_eq!(id["anyOf"][1]["type"], "integer");
    assert_eq!(
        id["anyOf"][1]["description"],
        "The ticket number. (For move_review; required by move_review.)"
    );
}

#[test]
fn the_discriminator_says_each_actions_hints_and_deprecation() {
    let schema = Tickets.definition().input_schema().clone();
    let description = schema["properties"]["action"]["description"]
        .as_str()
        .unwrap();
    assert!(description.starts_with("The action to run. move_open: Moves a ticket of the open workflow.; move_review (destructive): Moves"), "{description}");
    assert!(
        description.contains("list (read-only): Lists tickets."),
        "{description}"
    );
    assert!(
        description.contains("list_all (read-only; deprecated, use tickets.list instead): Lists tickets, the old way."),
        "{description}"
    );
    // Tool-level hints are the conservative combination: one destructive action makes the tool
    // destructive, and it is not read-only.
    let hints = Tickets.definition().to_rmcp().annotations.unwrap();
    assert_eq!(hints.destructive_hint, Some(true));
    assert_eq!(hints.read_only_hint, None);
}

#[test]
fn tagged_enum_and_recursive_arguments_are_listed_faithfully() {
    let schema = Value::Object(Tickets.definition().input_schema().clone());
    let properties = schema["properties"].as_object().unwrap();
    for field in ["kind", "address", "number", "country", "label", "children"] {
        assert!(properties.contains_key(field), "{field}: {properties:?}");
    }
    assert_eq!(
        properties["address"]["description"], "For notify.",
        "a field of one variant is not required by the action"
    );
    // The recursive type's root is its own definition.
    let file = &schema["$defs"]["file"];
    assert_eq!(
        file["properties"]["children"]["items"]["$ref"],
        "#/$defs/file"
    );
    let advertised = Schema::new(&schema).unwrap();
    for args in [
        json!({"action": "notify", "kind": "sms", "number": "+33 1"}),
        json!({"action": "file", "label": "a", "children": [{"label": "b", "children": []}]}),
    ] {
        assert!(advertised.is_valid(&args), "{args}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_fields_are_reported_without_deny_unknown_fields() {
    let server = Server::builder("t", "1").tool(Tickets).build().unwrap();
    let (failed, text) = call(&server, "tickets", json!({"action": "list", "limt": 5})).await;
    assert!(failed, "{text}");
    assert!(
        text.contains(r#"<field name="limt">Unrecognized field. You sent: 5. Remove it or rename it: did you mean "limit"?</field>"#),
        "{text}"
    );
    // The tagged enum's variants are closed too.
    let (failed, text) = call(
        &server,
        "tickets",
        json!({"action": "notify", "kind": "email", "address": "a@b.c", "adress": "x"}),
    )
    .await;
    assert!(failed, "{text}");
    // An action that opts out accepts them.
    let (failed, text) = call(
        &server,
        "tickets",
        json!({"action": "file", "label": "a", "colour": "red"}),
    )
    .await;
    assert!(!failed, "{text}");
    // A field no action declares is refused by the advertised root, as by validation.
    let schema = Value::Object(Tickets.definition().input_schema().clone());
    assert!(
        schema.get("additionalProperties").is_none(),
        "one action is open"
    );
}

pub(crate) struct Flat;

/// Invoices, one MCP tool per action.
#[tool(exposition = "flat", rate_limit(max = 3, window = "1m"))]
impl Flat {
    /// Gets an invoice.
    #[action(read_only, idempotent)]
    async fn get(&self, args: open::Move) -> Result<String, ToolError> {
        Ok(args.id)
    }

    /// Voids an invoice.
    #[action(destructive, deprecated, replacement = cancel)]
    async fn void(&self) -> Result<&'static str, ToolError> {
        Ok("voided")
    }

    /// Cancels an invoice.
    #[action(destructive)]
    async fn cancel(&self) -> Result<(), ToolError> {
        Err(
            mcp_fusion::ToolError::new(mcp_fusion::ErrorCode::CONFLICT, "Already paid.")
                .actions([Flat::ACTIONS.get]),
        )
    }
}

#[tokio::test(flavor = "current_thread")]
async fn flat_tools_are_listed_and_called_by_their_own_names() {
    let server = Server::builder("t", "1").tool(Flat).build().unwrap();
    let tools = listed(&server);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["flat_get", "flat_void", "flat_cancel"]);
    // Each with its action's exact schema and hints.
    let get = &tools[0];
    assert_eq!(Value::Object((*get.input_schema).clone()), {
        let mut own = Flat.definition().actions()[0].schema().clone();
        own.as_object_mut()
            .unwrap()
            .entry("type")
            .or_insert(json!("object"));
        own
    });
    assert_eq!(get.input_schema["additionalProperties"], false);
    let hints = get.annotations.as_ref().unwrap();
    assert_eq!(
        (hints.read_only_hint, hints.destructive_hint),
        (Some(true), None)
    );
    assert_eq!(
        tools[1].description.as_deref(),
        Some("Voids an invoice.\n\nDeprecated: call flat_cancel instead.")
    );

    let (failed, text) = call(&server, "flat_get", json!({"to": "open", "id": "T-1"})).await;
    assert!(!failed && text.contains("T-1"), "{text}");
    // The discriminator is no field of a flat tool.
    let (failed, text) = call(
        &server,
        "flat_get",
        json!({"action": "get", "to": "open", "id": "T-1"}),
    )
    .await;
    assert!(
        failed && text.contains(r#"<field name="action">"#),
        "{text}"
    );
    // Envelopes name what the model can call.
    let (_, text) = call(&server, "flat_cancel", json!({})).await;
    assert!(
        text.contains("<available_actions>\n  <action>flat_get</action>\n</available_actions>"),
        "{text}"
    );
    let (failed, text) = call(&server, "flat_void", json!({})).await;
    assert!(!failed, "{text}");
    assert!(
        text.contains("<recovery>Use flat_cancel instead.</recovery>"),
        "{text}"
    );
    // The tool's rate limit is shared by its flat tools: 3 per minute, spent by get, cancel and
    // void above (the refused arguments never reached it); the fourth call is refused.
    let (failed, text) = call(&server, "flat_get", json!({"to": "open", "id": "T-1"})).await;
    assert!(failed && text.contains("RATE_LIMITED"), "{text}");
    // The grouped name is unknown: a JSON-RPC error, not an envelope.
    assert!(server.call(params("flat", json!({}))).await.is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn a_misspelt_flat_tool_is_a_json_rpc_error_with_a_did_you_mean() {
    use mcp_fusion::rmcp::ServiceExt;

    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = Server::builder("t", "1").tool(Flat).build().unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();
    let refused = client
        .call_tool(params("flat_gte", json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("unknown tool: flat_gte; did you mean \"flat_get\"?"),
        "{refused}"
    );
}

#[test]
fn a_schema_that_does_not_compile_is_refused_at_registration() {
    let schema = json!({"type": "object", "properties": {"id": {"type": 12}}});
    let def = mcp_fusion::tools::ToolDef::new("broken")
        .description("Broken.")
        .action(mcp_fusion::tools::ActionDef::with_schema("get", schema).description("Gets."))
        .build();
    let refused = Server::builder("t", "1")
        .tool(Defined(def))
        .build()
        .unwrap_err();
    let problem = &refused.problems()[0];
    assert!(
        problem.starts_with("tool \"broken\", action \"broken.get\": the arguments' schema is not valid JSON Schema ("),
        "{problem}"
    );
    assert!(
        problem.ends_with("); fix the schema given to ActionDef::with_schema"),
        "{problem}"
    );
}

#[test]
fn the_server_chooses_the_exposition_of_tools_that_do_not() {
    let server = Server::builder("t", "1")
        .exposition(Exposition::Flat)
        .tool(Tickets)
        .build()
        .unwrap();
    let names: Vec<String> = server
        .definitions()
        .flat_map(|d| d.listed(Exposition::Flat))
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"tickets_move_open".to_owned()), "{names:?}");
    // The contract keys stay qualified, whatever the exposition.
    let contract = mcp_fusion::contract::Contract::of_tools(server.definitions());
    let actions: Vec<&str> = contract.tools[0]
        .actions
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert!(actions.contains(&"tickets.move_open"), "{actions:?}");
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Reassign {
    /// Who gets it.
    pub action: String,
}

pub(crate) struct Collides;

/// A list under a name: `#[tool]` refuses a plain `Vec` at compile time, but cannot see through
/// an alias, so the server's build refuses it.
type Ids = Vec<u32>;

/// A field named like the discriminator.
#[tool]
impl Collides {
    /// Reassigns.
    async fn reassign(&self, args: Reassign) -> Result<String, ToolError> {
        Ok(args.action)
    }

    /// Takes a list, which is no object.
    async fn bulk(&self, args: Ids) -> Result<usize, ToolError> {
        Ok(args.len())
    }
}

#[test]
fn registration_names_the_tool_action_field_and_fix() {
    let refused = Server::builder("t", "1")
        .tool(Collides)
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "cannot build the MCP server:\n\
         - tool \"collides\", action \"collides.reassign\": the argument field \"action\" has the \
         name of the discriminator, which chooses the action, so the action could never receive \
         it; rename the field (#[serde(rename = \"...\")]) or the discriminator (#[tool(discriminator \
         = \"...\")]), or serve the tool flat (#[tool(exposition = \"flat\")])\n\
         - tool \"collides\", action \"collides.bulk\": the arguments are of type \"array\", but a \
         call's arguments are an object with named fields; take a struct (or an enum whose \
         variants are structs, tagged with #[serde(tag = \"...\")]) and put this value in one of \
         its fields"
    );
}

#[test]
fn a_name_already_taken_is_refused() {
    let refused = Server::builder("t", "1")
        .tool(Tickets)
        .tool(Tickets)
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "cannot build the MCP server:\n- the tool \"tickets\": another tool has this name; \
         rename one (#[tool(name = \"...\")], #[action(name = \"...\")])"
    );
}

/// `flat_get` as a tool of its own, then `flat` served flat: the names collide.
#[tool(name = "flat_get")]
async fn flat_get() -> Result<(), ToolError> {
    Ok(())
}

#[test]
fn a_flat_name_already_taken_is_refused() {
    let refused = Server::builder("t", "1")
        .tool(FlatGetTool)
        .tool(Flat)
        .build()
        .unwrap_err();
    assert_eq!(
        refused.problems(),
        [
            "the flat tool \"flat_get\" (action \"flat.get\"): another tool has this name; \
          rename one (#[tool(name = \"...\")], #[action(name = \"...\")])"
        ]
    );
}

pub(crate) struct Renamed;

/// The discriminator renamed onto an argument field.
#[tool(discriminator = "id")]
impl Renamed {
    /// Gets one.
    async fn get(&self, args: review::Move) -> Result<u64, ToolError> {
        Ok(args.id)
    }
}

#[test]
fn a_renamed_discriminator_colliding_with_a_field_is_refused_unless_flat() {
    let refused = Server::builder("t", "1").tool(Renamed).build().unwrap_err();
    assert_eq!(refused.problems().len(), 1);
    assert!(
        refused.problems()[0].starts_with(
            "tool \"renamed\", action \"renamed.get\": the argument field \"id\" has the name of the discriminator"
        ),
        "{refused}"
    );
    assert!(
        Server::builder("t", "1")
            .exposition(Exposition::Flat)
            .tool(Renamed)
            .build()
            .is_ok()
    );
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Page {
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Search {
    pub query: String,
    #[serde(flatten)]
    pub page: Page,
}

pub(crate) struct Finder;

/// Flattened arguments, as users write them.
#[tool]
impl Finder {
    /// Searches.
    async fn search(&self, args: Search) -> Result<String, ToolError> {
        Ok(format!(
            "{} {:?} {:?}",
            args.query, args.page.limit, args.page.cursor
        ))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn flattened_arguments_are_listed_and_closed() {
    let server = Server::builder("t", "1").tool(Finder).build().unwrap();
    let schema = Value::Object(Finder.definition().input_schema().clone());
    for field in ["query", "limit", "cursor"] {
        assert!(
            schema["properties"].get(field).is_some(),
            "{field}: {schema}"
        );
    }
    let (failed, text) = call(
        &server,
        "finder",
        json!({"action": "search", "query": "a", "limit": 2}),
    )
    .await;
    assert!(!failed, "{text}");
    let (failed, text) = call(
        &server,
        "finder",
        json!({"action": "search", "query": "a", "limt": 2}),
    )
    .await;
    assert!(failed && text.contains("did you mean \"limit\"?"), "{text}");
}
