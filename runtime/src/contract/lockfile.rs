//! The lockfile's text: JSON in a fixed layout, so that a change to one action is a small diff.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use std::path::Path;

use super::model::{ActionContract, Contract, ToolContract, UpstreamContract, canonical};
use crate::tool::{Annotations, Deprecation};

/// The layout version written in every lockfile.
const VERSION: u32 = 1;

/// Why a lockfile cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum LockfileError {
    /// It cannot be read from disk.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is larger than any lockfile this crate writes for a server ([`MAX_LOCKFILE_BYTES`]).
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// It is not JSON of the lockfile's layout.
    Format(serde_json::Error),
    /// It is a lockfile of another layout version.
    Version {
        /// The version the file says.
        found: u32,
    },
    /// An action's digest does not match its contract: the file was edited by hand.
    Digest {
        /// The qualified action (for an upstream's tool, `{namespace}_{tool}`).
        action: String,
    },
}

impl fmt::Display for LockfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockfileError::Io { path, .. } => {
                write!(f, "cannot read the lockfile {}", path.display())
            }
            LockfileError::TooLarge { path } => write!(
                f,
                "the lockfile {} is over {MAX_LOCKFILE_BYTES} bytes, larger than any this crate writes",
                path.display()
            ),
            LockfileError::Format(_) => f.write_str("not an mcp-fusion lockfile"),
            LockfileError::Version { found } => write!(
                f,
                "a lockfile of layout version {found} (this library writes {VERSION})"
            ),
            LockfileError::Digest { action } => write!(
                f,
                "the digest of \"{action}\" does not match its contract (edited by hand?); write the lockfile again"
            ),
        }
    }
}

impl std::error::Error for LockfileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LockfileError::Io { source, .. } => Some(source),
            LockfileError::Format(source) => Some(source),
            LockfileError::TooLarge { .. }
            | LockfileError::Version { .. }
            | LockfileError::Digest { .. } => None,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    lockfile: u32,
    tools: Vec<Tool>,
    /// Absent for a server that mounts nothing, so its lockfile reads as before gateways.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    upstreams: Vec<Upstream>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Upstream {
    namespace: String,
    tools: Vec<Listed>,
}

/// An upstream's tool: its name, the digest of what it lists, and what it lists (keys sorted).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listed {
    name: String,
    digest: String,
    listed: Value,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    actions: Vec<Action>,
}

#[derive(Serialize, Deserialize)]
struct Action {
    name: String,
    digest: String,
    #[serde(flatten)]
    body: Body,
}

/// Everything the digest covers. Optional parts are left out when absent, so that a lockfile
/// written before they existed keeps its digests.
#[derive(Serialize, Deserialize)]
struct Body {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Hints::is_empty")]
    annotations: Hints,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deprecated: Option<Deprecated>,
    required: Vec<String>,
    input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output_schema: Option<Value>,
}

#[derive(Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
struct Hints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open_world: Option<bool>,
}

impl Hints {
    fn is_empty(&self) -> bool {
        *self == Hints::default()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Deprecated {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replacement: Option<String>,
}

fn body(action: &ActionContract) -> Body {
    let a = action.annotations;
    Body {
        title: action.title.clone(),
        description: action.description.clone(),
        annotations: Hints {
            read_only: a.read_only,
            destructive: a.destructive,
            idempotent: a.idempotent,
            open_world: a.open_world,
        },
        scopes: action.scopes.clone(),
        deprecated: action.deprecation.as_ref().map(|d| Deprecated {
            note: d.note.clone(),
            replacement: d.replacement.clone(),
        }),
        required: action.required.clone(),
        input_schema: action.input_schema.clone(),
        output_schema: action.output_schema.clone(),
    }
}

fn digest_of(name: &str, body: &impl Serialize) -> String {
    let json = serde_json::to_string(&(name, body)).expect("a contract serializes");
    format!(
        "sha256:{}",
        crate::hex::lower(&Sha256::digest(json.as_bytes()))
    )
}

pub(super) fn digest(action: &ActionContract) -> String {
    digest_of(&action.name, &body(action))
}

pub(super) fn write(contract: &Contract) -> String {
    let file = File {
        lockfile: VERSION,
        upstreams: contract
            .upstreams
            .iter()
            .map(|upstream| Upstream {
                namespace: upstream.namespace.clone(),
                tools: upstream
                    .tools
                    .iter()
                    .map(|tool| {
                        let listed =
                            canonical(&serde_json::to_value(tool).expect("a tool serializes"));
                        Listed {
                            name: tool.name.to_string(),
                            digest: digest_of(&tool.name, &listed),
                            listed,
                        }
                    })
                    .collect(),
            })
            .collect(),
        tools: contract
            .tools
            .iter()
            .map(|tool| Tool {
                name: tool.name.clone(),
                title: tool.title.clone(),
                description: tool.description.clone(),
                actions: tool
                    .actions
                    .iter()
                    .map(|action| {
                        let body = body(action);
                        Action {
                            name: action.name.clone(),
                            digest: digest_of(&action.name, &body),
                            body,
                        }
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&file).expect("a contract serializes");
    text.push('\n');
    text
}

/// The largest lockfile read (64 MiB): a server of a thousand tools writes a few MiB.
pub const MAX_LOCKFILE_BYTES: u64 = 64 << 20;

/// A lockfile's text from disk, refused past [`MAX_LOCKFILE_BYTES`] without reading the rest.
pub(super) fn read_file(path: &std::path::Path) -> Result<String, LockfileError> {
    use std::io::Read;
    let io = |source| LockfileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_LOCKFILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_LOCKFILE_BYTES {
        return Err(LockfileError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    Ok(text)
}

pub(super) fn read(text: &str) -> Result<Contract, LockfileError> {
    let file: File = serde_json::from_str(text).map_err(LockfileError::Format)?;
    if file.lockfile != VERSION {
        return Err(LockfileError::Version {
            found: file.lockfile,
        });
    }
    let mut tools = Vec::with_capacity(file.tools.len());
    for tool in file.tools {
        let mut actions = Vec::with_capacity(tool.actions.len());
        for Action { name, digest, body } in tool.actions {
            if digest != digest_of(&name, &body) {
                return Err(LockfileError::Digest { action: name });
            }
            let Body {
                title,
                description,
                annotations: hints,
                mut scopes,
                deprecated,
                required,
                input_schema,
                output_schema,
            } = body;
            // A set: sorted and each once, as a running server's contract has it.
            scopes.sort_unstable();
            scopes.dedup();
            actions.push(ActionContract {
                name,
                description,
                input_schema: canonical(&input_schema),
                required,
                annotations: Annotations {
                    read_only: hints.read_only,
                    destructive: hints.destructive,
                    idempotent: hints.idempotent,
                    open_world: hints.open_world,
                },
                scopes,
                deprecation: deprecated.map(|d| Deprecation {
                    note: d.note,
                    replacement: d.replacement,
                }),
                title,
                output_schema: output_schema.as_ref().map(canonical),
            });
        }
        actions.sort_by(|a, b| a.name.cmp(&b.name));
        tools.push(ToolContract {
            name: tool.name,
            title: tool.title,
            description: tool.description,
            actions,
        });
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let mut upstreams = Vec::with_capacity(file.upstreams.len());
    for upstream in file.upstreams {
        let mut tools = Vec::with_capacity(upstream.tools.len());
        for Listed {
            name,
            digest,
            listed,
        } in upstream.tools
        {
            let hand_edited = || LockfileError::Digest {
                action: format!("{}{}{name}", upstream.namespace, super::model::SEPARATOR),
            };
            if digest != digest_of(&name, &listed) {
                return Err(hand_edited());
            }
            let tool: rmcp::model::Tool =
                serde_json::from_value(listed).map_err(LockfileError::Format)?;
            if tool.name != name {
                return Err(hand_edited());
            }
            tools.push(tool);
        }
        upstreams.push(UpstreamContract::new(upstream.namespace, tools));
    }
    upstreams.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    Ok(Contract { tools, upstreams })
}

impl Contract {
    /// Reads a lockfile from disk.
    pub fn read(path: impl AsRef<Path>) -> Result<Contract, LockfileError> {
        Contract::from_lockfile(&read_file(path.as_ref())?)
    }

    /// The lockfile's text: JSON, two-space indented, every list and key in a stable order,
    /// with a digest per action.
    pub fn to_lockfile(&self) -> String {
        write(self)
    }

    /// Reads a lockfile's text, checking each action's digest.
    pub fn from_lockfile(text: &str) -> Result<Contract, LockfileError> {
        read(text)
    }
}

impl ActionContract {
    /// `sha256:` and the hex SHA-256 of the action's canonical JSON (everything but the digest).
    pub fn digest(&self) -> String {
        digest(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ActionDef, ToolDef};

    /// `billing.create_invoice` needing these scopes.
    fn billing(scopes: &[&str]) -> Contract {
        let tool = ToolDef::new("billing")
            .action(
                ActionDef::without_arguments("create_invoice")
                    .description("Creates an invoice.")
                    .destructive()
                    .scopes(scopes.iter().copied()),
            )
            .build();
        Contract::of_tools([&tool])
    }

    #[test]
    fn scopes_are_written_after_the_annotations_and_read_back() {
        let contract = billing(&["invoices:write", "invoices:admin"]);
        let action = &contract.tools[0].actions[0];
        assert_eq!(action.scopes, ["invoices:admin", "invoices:write"]);
        let text = contract.to_lockfile();
        assert!(
            text.contains(
                "          \"annotations\": {\n            \"destructive\": true\n          },\n          \"scopes\": [\n            \"invoices:admin\",\n            \"invoices:write\"\n          ],\n          \"required\": [],\n"
            ),
            "{text}"
        );
        let read = Contract::from_lockfile(&text).unwrap();
        assert_eq!(read, contract);
        assert_eq!(read.to_lockfile(), text);

        // The digest covers the scopes: the same action without them has another.
        let bare = billing(&[]);
        let bare_action = &bare.tools[0].actions[0];
        assert_ne!(bare_action.digest(), action.digest());
        assert!(!bare.to_lockfile().contains("scopes"));
        // Scopes edited by hand break the digest.
        let edited = text.replacen("invoices:admin", "invoices:read", 1);
        assert!(matches!(
            Contract::from_lockfile(&edited),
            Err(LockfileError::Digest { action }) if action == "billing.create_invoice"
        ));
        // Dropping them breaks it too: absent reads as none, which is another digest.
        let dropped = text.replacen(
            "\"scopes\": [\n            \"invoices:admin\",\n            \"invoices:write\"\n          ],\n          ",
            "",
            1,
        );
        assert_ne!(dropped, text);
        assert!(matches!(
            Contract::from_lockfile(&dropped),
            Err(LockfileError::Digest { .. })
        ));
    }

    #[test]
    fn an_action_without_scopes_keeps_its_digest() {
        // Its canonical JSON is the one of the layout before scopes existed, so every lockfile
        // written then still verifies.
        let bare = billing(&[]);
        let action = &bare.tools[0].actions[0];
        let before_scopes = format!(
            "[\"billing.create_invoice\",{{\"description\":\"Creates an invoice.\",\"annotations\":{{\"destructive\":true}},\"required\":[],\"input_schema\":{}}}]",
            action.input_schema
        );
        let hex: String = Sha256::digest(before_scopes.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(action.digest(), format!("sha256:{hex}"));
    }

    #[test]
    fn scopes_that_are_not_a_list_of_strings_are_refused() {
        let text = billing(&["invoices:write"]).to_lockfile();
        let written = "\"scopes\": [\n            \"invoices:write\"\n          ]";
        assert!(text.contains(written), "{text}");
        for malformed in [
            "\"scopes\": \"invoices:write\"",
            "\"scopes\": [1]",
            "\"scopes\": null",
            "\"scopes\": {\"invoices:write\": true}",
        ] {
            let edited = text.replacen(written, malformed, 1);
            let refused = Contract::from_lockfile(&edited).unwrap_err();
            assert!(
                matches!(refused, LockfileError::Format(_)),
                "{malformed}: {refused:?}"
            );
        }
    }

    #[test]
    fn a_file_over_the_cap_is_refused_unread() {
        let path = std::env::temp_dir().join(format!("mcp-fusion-big-{}.lock", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_LOCKFILE_BYTES + 1).unwrap();
        let refused = read_file(&path).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(
            matches!(refused, LockfileError::TooLarge { .. }),
            "{refused}"
        );
    }
}
