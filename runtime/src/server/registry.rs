//! The server's own tools: each with what the server puts around its calls (its limits, its
//! middleware, what changed in its contract since the lockfile), found by the MCP tool name a
//! call names, and listed as `tools/list` shows them.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::contract::ContractChange;
use crate::contract::{awareness_of_invalid, inject_removed_action};
use crate::envelope::Envelope;
use crate::middleware::Middleware;
use crate::tool::{Answer, Callable, Rejection, Route, Tool, ToolDef};
use crate::validate::ValidationError;

use super::admission::ToolLimits;

/// One tool of the server, with its pipeline settings, made once when the server is built.
pub(crate) struct Registered {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) limits: ToolLimits,
    /// The server's middleware, then the tool's own.
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
    pub(crate) expose_causes: bool,
    /// What changed since the lockfile, for this tool's validation errors.
    pub(crate) contract: Option<ContractNotes>,
    /// Served flat: envelopes name its actions by their MCP tool names.
    pub(crate) flat: bool,
    /// What `tools/list` shows of it.
    pub(crate) listed: Vec<rmcp::model::Tool>,
}

/// A tool's BREAKING and RISKY changes since the lockfile, and how many a block shows.
#[derive(Debug)]
pub(crate) struct ContractNotes {
    pub(crate) changes: Vec<ContractChange>,
    pub(crate) max: usize,
}

/// Each MCP tool name's tool, and for a flat tool the action it names; looked up on every call.
pub(crate) type ByName = HashMap<String, (usize, Option<usize>), foldhash::fast::FixedState>;

/// The server's own tools, in the order they were added.
pub(crate) struct Registry {
    pub(crate) tools: Vec<Registered>,
    pub(crate) by_name: ByName,
}

impl Registry {
    /// The tool a call of `name` reaches, and how the call names its action.
    pub(crate) fn find(&self, name: &str) -> Option<(&Registered, Route)> {
        let &(index, action) = self.by_name.get(name)?;
        let registered = self.tools.get(index)?;
        Some((registered, action.map_or(Route::Discriminator, Route::Flat)))
    }

    /// Whether the action a call of `name` with `arguments` reaches runs as a task (`None`
    /// when it does not, or the call reaches no action).
    pub(crate) fn task_of(
        &self,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Option<&crate::tool::TaskSupport> {
        let (registered, route) = self.find(name)?;
        let def = registered.tool.definition();
        let index = match (route, def.discriminator()) {
            (Route::Flat(index), _) => index,
            (Route::Discriminator, None) => 0,
            (Route::Discriminator, Some(_)) => {
                let empty = Map::new();
                def.router()
                    .route_or_render(arguments.unwrap_or(&empty))
                    .ok()?
            }
        };
        def.actions().get(index)?.task_support()
    }

    /// The tools' definitions, in order.
    pub(crate) fn definitions(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.iter().map(|t| t.tool.definition())
    }

    /// The tool `tools/list` shows as `name`: a tool, or a flat tool's action.
    pub(crate) fn listed_tool(&self, name: &str) -> Option<&rmcp::model::Tool> {
        let &(index, action) = self.by_name.get(name)?;
        self.tools.get(index)?.listed.get(action.unwrap_or(0))
    }

    /// Every tool as `tools/list` shows it, in order.
    pub(crate) fn listed(&self) -> impl Iterator<Item = &rmcp::model::Tool> {
        self.tools.iter().flat_map(|t| t.listed.iter())
    }

    #[cfg(feature = "oauth")]
    /// The scopes a `tools/call` of `name` with `arguments` needs when `caller` lacks one of
    /// them and the call would otherwise reach its action's limits (ERRORS.md §4: routing and
    /// validation come first, so a malformed call is still told what is wrong with it). `None`
    /// when the caller may make the call, or when the pipeline will refuse it anyway.
    pub(crate) fn refused_scopes(
        &self,
        name: &str,
        arguments: Option<&Map<String, Value>>,
        caller: &crate::tool::Caller,
    ) -> Option<&[String]> {
        let (registered, route) = self.find(name)?;
        let def = registered.tool.definition();
        let index = match (route, def.discriminator()) {
            (Route::Flat(index), _) => index,
            (Route::Discriminator, None) => 0,
            (Route::Discriminator, Some(field)) => def
                .router()
                .route_value(arguments.and_then(|args| args.get(field)))
                .ok()?,
        };
        let action = def.actions().get(index)?;
        caller.lacks(action.scopes()).next()?;
        crate::tool::prepare(def, arguments.cloned(), route).ok()?;
        Some(action.scopes())
    }

    /// Every scope an action of these tools needs.
    #[cfg(feature = "oauth")]
    pub(crate) fn scopes(&self) -> impl Iterator<Item = &String> {
        self.definitions()
            .flat_map(|def| def.actions())
            .flat_map(|action| action.scopes())
    }

    #[cfg(feature = "http")]
    /// Whether a tool asks for an `Mcp-Param-*` header (2026-07-28, SEP-2243: `x-mcp-header`
    /// in its schema), which rmcp checks against the request's headers.
    pub(crate) fn asks_param_headers(&self) -> bool {
        fn asks(value: &Value) -> bool {
            match value {
                Value::Object(map) => {
                    map.contains_key(crate::tool::HEADER_KEYWORD) || map.values().any(asks)
                }
                Value::Array(items) => items.iter().any(asks),
                _ => false,
            }
        }
        self.listed()
            .flat_map(|tool| tool.input_schema.values())
            .any(asks)
    }
}

impl Registered {
    /// How envelopes name its actions.
    pub(crate) fn callable(&self) -> Callable<'_> {
        match self.flat {
            true => Callable::Flat(self.tool.definition()),
            false => Callable::Qualified,
        }
    }

    /// A call rejected before its action: with what changed since the lockfile, when the
    /// server runs with one (ERRORS.md §4 and §7).
    pub(crate) fn reject(&self, rejection: Rejection) -> Answer {
        match rejection {
            Rejection::Route {
                envelope,
                arguments,
            } => Answer::envelope(self.removed_action(&arguments, *envelope)),
            Rejection::Invalid(invalid) => self.refused(invalid),
            Rejection::Broken(result) => *result,
            Rejection::Unanswered(refused) => refused.into(),
        }
    }

    /// A validation error, with what changed in the action's contract since the lockfile.
    pub(crate) fn refused(&self, invalid: ValidationError) -> Answer {
        let envelope = invalid.envelope();
        let Some(notes) = &self.contract else {
            return Answer::envelope(envelope);
        };
        Answer::envelope(
            match awareness_of_invalid(
                &envelope.text(),
                invalid.action(),
                &notes.changes,
                notes.max,
            ) {
                Some((text, changes)) => envelope.with_contract_changes(text, changes),
                None => envelope,
            },
        )
    }

    /// UNKNOWN_ACTION for an action the lockfile has and the running contract removed carries
    /// that action's changes (ERRORS.md §4); every other routing failure stays as it is.
    fn removed_action(&self, args: &Map<String, Value>, envelope: Envelope) -> Envelope {
        let def = self.tool.definition();
        let sent = def
            .discriminator()
            .and_then(|field| args.get(field))
            .and_then(Value::as_str);
        let (Some(notes), Some(sent)) = (&self.contract, sent) else {
            return envelope;
        };
        // Matched as routing matches (§10 rule 7): the value as a bare name first, then without
        // a leading `{tool}.`.
        let bare = format!("{}.{sent}", def.name());
        let qualified = sent
            .strip_prefix(def.name())
            .filter(|rest| rest.starts_with('.'))
            .map(|_| sent);
        let text = envelope.text();
        let found = [Some(bare.as_str()), qualified]
            .into_iter()
            .flatten()
            .find_map(|action| inject_removed_action(&text, action, &notes.changes, notes.max));
        drop(text);
        match found {
            Some((text, changes)) => envelope.with_contract_changes(text, changes),
            None => envelope,
        }
    }
}
