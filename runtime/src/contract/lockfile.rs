//! The lockfile's text: JSON in a fixed layout, so that a change to one action is a small diff.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{ActionContract, Contract, ToolContract, canonical};
use crate::tool::{Annotations, Deprecation};

/// The layout version written in every lockfile.
const VERSION: u32 = 1;

/// Why a lockfile cannot be used.
#[derive(Debug)]
pub enum LockfileError {
    /// It cannot be read from disk.
    Io(String),
    /// It is not a lockfile of this version.
    Format(String),
    /// An action's digest does not match its contract: the file was edited by hand.
    Digest {
        /// The qualified action.
        action: String,
    },
}

impl LockfileError {
    pub(super) fn io(path: &Path, err: std::io::Error) -> Self {
        LockfileError::Io(format!("{}: {err}", path.display()))
    }
}

impl fmt::Display for LockfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockfileError::Io(e) => write!(f, "cannot read the lockfile {e}"),
            LockfileError::Format(e) => write!(f, "not an mcp-fusion lockfile: {e}"),
            LockfileError::Digest { action } => write!(
                f,
                "the digest of \"{action}\" does not match its contract (edited by hand?); write the lockfile again"
            ),
        }
    }
}

impl std::error::Error for LockfileError {}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    lockfile: u32,
    tools: Vec<Tool>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tool {
    name: String,
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

/// Everything the digest covers.
#[derive(Serialize, Deserialize)]
struct Body {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Hints::is_empty")]
    annotations: Hints,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deprecated: Option<Deprecated>,
    required: Vec<String>,
    input_schema: Value,
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
        description: action.description.clone(),
        annotations: Hints {
            read_only: a.read_only,
            destructive: a.destructive,
            idempotent: a.idempotent,
            open_world: a.open_world,
        },
        deprecated: action.deprecation.as_ref().map(|d| Deprecated {
            note: d.note.clone(),
            replacement: d.replacement.clone(),
        }),
        required: action.required.clone(),
        input_schema: action.input_schema.clone(),
    }
}

fn digest_of(name: &str, body: &Body) -> String {
    let json = serde_json::to_string(&(name, body)).expect("a contract serializes");
    let hash = Sha256::digest(json.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    out
}

pub(super) fn digest(action: &ActionContract) -> String {
    digest_of(&action.name, &body(action))
}

pub(super) fn write(contract: &Contract) -> String {
    let file = File {
        lockfile: VERSION,
        tools: contract
            .tools
            .iter()
            .map(|tool| Tool {
                name: tool.name.clone(),
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

pub(super) fn read(text: &str) -> Result<Contract, LockfileError> {
    let file: File =
        serde_json::from_str(text).map_err(|e| LockfileError::Format(e.to_string()))?;
    if file.lockfile != VERSION {
        return Err(LockfileError::Format(format!(
            "layout version {} (this library writes {VERSION})",
            file.lockfile
        )));
    }
    let mut tools = Vec::with_capacity(file.tools.len());
    for tool in file.tools {
        let mut actions = Vec::with_capacity(tool.actions.len());
        for Action { name, digest, body } in tool.actions {
            if digest != digest_of(&name, &body) {
                return Err(LockfileError::Digest { action: name });
            }
            let Body {
                description,
                annotations: hints,
                deprecated,
                required,
                input_schema,
            } = body;
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
                deprecation: deprecated.map(|d| Deprecation {
                    note: d.note,
                    replacement: d.replacement,
                }),
            });
        }
        actions.sort_by(|a, b| a.name.cmp(&b.name));
        tools.push(ToolContract {
            name: tool.name,
            description: tool.description,
            actions,
        });
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Contract { tools })
}
