//! The contract of a server, locked in `mcp-fusion.lock`, and what changed since.
//!
//! A model that learned a tool yesterday sends yesterday's arguments today. The lockfile is the
//! known-good record of every action's contract; [`Diff`] classifies each difference from it, and
//! a server started with its lockfile ([`ServerBuilder::contract_lock`]) tells the model, inside the
//! validation errors of affected actions, exactly what changed (ERRORS.md §7).
//!
//! | change | severity |
//! |---|---|
//! | tool or action removed | BREAKING |
//! | field added and required; field newly required | BREAKING |
//! | field removed from an object that rejects unknown fields | BREAKING |
//! | type changed (other than to a wider set of types) | BREAKING |
//! | enum value removed; `enum` or `const` added; `const` changed | BREAKING |
//! | bound tightened or added (`minimum`, `maxLength`, `minItems`, ...) | BREAKING |
//! | unknown fields newly rejected; `uniqueItems` newly set | BREAKING |
//! | `read_only` lost, `destructive` gained | BREAKING |
//! | OAuth scope added (a caller whose token lacks it is refused) | BREAKING |
//! | `idempotent` changed, `open_world` gained | RISKY |
//! | `pattern`, `format` or `multipleOf` changed or added; `default` changed | RISKY |
//! | field removed from an object that ignores unknown fields | RISKY |
//! | alternatives (`anyOf`/`oneOf`/`allOf`) added or removed; any other keyword changed | RISKY |
//! | tool, action or optional field added | SAFE |
//! | requirement dropped; bound loosened or removed; enum value added; type widened | SAFE |
//! | `pattern`, `format`, `multipleOf`, `enum`, `const` removed; unknown fields newly accepted | SAFE |
//! | `read_only` gained, `destructive` or `open_world` lost; deprecated or undeprecated | SAFE |
//! | OAuth scope removed | SAFE |
//! | descriptions, titles, examples; a deprecation's note or replacement | COSMETIC |
//!
//! An action's output schema (what a host reads in `structuredContent`) is compared the other
//! way round, for the host that reads it; these changes are never shown to the model, whose
//! arguments they do not touch:
//!
//! | output change | severity |
//! |---|---|
//! | output schema or output field removed; field no longer always present | BREAKING |
//! | type changed or widened (a reader may get a type it does not expect) | BREAKING |
//! | enum value added; any other keyword changed | RISKY |
//! | output schema or field added; field now always present; type narrowed; enum value removed | SAFE |
//!
//! ```
//! use mcp_fusion::contract::{Contract, Diff};
//! use mcp_fusion::tools::{ActionDef, ToolDef};
//!
//! let tool = ToolDef::new("billing")
//!     .action(ActionDef::without_arguments("list_invoices").read_only())
//!     .build();
//! let contract = Contract::of_tools([&tool]);
//! let lockfile = contract.to_lockfile();
//! assert_eq!(Contract::from_lockfile(&lockfile).unwrap(), contract);
//! assert!(Diff::between(&contract, &contract).is_empty());
//! ```
//!
//! [`ServerBuilder::contract_lock`]: crate::server::ServerBuilder::contract_lock

mod awareness;
mod classify;

pub(crate) use classify::OUTPUT;
mod lines;
mod lockfile;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::tool::{Annotations, Deprecation, ToolDef};

pub use awareness::{
    ChangeSeverity, ContractChange, DEFAULT_MAX_CHANGES, inject_contract_awareness,
};
pub(crate) use awareness::{awareness_of_invalid, inject_removed_action};
pub use lockfile::{LockfileError, MAX_LOCKFILE_BYTES};

/// The environment variable that makes [`assert_lockfile`] write the lockfile instead of
/// failing (`MCP_FUSION_UPDATE_LOCK=1 cargo test`).
pub const UPDATE_ENV: &str = "MCP_FUSION_UPDATE_LOCK";

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
    fn all_tools(&self) -> BTreeMap<String, std::borrow::Cow<'_, ToolContract>> {
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

    /// Reads a lockfile from disk.
    pub fn read(path: impl AsRef<Path>) -> Result<Contract, LockfileError> {
        Contract::from_lockfile(&lockfile::read_file(path.as_ref())?)
    }

    /// The lockfile's text: JSON, two-space indented, every list and key in a stable order,
    /// with a digest per action.
    pub fn to_lockfile(&self) -> String {
        lockfile::write(self)
    }

    /// Reads a lockfile's text, checking each action's digest.
    pub fn from_lockfile(text: &str) -> Result<Contract, LockfileError> {
        lockfile::read(text)
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

impl ActionContract {
    /// `sha256:` and the hex SHA-256 of the action's canonical JSON (everything but the digest).
    pub fn digest(&self) -> String {
        lockfile::digest(self)
    }
}

/// The top-level fields a schema requires, sorted.
fn required(schema: &Value) -> Vec<String> {
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
fn canonical(value: &Value) -> Value {
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

/// Every change between a locked contract and the running one, by tool.
///
/// ```
/// use mcp_fusion::contract::{Contract, Diff};
/// use mcp_fusion::contract::ChangeSeverity;
/// use mcp_fusion::tools::{ActionDef, ToolDef};
///
/// let before = ToolDef::new("billing").action(ActionDef::without_arguments("list").read_only()).build();
/// let after = ToolDef::new("billing").action(ActionDef::without_arguments("list")).build();
/// let diff = Diff::between(&Contract::of_tools([&before]), &Contract::of_tools([&after]));
/// assert_eq!(diff.max_severity(), Some(ChangeSeverity::Breaking));
/// assert_eq!(diff.tool("billing")[0].description, "\"billing.list\" is no longer read-only.");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    by_tool: BTreeMap<String, Vec<ContractChange>>,
}

impl Diff {
    /// Compares `locked` (the lockfile) with `running` (the server now).
    pub fn between(locked: &Contract, running: &Contract) -> Diff {
        let mut by_tool: BTreeMap<String, Vec<ContractChange>> = BTreeMap::new();
        let (locked, running) = (locked.all_tools(), running.all_tools());
        let names: std::collections::BTreeSet<&String> =
            locked.keys().chain(running.keys()).collect();
        for name in names {
            let mut changes = Vec::new();
            classify::tool(
                locked.get(name).map(|t| &**t),
                running.get(name).map(|t| &**t),
                &mut changes,
            );
            if !changes.is_empty() {
                by_tool.insert(name.to_owned(), changes);
            }
        }
        Diff { by_tool }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty()
    }

    /// The changes of one tool (its own and its actions'), in the order they were found.
    pub fn tool(&self, name: &str) -> &[ContractChange] {
        self.by_tool.get(name).map_or(&[], Vec::as_slice)
    }

    /// Every change with its tool's name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ContractChange)> {
        self.by_tool
            .iter()
            .flat_map(|(tool, changes)| changes.iter().map(move |c| (tool.as_str(), c)))
    }

    /// The highest severity among the changes.
    pub fn max_severity(&self) -> Option<ChangeSeverity> {
        self.iter().map(|(_, c)| c.severity).min()
    }
}

impl fmt::Display for Diff {
    /// One line per change, grouped by action, most severe first:
    /// `  BREAKING  currency: The field "currency" was added and is required.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return writeln!(f, "The contract matches the lockfile.");
        }
        for (tool, changes) in &self.by_tool {
            let mut changes: Vec<&ContractChange> = changes.iter().collect();
            changes.sort_by(|a, b| {
                (a.action.as_deref(), a.severity).cmp(&(b.action.as_deref(), b.severity))
            });
            let mut heading = None;
            for change in changes {
                let owner = change.action.as_deref().unwrap_or(tool);
                if heading != Some(owner) {
                    writeln!(f, "{owner}")?;
                    heading = Some(owner);
                }
                write!(
                    f,
                    "  {:<9} {}: {}",
                    change.severity.as_str(),
                    change.field,
                    change.description
                )?;
                match (&change.before, &change.after) {
                    (None, None) => writeln!(f)?,
                    (before, after) => writeln!(
                        f,
                        " ({} -> {})",
                        before.as_deref().unwrap_or("-"),
                        after.as_deref().unwrap_or("-")
                    )?,
                }
            }
        }
        Ok(())
    }
}

/// Checks a server's contract against its lockfile in a test, the way snapshot tests work: a
/// missing or different lockfile fails with the classified changes and a line diff, unless
/// `MCP_FUSION_UPDATE_LOCK=1` is set, which (re)writes it.
///
/// ```no_run
/// # let server = mcp_fusion::Server::builder("billing-server", "1.0.0");
/// mcp_fusion::contract::assert_lockfile(&server, concat!(env!("CARGO_MANIFEST_DIR"), "/mcp-fusion.lock"));
/// ```
#[track_caller]
pub fn assert_lockfile<S: ToolSet + ?Sized>(server: &S, path: impl AsRef<Path>) {
    let update = std::env::var_os(UPDATE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    if let Err(mismatch) = verify_lockfile(server, path.as_ref(), update) {
        panic!("{mismatch}");
    }
}

/// Why [`verify_lockfile`] failed; its `Display` is the whole explanation (what changed, the
/// line diff, how to update).
#[derive(Debug)]
#[non_exhaustive]
pub enum LockfileMismatch {
    /// There is no lockfile at the path.
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The lockfile differs from the running contract.
    Differs {
        /// The lockfile.
        path: PathBuf,
        /// The classified changes (or why the lockfile cannot be read), then the line diff.
        report: String,
        /// Why the lockfile cannot be read, when it cannot.
        unreadable: Option<LockfileError>,
    },
    /// Updating was asked for, and the lockfile could not be written.
    Write {
        /// The lockfile.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl std::fmt::Display for LockfileMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockfileMismatch::Missing { path } => write!(
                f,
                "no contract lockfile at {}; run the tests with {UPDATE_ENV}=1 to write it",
                path.display()
            ),
            LockfileMismatch::Differs { path, report, .. } => write!(
                f,
                "the contract differs from the lockfile {}\n\n{report}\nIf the change is intended, run the tests with {UPDATE_ENV}=1 and commit the lockfile.",
                path.display()
            ),
            LockfileMismatch::Write { path, .. } => {
                write!(f, "cannot write the lockfile {}", path.display())
            }
        }
    }
}

impl std::error::Error for LockfileMismatch {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LockfileMismatch::Write { source, .. } => Some(source),
            LockfileMismatch::Differs {
                unreadable: Some(e),
                ..
            } => Some(e),
            _ => None,
        }
    }
}

/// What [`assert_lockfile`] checks, as a value: `Ok` when the lockfile matches (or, with
/// `update`, was written); otherwise the message explaining the difference.
///
/// ```
/// let server = mcp_fusion::Server::builder("empty", "1.0.0");
/// let path = std::env::temp_dir().join("mcp-fusion-doc-missing.lock");
/// let _ = std::fs::remove_file(&path);
/// let err = mcp_fusion::contract::verify_lockfile(&server, &path, false).unwrap_err();
/// assert!(matches!(err, mcp_fusion::contract::LockfileMismatch::Missing { .. }));
/// assert!(err.to_string().starts_with("no contract lockfile at"));
/// ```
pub fn verify_lockfile<S: ToolSet + ?Sized>(
    server: &S,
    path: &Path,
    update: bool,
) -> Result<(), LockfileMismatch> {
    let running = Contract::of(server);
    let expected = running.to_lockfile();
    let found = lockfile::read_file(path).ok();
    if found.as_deref() == Some(expected.as_str()) {
        return Ok(());
    }
    if update {
        return std::fs::write(path, &expected).map_err(|source| LockfileMismatch::Write {
            path: path.to_path_buf(),
            source,
        });
    }
    let Some(found) = found else {
        return Err(LockfileMismatch::Missing {
            path: path.to_path_buf(),
        });
    };
    let (changes, unreadable) = match Contract::from_lockfile(&found) {
        Ok(locked) => (Diff::between(&locked, &running).to_string(), None),
        Err(e) => (format!("The lockfile cannot be read: {e}\n"), Some(e)),
    };
    Err(LockfileMismatch::Differs {
        path: path.to_path_buf(),
        report: format!("{changes}\n{}", lines::diff(&found, &expected)),
        unreadable,
    })
}
