//! The contract flags of the examples that lock their contract (billing, gateway): the
//! application's own command line, over what `mcp_fusion::contract` computes.

use std::path::Path;
use std::process::ExitCode;

use mcp_fusion::contract::{Contract, Diff, ToolSet};

/// `--contract-write PATH` writes the lockfile of what `server` lists; `--contract-diff PATH`
/// prints what changed since the lockfile at `PATH` (exit status 1 when something did, 2 when
/// it cannot be read). `None` when neither was given: the server is served.
pub(crate) fn run<S: ToolSet + ?Sized>(
    server: &S,
    diff: Option<&Path>,
    write: Option<&Path>,
) -> Option<ExitCode> {
    if let Some(path) = write {
        return Some(
            match std::fs::write(path, Contract::of(server).to_lockfile()) {
                Ok(()) => {
                    println!("wrote {}", path.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("cannot write {}: {e}", path.display());
                    ExitCode::from(2)
                }
            },
        );
    }
    Some(match Contract::read(diff?) {
        Ok(locked) => {
            let diff = Diff::between(&locked, &Contract::of(server));
            print!("{diff}");
            if diff.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            // The error, then each of its causes.
            let mut line = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                line.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("{line}");
            ExitCode::from(2)
        }
    })
}
