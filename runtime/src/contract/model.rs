//! What a contract is: the tools of a server (and of the upstreams a gateway mounts), each
//! action's schemas and annotations, in canonical form.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::tool::{Annotations, Deprecation, ToolDef};

/// The contract of a server: its tools, sorted by name, and the tools of the upstreams a
/// gateway mounts, sorted by namespace.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Contract {
    /// The tools, sorted by name.
    pub tools: Vec<ToolContract>,
    /// The mounted upstreams whose tools are known, sorted by namespace (a gateway's; empty
    /// for any other server, and then absent from the lockfile).
    pub upstreams: Vec<UpstreamContract>,
}

/// An upstream MCP server a gateway mounts, with its tools as it lists them. Recorded in the
/// lockfile, they are what the gateway lists before it first reaches the upstream; the
/// contract diff compares them as tools named `{namespace}_{tool}`, each with one action of
/// that name.
///
/// ```
/// use mcp_fusion::contract::{Contract, UpstreamContract};
/// use mcp_fusion::rmcp::model::Tool;
///
/// let echo: Tool = serde_json::from_value(serde_json::json!({
///     "name": "echo",
///     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
/// })).unwrap();
/// let mut contract = Contract::default();
/// contract.upstreams.push(UpstreamContract::new("t", vec![echo]));
/// let text = contract.to_lockfile();
/// assert!(text.contains("\"namespace\": \"t\""));
/// assert_eq!(Contract::from_lockfile(&text).unwrap(), contract);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UpstreamContract {
    /// The namespace it is mounted under.
    pub namespace: String,
    /// Its tools as it lists them, under their own names, sorted by name.
    pub tools: Vec<rmcp::model::Tool>,
}

impl UpstreamContract {
    /// The upstream mounted under `namespace`, listing `tools` (sorted here by name).
    pub fn new(namespace: impl Into<String>, mut tools: Vec<rmcp::model::Tool>) -> Self {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        UpstreamContract {
            namespace: namespace.into(),
            tools,
        }
    }

    /// Its tools as contracts under the names a gateway lists them by.
    fn tool_contracts(&self) -> impl Iterator<Item = ToolContract> + '_ {
        self.tools.iter().map(|tool| {
            let mut contract = ToolContract::of_listed(tool);
            let listed = format!("{}{SEPARATOR}{}", self.namespace, contract.name);
            contract.actions[0].name.clone_from(&listed);
            contract.name = listed;
            contract
        })
    }
}

/// The separator between a namespace and an upstream's tool name in a gateway's listing.
pub(crate) const SEPARATOR: char = '_';

/// One tool's contract: its description and its actions, sorted by qualified name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolContract {
    /// The tool's name.
    pub name: String,
    /// What `tools/list` says of it.
    pub description: Option<String>,
    /// The name a host shows people.
    pub title: Option<String>,
    /// Its actions, sorted by qualified name.
    pub actions: Vec<ActionContract>,
}

/// One action's contract.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ActionContract {
    /// The qualified name (`tool.action`).
    pub name: String,
    /// What the model reads about it.
    pub description: Option<String>,
    /// The schema its arguments are validated against, object keys sorted.
    pub input_schema: Value,
    /// The top-level fields it requires, sorted.
    pub required: Vec<String>,
    /// Its hints.
    pub annotations: Annotations,
    /// The OAuth scopes a caller's token must grant to call it (the tool's and its own), sorted,
    /// each once; empty when it needs none. In the lockfile only when not empty.
    pub scopes: Vec<String>,
    /// Set when it is deprecated.
    pub deprecation: Option<Deprecation>,
    /// The name a host shows people.
    pub title: Option<String>,
    /// The schema of its success value, when it declares one (what a host reads in
    /// `structuredContent`), object keys sorted.
    pub output_schema: Option<Value>,
}

/// Whatever holds tool definitions: a [`Server`](crate::Server) (its registered
/// tools), or a list of definitions. The contract is taken of definitions only.
///
/// ```
/// use mcp_fusion::contract::{Contract, ToolSet};
/// use mcp_fusion::tools::{ActionDef, ToolDef};
/// let tools = [ToolDef::new("t").action(ActionDef::without_arguments("a")).build()];
/// assert_eq!(Contract::of(&tools[..]).tools[0].actions[0].name, "t.a");
/// ```
pub trait ToolSet {
    /// The tool definitions, in any order.
    fn tool_definitions(&self) -> impl Iterator<Item = &ToolDef>;

    /// The mounted upstreams whose tools are known (a gateway's), in any order; none by
    /// default.
    fn upstreams(&self) -> Vec<UpstreamContract> {
        Vec::new()
    }
}

impl ToolSet for [ToolDef] {
    fn tool_definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.iter()
    }
}

impl Contract {
    /// The contract of a set of tools, such as a server's registered tools.
    pub fn of<S: ToolSet + ?Sized>(tools: &S) -> Contract {
        let mut contract = Contract::of_tools(tools.tool_definitions());
        contract.upstreams = tools.upstreams();
        contract
            .upstreams
            .sort_by(|a, b| a.namespace.cmp(&b.namespace));
        contract
    }

    /// The contract of these tools.
    pub fn of_tools<'a>(tools: impl IntoIterator<Item = &'a ToolDef>) -> Contract {
        let mut tools: Vec<ToolContract> = tools.into_iter().map(ToolContract::of).collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Contract {
            tools,
            upstreams: Vec::new(),
        }
    }

    /// The upstream mounted under `namespace`.
    pub fn upstream(&self, namespace: &str) -> Option<&UpstreamContract> {
        self.upstreams.iter().find(|u| u.namespace == namespace)
    }

    /// Its own tools and its upstreams' (under the names a gateway lists them by), as the diff
    /// compares them.
    pub(super) fn all_tools(&self) -> BTreeMap<String, std::borrow::Cow<'_, ToolContract>> {
        use std::borrow::Cow;
        let own = self
            .tools
            .iter()
            .map(|t| (t.name.clone(), Cow::Borrowed(t)));
        let mounted = self
            .upstreams
            .iter()
            .flat_map(UpstreamContract::tool_contracts)
            .map(|t| (t.name.clone(), Cow::Owned(t)));
        own.chain(mounted).collect()
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolContract> {
        self.tools.iter().find(|t| t.name == name)
    }
}

impl ToolContract {
    /// The contract of one tool.
    pub fn of(def: &ToolDef) -> ToolContract {
        let mut actions: Vec<ActionContract> = def
            .actions()
            .iter()
            .map(|action| {
                let input_schema = canonical(action.schema());
                let required = required(&input_schema);
                ActionContract {
                    name: action.qualified().to_owned(),
                    description: action.description().map(str::to_owned),
                    input_schema,
                    required,
                    annotations: action.annotations(),
                    scopes: action.scopes().to_vec(),
                    deprecation: action.deprecation().cloned(),
                    title: action.title().map(str::to_owned),
                    output_schema: action
                        .output_schema()
                        .map(|schema| canonical(&Value::Object(schema.clone()))),
                }
            })
            .collect();
        actions.sort_by(|a, b| a.name.cmp(&b.name));
        ToolContract {
            name: def.name().to_owned(),
            description: def.description().map(str::to_owned),
            title: def.own_title().map(str::to_owned),
            actions,
        }
    }
}

impl ToolContract {
    /// The contract of a tool as another server lists it (a gateway's upstream): one action of
    /// the tool's own name, its schemas and hints as listed.
    pub(crate) fn of_listed(tool: &rmcp::model::Tool) -> ToolContract {
        let input_schema = canonical(&Value::Object((*tool.input_schema).clone()));
        let required = required(&input_schema);
        let hints = tool.annotations.as_ref();
        let action = ActionContract {
            name: tool.name.to_string(),
            description: tool.description.as_deref().map(str::to_owned),
            input_schema,
            required,
            annotations: Annotations {
                read_only: hints.and_then(|h| h.read_only_hint),
                destructive: hints.and_then(|h| h.destructive_hint),
                idempotent: hints.and_then(|h| h.idempotent_hint),
                open_world: hints.and_then(|h| h.open_world_hint),
            },
            scopes: Vec::new(),
            deprecation: None,
            title: tool.title.clone(),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|schema| canonical(&Value::Object((**schema).clone()))),
        };
        ToolContract {
            name: tool.name.to_string(),
            description: tool.description.as_deref().map(str::to_owned),
            title: tool.title.clone(),
            actions: vec![action],
        }
    }
}

/// The top-level fields a schema requires, sorted.
pub(super) fn required(schema: &Value) -> Vec<String> {
    let mut required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    required.sort();
    required
}

/// A JSON value with every object's keys sorted (arrays keep their order, except `required`,
/// a set).
pub(super) fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> = map
                .iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("required", Value::Array(names)) => {
                            let mut names = names.clone();
                            names.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                            Value::Array(names)
                        }
                        _ => canonical(value),
                    };
                    (key, value)
                })
                .collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}
