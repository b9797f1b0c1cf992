//! [`Diff`]: every change between a locked contract and the running one, classified.

use std::collections::BTreeMap;
use std::fmt;

use super::classify;
use super::model::Contract;
use crate::contract::{ChangeSeverity, ContractChange};

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
