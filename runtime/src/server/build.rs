//! Building a server: each tool's pipeline made once with the final settings, each source of
//! tools built with them, the user's handler checked; or every problem at once.

use std::fmt;
use std::sync::Arc;

use crate::contract::{Contract, DEFAULT_MAX_CHANGES, Diff, OUTPUT};
use crate::tool::Exposition;

use super::admission::{ToolLimits, limit_problems};
use super::builder::ServerBuilder;
use super::core::{Inner, Server};
use super::registry::{ByName, ContractNotes, Registered, Registry};
use super::source::{SourceSettings, Sources};
use super::user::{NoHandler, UserHandler};

impl ServerBuilder {
    /// The server: each tool's pipeline made once with the final settings; or every problem
    /// of every tool and setting, each naming the tool, the action, the field and the fix.
    pub fn build(self) -> Result<Server, BuildError> {
        let mut problems = Vec::new();
        let mut by_name = ByName::default();
        let mut planned = Vec::with_capacity(self.tools.len());
        for (index, (tool, settings)) in self.tools.iter().enumerate() {
            let def = tool.definition();
            if settings.exposition.is_some() && def.discriminator().is_none() {
                problems.push(format!(
                    "tool \"{}\": it has one action, so it is one MCP tool whatever its exposition; remove ToolSettings::exposition",
                    def.name()
                ));
            }
            let exposition = settings
                .exposition
                .or(def.exposition())
                .unwrap_or(self.exposition);
            for (action, tag) in def.tagged_arguments() {
                tracing::warn!(
                    action,
                    tag,
                    "the arguments are alternatives told apart by \"{tag}\" (an internally tagged enum): a call that matches none is told only \"Expected a value matching one of the allowed shapes\" (ERRORS.md §5); for the model to be told what each shape needs, make each variant an action of the tool"
                );
            }
            problems.extend(def.problems(exposition));
            let store = settings.store.as_ref().unwrap_or(&self.rates.store);
            problems.extend(limit_problems(def, &**store));
            if settings.store.is_some() && !has_limits(def) {
                problems.push(format!(
                    "tool \"{}\": ToolSettings::limit_store, but the tool has no rate or concurrency limit to keep in it; declare one or remove the store",
                    def.name()
                ));
            }
            let listed = def.listed(exposition);
            let flat = def.discriminator().is_some() && exposition == Exposition::Flat;
            let names: Vec<(String, Option<usize>)> = match flat {
                true => listed
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.name.to_string(), Some(i)))
                    .collect(),
                false => vec![(def.name().to_owned(), None)],
            };
            for (name, action) in names {
                if let Some(why) = mcp_fusion_rules::names::tool_name_problem(&name) {
                    problems.push(format!(
                        "{}: the name {why}, and clients accept only tool names of ^[A-Za-z0-9_.-]{{1,128}}$; rename it (#[tool(name = \"...\")], #[action(name = \"...\")])",
                        listed_as(&name, action.map(|i| def.actions()[i].qualified()))
                    ));
                }
                match by_name.entry(name) {
                    std::collections::hash_map::Entry::Vacant(free) => {
                        free.insert((index, action));
                    }
                    std::collections::hash_map::Entry::Occupied(taken) => {
                        let what =
                            listed_as(taken.key(), action.map(|i| def.actions()[i].qualified()));
                        problems.push(format!(
                            "{what}: another tool has this name; rename one (#[tool(name = \"...\")], #[action(name = \"...\")])"
                        ));
                    }
                }
            }
            planned.push((flat, listed));
        }
        problems.extend(self.settings_that_cannot_apply());
        let rounds = match &self.request_state_secret {
            None => Some(super::rounds::Rounds::of_process(self.request_state_ttl)),
            Some(secret) => {
                let shared = self.rates.store.used_states().filter(|_| self.store_given);
                if shared.is_none() {
                    tracing::warn!(
                        server = %self.info.name,
                        "request_state_secret is shared by replicas, but the limit store is each \
                         process's own: a round's state runs once per replica, not once in the \
                         fleet; keep the limits in a shared store (limit_store with RedisStore)"
                    );
                }
                let rounds = super::rounds::Rounds::new(secret, self.request_state_ttl, shared);
                rounds
                    .map_err(|why| {
                        problems.push(format!(
                            "request_state_secret: {why}; use keys of 32 bytes or more, and an active key the ring holds"
                        ));
                    })
                    .ok()
            }
        };
        let mut unkeyed = self.stores_refusing_caller_keys();
        if self.rates.key.is_some() {
            problems.extend(
                unkeyed
                    .iter()
                    .map(|refused| format!("rate_limit_key: {refused}")),
            );
        }
        unkeyed.extend(self.tasks_refusing_caller_keys());
        let handler: Arc<dyn UserHandler> = self.handler.unwrap_or_else(|| Arc::new(NoHandler));
        problems.extend(super::user::problem(&handler.info()));
        let diff = self.locked.as_ref().map(|locked| {
            // The server's own tools: the validation errors it writes are about them.
            let mut running = Contract::of_tools(self.tools.iter().map(|(t, _)| t.definition()));
            running.upstreams.clone_from(&locked.upstreams);
            Diff::between(locked, &running)
        });
        let taken = |prefix: &str| {
            let taken = by_name.keys().filter(|n| n.starts_with(prefix));
            taken.min().cloned()
        };
        let settings = SourceSettings {
            rates: &self.rates,
            middleware: &self.middleware,
            expose_causes: self.expose_causes,
            locked: self.locked.as_ref(),
            taken: &taken,
        };
        let mut sources = Vec::with_capacity(self.sources.len());
        for pending in self.sources {
            match pending.build(&settings) {
                Ok(source) => sources.push(source),
                Err(refused) => problems.extend(refused),
            }
        }
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }

        let max = self.max_contract_changes.unwrap_or(DEFAULT_MAX_CHANGES);
        let tools: Vec<Registered> = self
            .tools
            .into_iter()
            .zip(planned)
            .map(|((tool, settings), (flat, listed))| {
                let def = tool.definition();
                let middleware = self.middleware.iter().chain(&settings.middleware).cloned();
                let mut rates = self.rates.clone();
                if let Some(store) = &settings.store {
                    rates.store = store.clone();
                }
                let contract = diff.as_ref().and_then(|diff| {
                    let changes: Vec<_> = diff
                        .tool(def.name())
                        .iter()
                        .filter(|c| c.severity.reaches_the_model())
                        // An output change concerns the host that reads results, not the
                        // model's arguments (ERRORS.md §10 rule 8).
                        .filter(|c| !c.field.starts_with(OUTPUT))
                        .cloned()
                        .collect();
                    (!changes.is_empty()).then_some(ContractNotes { changes, max })
                });
                Registered {
                    limits: ToolLimits::new(def, &rates),
                    middleware: middleware.collect(),
                    expose_causes: self.expose_causes,
                    contract,
                    flat,
                    listed,
                    tool,
                }
            })
            .collect();
        let mut tasks = self.tasks;
        tasks.used = (tools.iter())
            .flat_map(|registered| registered.tool.definition().actions())
            .any(|action| action.task_support().is_some());
        let handoffs = match sources.as_slice() {
            [] => None,
            [one] => Some(Arc::clone(one).handoffs()),
            many => Some(Arc::new(Handoffs(
                many.iter().map(|s| Arc::clone(s).handoffs()).collect(),
            )) as Arc<dyn crate::tool::Handoffs>),
        };
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                registry: Registry { tools, by_name },
                sources: Sources::new(sources),
                handoffs,
                handler,
                rates: self.rates,
                ask_timeout: self.ask_timeout,
                levels: Default::default(),
                changes: self.changes,
                tasks,
                rounds: rounds.expect("a build with a problem returned above"),
                unkeyed,
                validating: tokio::sync::Semaphore::new(1),
                #[cfg(feature = "otel")]
                instruments: super::otel::Instruments::new(),
                #[cfg(any(feature = "stdio", feature = "http"))]
                lane: Default::default(),
            }),
        })
    }

    /// Settings given that no tool would use: each a build error rather than a silent no-op.
    fn settings_that_cannot_apply(&self) -> Vec<String> {
        let sources_rate_limited = self.sources.iter().any(|s| s.limits().0);
        let rate_limited = self.rates.default.is_some()
            || sources_rate_limited
            || self
                .tools
                .iter()
                .any(|(t, _)| has_rate_limits(t.definition()));
        // The tools whose limits the server's store keeps.
        let kept = self
            .tools
            .iter()
            .filter(|(_, settings)| settings.store.is_none())
            .map(|(t, _)| t.definition());
        let limited = self.rates.default.is_some() || kept.clone().any(has_limits);
        let limited = limited || self.sources.iter().any(|s| s.limits().1);
        let mut problems = Vec::new();
        if self.rates.key.is_some() && !rate_limited {
            problems.push("rate_limit_key: no tool has a rate limit, so no call would be keyed; declare one (#[tool(rate_limit(..))], ServerBuilder::rate_limit) or remove the key".to_owned());
        }
        // A store shared by replicas also keeps the record of used round states.
        let records_states =
            self.request_state_secret.is_some() && self.rates.store.used_states().is_some();
        if self.store_given && !limited && !records_states {
            problems.push("limit_store: no tool has a rate or concurrency limit to keep in it, nor does it record the round states of a request_state_secret; declare a limit or remove the store".to_owned());
        }
        if self.max_contract_changes.is_some() && self.locked.is_none() {
            problems.push("max_contract_changes: there is no contract lockfile whose changes it would count; set contract_lock or remove it".to_owned());
        }
        problems
    }

    /// Why the tasks of verified callers (each bound to its subject and counted per subject)
    /// could not be kept as set up: the task store's refusal, when the server runs tasks. Asked
    /// when the server is served with OAuth.
    fn tasks_refusing_caller_keys(&self) -> Option<String> {
        let runs_tasks = (self.tools.iter())
            .flat_map(|(tool, _)| tool.definition().actions())
            .any(|action| action.task_support().is_some());
        let why = runs_tasks.then(|| self.tasks.store.refuses_caller_keys())??;
        Some(format!(
            "its tasks are kept per verified caller too, and {why}"
        ))
    }

    /// Why budgets kept per caller could not be kept as set up: each store holding rate limits
    /// that would keep caller keys readable (`LimitStore::refuses_caller_keys`). A call is kept
    /// per caller with a `rate_limit_key`, and whenever its caller is verified (its subject),
    /// so this is asked when the server is built with a key and when it is served with OAuth.
    fn stores_refusing_caller_keys(&self) -> Vec<String> {
        let mut refused = Vec::new();
        let sources_rate_limited = self.sources.iter().any(|s| s.limits().0);
        // The rate limits the server's store keeps: its default, its sources', and those of
        // the tools without a store of their own.
        let kept = self.tools.iter().filter(|(_, s)| s.store.is_none());
        let keyed_kept = sources_rate_limited
            || kept.clone().next().is_some()
                && (self.rates.default.is_some()
                    || kept.clone().any(|(t, _)| has_rate_limits(t.definition())));
        if keyed_kept && let Some(why) = self.rates.store.refuses_caller_keys() {
            refused.push(why);
        }
        for (tool, settings) in &self.tools {
            let def = tool.definition();
            if let Some(own) = &settings.store
                && (self.rates.default.is_some() || has_rate_limits(def))
                && let Some(why) = own.refuses_caller_keys()
            {
                refused.push(format!(
                    "tool \"{}\", kept in its own store (ToolSettings::limit_store): {why}",
                    def.name()
                ));
            }
        }
        refused
    }
}

/// Where handoffs lead when several sources are mounted: the first that knows the namespace.
#[derive(Debug)]
#[cfg_attr(not(feature = "gateway"), allow(dead_code))]
struct Handoffs(Vec<Arc<dyn crate::tool::Handoffs>>);

impl crate::tool::Handoffs for Handoffs {
    fn tools_of(&self, namespace: &str) -> Option<Vec<String>> {
        self.0.iter().find_map(|h| h.tools_of(namespace))
    }
}

impl crate::contract::ToolSet for ServerBuilder {
    fn tool_definitions(&self) -> impl Iterator<Item = &crate::tool::ToolDef> {
        self.tools.iter().map(|(tool, _)| tool.definition())
    }
}

/// A listed tool as a problem names it: `the tool "billing"`, or for a flat tool's action,
/// `the flat tool "billing_pay" (action "billing.pay")`.
fn listed_as(name: &str, action: Option<&str>) -> String {
    match action {
        Some(action) => format!("the flat tool \"{name}\" (action \"{action}\")"),
        None => format!("the tool \"{name}\""),
    }
}

/// Whether a tool declares a rate or concurrency limit, its own or an action's.
fn has_limits(def: &crate::tool::ToolDef) -> bool {
    has_rate_limits(def)
        || def.concurrency().is_some()
        || def.actions().iter().any(|a| a.concurrency().is_some())
}

/// Whether a tool declares a rate limit, its own or an action's.
fn has_rate_limits(def: &crate::tool::ToolDef) -> bool {
    def.rate_limit().is_some() || def.actions().iter().any(|a| a.rate_limit().is_some())
}

/// Why a server could not be built: every problem of every tool and setting, each one
/// sentence naming the tool, the action, the field and the fix.
///
/// ```
/// use mcp_fusion::Server;
///
/// let refused = Server::builder("s", "1").max_contract_changes(3).build().unwrap_err();
/// assert!(refused.problems()[0].starts_with("max_contract_changes:"));
/// ```
#[derive(Debug, Clone)]
pub struct BuildError {
    problems: Vec<String>,
}

impl BuildError {
    /// Each problem, one sentence.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot build the MCP server:")?;
        for problem in &self.problems {
            write!(f, "\n- {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}
