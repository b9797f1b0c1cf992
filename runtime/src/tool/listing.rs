//! What `tools/list` shows of a tool: its projection onto rmcp's `Tool`.

use std::borrow::Cow;

use rmcp::model::ToolAnnotations;

use super::action::Annotations;
use super::definition::ToolDef;

impl ToolDef {
    /// The tool as `tools/list` shows it in rmcp's model. A grouped tool's hints are those
    /// every action shares (read-only, idempotent) or any action has (destructive, open world).
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
