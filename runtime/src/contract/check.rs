//! The lockfile checked against a server: in tests ([`assert_lockfile`]), at startup
//! ([`verify_lockfile`]), and from a command line ([`command`]).

use std::path::{Path, PathBuf};

use super::diff::Diff;
use super::lines;
use super::lockfile::{self, LockfileError};
use super::model::{Contract, ToolSet};

/// The environment variable that makes [`assert_lockfile`] write the lockfile instead of
/// failing (`MCP_FUSION_UPDATE_LOCK=1 cargo test`).
pub const UPDATE_ENV: &str = "MCP_FUSION_UPDATE_LOCK";

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
