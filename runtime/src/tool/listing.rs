//! What `tools/list` shows of a tool: its projection onto rmcp's `Tool`, one for a grouped
//! tool, one per action for a flat one.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::ToolAnnotations;

use super::action::{ActionDef, Annotations};
use super::definition::{Exposition, ToolDef};
use super::invoke::Callable;
use super::object_schema::object_schema;

impl ToolDef {
    /// The MCP tools `tools/list` shows for this tool in `exposition`: the tool itself
    /// ([`to_rmcp`](Self::to_rmcp)), or one per action for a flat tool of several actions.
    ///
    /// ```
    /// use mcp_fusion::tools::{ActionDef, Exposition, ToolDef};
    /// let billing = ToolDef::new("billing")
    ///     .action(ActionDef::without_arguments("list_invoices").read_only())
    ///     .action(ActionDef::without_arguments("void_invoice").destructive())
    ///     .build();
    /// let flat = billing.listed(Exposition::Flat);
    /// assert_eq!(flat[1].name, "billing_void_invoice");
    /// assert_eq!(flat[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
    /// ```
    pub fn listed(&self, exposition: Exposition) -> Vec<rmcp::model::Tool> {
        match (exposition, self.discriminator()) {
            (Exposition::Flat, Some(_)) => self
                .actions
                .iter()
                .map(|action| self.flat_tool(action))
                .collect(),
            _ => vec![self.to_rmcp()],
        }
    }

    /// One action as a tool of its own: its exact schema, title, description, hints and output
    /// schema; a deprecated action says so, and what to call instead, in its description.
    fn flat_tool(&self, action: &ActionDef) -> rmcp::model::Tool {
        let mut description = action.description.clone().unwrap_or_default();
        if let Some(deprecated) = &action.deprecated {
            let note = match &deprecated.replacement {
                Some(r) => format!("Deprecated: call {} instead.", Callable::Flat(self).name(r)),
                None => "Deprecated.".to_owned(),
            };
            if !description.is_empty() {
                description.push_str("\n\n");
            }
            description.push_str(&note);
        }
        let mut tool = rmcp::model::Tool::new(
            self.flat_name(action),
            description.clone(),
            Arc::new(object_schema(&action.listed_value())),
        );
        if description.is_empty() {
            tool.description = None;
        }
        tool.title = action.title.clone();
        tool.output_schema = action.output.clone();
        tool.meta = scopes_meta(std::slice::from_ref(action));
        let a = action.annotations;
        let hints = [
            (
                a.read_only,
                ToolAnnotations::read_only as fn(ToolAnnotations, bool) -> ToolAnnotations,
            ),
            (a.destructive, ToolAnnotations::destructive),
            (a.idempotent, ToolAnnotations::idempotent),
            (a.open_world, ToolAnnotations::open_world),
        ];
        if hints.iter().any(|(on, _)| on.is_some()) {
            let annotations = hints
                .into_iter()
                .fold(ToolAnnotations::new(), |h, (on, apply)| {
                    on.map_or(h.clone(), |on| apply(h, on))
                });
            tool.annotations = Some(annotations);
        }
        tool
    }

    /// The tool as `tools/list` shows it in rmcp's model (grouped exposition). A grouped tool's
    /// hints are the conservative combination of its actions': read-only and idempotent when
    /// every action is, destructive and open-world when any action is. Each action's own hints
    /// and deprecation are in the discriminator's description.
    pub fn to_rmcp(&self) -> rmcp::model::Tool {
        let description = self.description.clone().map(Cow::Owned);
        let mut tool = rmcp::model::Tool::new(
            self.name.clone(),
            description.unwrap_or_default(),
            self.input_schema.clone(),
        );
        if self.description.is_none() {
            tool.description = None;
        }
        tool.title = self.title().map(str::to_owned);
        tool.meta = scopes_meta(&self.actions);
        // One action, one output type: a single-action tool lists its action's output. A
        // grouped tool has none (one tool, many output types).
        if self.discriminator().is_none() {
            tool.output_schema = self.actions.first().and_then(|a| a.output.clone());
        }
        let all = |f: fn(&Annotations) -> Option<bool>| {
            self.actions.iter().all(|a| f(&a.annotations) == Some(true))
        };
        let any = |f: fn(&Annotations) -> Option<bool>| {
            self.actions.iter().any(|a| f(&a.annotations) == Some(true))
        };
        let mut hints = ToolAnnotations::new();
        let mut set = false;
        for (on, apply) in [
            (
                all(|a| a.read_only),
                ToolAnnotations::read_only as fn(ToolAnnotations, bool) -> ToolAnnotations,
            ),
            (any(|a| a.destructive), ToolAnnotations::destructive),
            (all(|a| a.idempotent), ToolAnnotations::idempotent),
            (any(|a| a.open_world), ToolAnnotations::open_world),
        ] {
            if on {
                hints = apply(hints, true);
                set = true;
            }
        }
        if set {
            tool.annotations = Some(hints);
        }
        tool
    }
}

/// The message of the JSON-RPC error for a `tools/call` of `name`, which no tool is listed under
/// (`listed`: every listed name): an action of a grouped tool of `definitions`, called by its
/// qualified name or as `{tool}_{action}`, is told how to call it (the tool, and the
/// discriminator with the action's name); any other name gets the closest listed one, if one
/// is close (ERRORS.md §4, "Close"; under flat exposition a misspelt action is a misspelt tool).
pub(crate) fn unknown_tool<'d>(
    name: &str,
    listed: &[String],
    definitions: impl IntoIterator<Item = &'d ToolDef>,
) -> String {
    use crate::envelope::Instead;
    for def in definitions {
        // A grouped tool is listed under its own name; a flat one under its actions'.
        let Some(discriminator) = def.discriminator() else {
            continue;
        };
        if !listed.iter().any(|l| l == def.name()) {
            continue;
        }
        let rest = name
            .strip_prefix(def.name())
            .and_then(|rest| rest.strip_prefix(['.', '_']));
        if let Some(action) = rest.and_then(|r| def.actions.iter().find(|a| a.name == r)) {
            let instead = Instead::Action {
                tool: def.name(),
                discriminator,
                action: action.name(),
            };
            return crate::envelope::unknown_tool(name, instead);
        }
    }
    let closest = crate::closest::Names::new(listed).closest(name);
    let instead = closest.map_or(Instead::Nothing, |best| Instead::Closest(&listed[best]));
    crate::envelope::unknown_tool(name, instead)
}

/// The `_meta` key under which a listed tool shows the OAuth scopes its actions need.
pub const SCOPES_KEY: &str = "dev.mcp-fusion/scopes";

/// The tool's `_meta` when an action needs scopes: under [`SCOPES_KEY`], each such action's
/// qualified name and its scopes (`{"billing.create_invoice": ["invoices:write"]}`), so a host
/// can ask for them before the first call.
fn scopes_meta(actions: &[ActionDef]) -> Option<rmcp::model::MetaObject> {
    let scoped: serde_json::Map<String, serde_json::Value> = actions
        .iter()
        .filter(|a| !a.scopes.is_empty())
        .map(|a| (a.qualified.to_string(), serde_json::json!(a.scopes)))
        .collect();
    if scoped.is_empty() {
        return None;
    }
    let mut meta = serde_json::Map::new();
    meta.insert(SCOPES_KEY.to_owned(), serde_json::Value::Object(scoped));
    Some(rmcp::model::MetaObject(meta))
}
