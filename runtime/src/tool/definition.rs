//! A tool's definition: its name, description, discriminator, actions and limits, built once.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::action::{ActionDef, ActionDefBuilder, Concurrency, RateLimit};
use super::object_schema::object_schema;
use super::schema::grouped_schema;
use crate::router::ActionRouter;

/// A tool's definition: what `tools/list` shows and what `tools/call` routes on.
///
/// ```
/// use mcp_fusion::tools::{ActionDef, ToolDef};
/// let billing = ToolDef::new("billing")
///     .description("Invoices.")
///     .action(ActionDef::without_arguments("list_invoices").read_only())
///     .action(ActionDef::without_arguments("void_invoice").deprecated(None, Some("list_invoices")))
///     .build();
/// assert_eq!(billing.actions()[0].qualified(), "billing.list_invoices");
/// assert_eq!(billing.input_schema()["properties"]["action"]["enum"], serde_json::json!(["list_invoices", "void_invoice"]));
/// ```
#[derive(Debug)]
pub struct ToolDef {
    pub(super) name: Cow<'static, str>,
    pub(super) description: Option<String>,
    pub(super) title: Option<String>,
    pub(super) discriminator: Option<Cow<'static, str>>,
    pub(super) actions: Vec<ActionDef>,
    pub(super) router: ActionRouter,
    pub(super) input_schema: Arc<Map<String, Value>>,
    pub(super) concurrency: Option<Concurrency>,
    pub(super) rate_limit: Option<RateLimit>,
    pub(super) exposition: Option<Exposition>,
    /// Why it cannot be served as it describes itself, found once (see [`Tool::call`]).
    ///
    /// [`Tool::call`]: super::Tool::call
    pub(super) own_problems: std::sync::OnceLock<Vec<String>>,
}

/// How a tool of several actions is shown in `tools/list` and called.
///
/// ```
/// use mcp_fusion::tools::{ActionDef, Exposition, ToolDef};
/// let billing = ToolDef::new("billing")
///     .action(ActionDef::without_arguments("list_invoices"))
///     .exposition(Exposition::Flat)
///     .build();
/// assert_eq!(billing.exposition(), Some(Exposition::Flat));
/// assert_eq!(billing.flat_name(&billing.actions()[0]), "billing_list_invoices");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exposition {
    /// One MCP tool; the discriminator field (`action`) chooses the action. The listed schema
    /// shows every action's fields, each noting which actions take it.
    Grouped,
    /// Each action its own MCP tool, named `{tool}_{action}`, with its exact schema and hints.
    /// The tool's limits are shared by its actions as in grouped exposition, and the contract
    /// (the lockfile) still names actions `{tool}.{action}`.
    Flat,
}

/// Builds the [`ToolDef`] of a tool of one action, as [`ToolDef::single`] starts it.
#[derive(Debug)]
#[must_use = "a tool is described until it is built"]
pub struct SingleToolDefBuilder(ToolDefBuilder);

impl SingleToolDefBuilder {
    /// Sets the title (the action's own, by default).
    pub fn title(self, title: impl Into<String>) -> Self {
        SingleToolDefBuilder(self.0.title(title))
    }

    /// Sets the description (the action's own, by default).
    pub fn description(self, description: impl Into<String>) -> Self {
        SingleToolDefBuilder(self.0.description(description))
    }

    /// Limits concurrent calls (enforced by the server).
    pub fn concurrency(self, max_active: usize, max_queued: usize) -> Self {
        SingleToolDefBuilder(self.0.concurrency(max_active, max_queued))
    }

    /// Limits the call rate (enforced by the server).
    pub fn rate_limit(self, max: u64, window: Duration) -> Self {
        SingleToolDefBuilder(self.0.rate_limit(max, window))
    }

    /// The OAuth scopes a caller's token must grant to call the tool
    /// ([`ToolDefBuilder::scopes`]).
    pub fn scopes<S: Into<String>>(self, scopes: impl IntoIterator<Item = S>) -> Self {
        SingleToolDefBuilder(self.0.scopes(scopes))
    }

    /// The definition.
    pub fn build(self) -> ToolDef {
        self.0.build()
    }
}

/// Builds a [`ToolDef`] of actions chosen by a discriminator, as [`ToolDef::new`] starts it.
#[derive(Debug)]
#[must_use = "a tool is described until it is built"]
pub struct ToolDefBuilder {
    name: Cow<'static, str>,
    description: Option<String>,
    title: Option<String>,
    discriminator: Option<Cow<'static, str>>,
    single: bool,
    actions: Vec<ActionDef>,
    concurrency: Option<Concurrency>,
    rate_limit: Option<RateLimit>,
    exposition: Option<Exposition>,
    scopes: Vec<String>,
}

impl ToolDef {
    /// A grouped tool: actions selected by a discriminator field (`action` unless renamed).
    #[allow(clippy::new_ret_no_self)] // `new` starts the builder, as `ToolDef::new(..)..build()` reads
    pub fn new(name: impl Into<Cow<'static, str>>) -> ToolDefBuilder {
        ToolDefBuilder {
            name: name.into(),
            description: None,
            title: None,
            discriminator: None,
            single: false,
            actions: Vec::new(),
            concurrency: None,
            rate_limit: None,
            exposition: None,
            scopes: Vec::new(),
        }
    }

    /// A single-action tool: no discriminator, the arguments are the action's. Its builder has
    /// no other action, discriminator or exposition to set.
    ///
    /// ```
    /// use mcp_fusion::tools::{ActionDef, ToolDef};
    /// let ping = ToolDef::single(ActionDef::without_arguments("ping").description("Pings.")).build();
    /// assert_eq!((ping.name(), ping.discriminator()), ("ping", None));
    /// ```
    pub fn single(action: ActionDefBuilder) -> SingleToolDefBuilder {
        let action = action.0;
        let mut builder = Self::new(action.name.clone());
        builder.single = true;
        builder.actions.push(action);
        SingleToolDefBuilder(builder)
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool name as it was given (a static name shared as it is).
    pub(crate) fn shared_name(&self) -> &Cow<'static, str> {
        &self.name
    }

    /// The title, if any: the tool's own, or for a tool of one action, that action's.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref().or_else(|| match self.discriminator {
            None => self.actions.first().and_then(ActionDef::title),
            Some(_) => None,
        })
    }

    /// The tool's own title, without its single action's.
    pub(crate) fn own_title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The discriminator field, or `None` for a single-action tool.
    pub fn discriminator(&self) -> Option<&str> {
        self.discriminator.as_deref()
    }

    /// The actions, in declaration order.
    pub fn actions(&self) -> &[ActionDef] {
        &self.actions
    }

    /// The router over the actions.
    pub(crate) fn router(&self) -> &ActionRouter {
        &self.router
    }

    /// The input schema `tools/list` shows (root `type: object`).
    pub fn input_schema(&self) -> &Map<String, Value> {
        &self.input_schema
    }

    /// The concurrency limit, if any.
    pub fn concurrency(&self) -> Option<Concurrency> {
        self.concurrency
    }

    /// The rate limit, if any.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.rate_limit
    }

    /// The exposition the tool chose, if it chose one (else the server's applies).
    pub fn exposition(&self) -> Option<Exposition> {
        self.exposition
    }

    /// Why the tool cannot be served as it describes itself (its own exposition, or grouped):
    /// the problems [`ServerBuilder::build`](crate::server::ServerBuilder::build) reports.
    pub(crate) fn own_problems(&self) -> &[String] {
        self.own_problems
            .get_or_init(|| self.problems(self.exposition.unwrap_or(Exposition::Grouped)))
    }

    /// The MCP tool name of `action` in flat exposition: `{tool}_{action}`.
    pub fn flat_name(&self, action: &ActionDef) -> String {
        format!("{}_{}", self.name, action.name)
    }
}

impl ToolDefBuilder {
    /// Sets the title: the name a host shows people (MCP's `title`). `#[tool(title = "..")]`
    /// in the macro.
    ///
    /// ```
    /// let billing = mcp_fusion::tools::ToolDef::new("billing").title("Billing").build();
    /// assert_eq!(billing.to_rmcp().title.as_deref(), Some("Billing"));
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        let title = title.into();
        self.title = (!title.is_empty()).then_some(title);
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.description = (!description.is_empty()).then_some(description);
        self
    }

    /// Renames the discriminator field (default `action`).
    pub fn discriminator(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.discriminator = Some(name.into());
        self
    }

    /// Adds an action.
    pub fn action(mut self, action: ActionDefBuilder) -> Self {
        self.actions.push(action.0);
        self
    }

    /// Limits concurrent calls (enforced by the server).
    pub fn concurrency(mut self, max_active: usize, max_queued: usize) -> Self {
        self.concurrency = Some(Concurrency {
            max_active,
            max_queued,
        });
        self
    }

    /// Limits the call rate (enforced by the server).
    pub fn rate_limit(mut self, max: u64, window: Duration) -> Self {
        self.rate_limit = Some(RateLimit { max, window });
        self
    }

    /// The OAuth scopes a caller's token must grant to call any action of this tool (each
    /// action may need more of its own, [`ActionDefBuilder::scopes`]); `#[tool(scopes(..))]` in
    /// the macro. Checked over streamable HTTP with an OAuth (`server::oauth::OAuth`, feature `oauth`)
    /// resource server; on stdio, where no token is presented, scopes do not apply.
    ///
    /// ```
    /// use mcp_fusion::tools::{ActionDef, ToolDef};
    /// let billing = ToolDef::new("billing")
    ///     .scopes(["invoices:read"])
    ///     .action(ActionDef::without_arguments("list_invoices").description("Lists."))
    ///     .action(ActionDef::without_arguments("void_invoice").scopes(["invoices:write"]))
    ///     .build();
    /// assert_eq!(billing.actions()[0].scopes(), ["invoices:read"]);
    /// assert_eq!(billing.actions()[1].scopes(), ["invoices:read", "invoices:write"]);
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Shows the actions as one tool or as one tool each, whatever the server's default.
    pub fn exposition(mut self, exposition: Exposition) -> Self {
        self.exposition = Some(exposition);
        self
    }

    /// Qualifies the actions and lays out the input schema.
    pub fn build(self) -> ToolDef {
        let discriminator =
            (!self.single).then(|| self.discriminator.unwrap_or(Cow::Borrowed("action")));
        let mut actions = self.actions;
        for action in &mut actions {
            action.qualified = if self.single {
                Arc::from(&*self.name)
            } else {
                Arc::from(format!("{}.{}", self.name, action.name))
            };
            let replacement = action
                .deprecated
                .as_mut()
                .and_then(|d| d.replacement.as_mut());
            if let Some(replacement) = replacement.filter(|r| !self.single && !r.contains('.')) {
                *replacement = format!("{}.{replacement}", self.name);
            }
            action.scopes.extend(self.scopes.iter().cloned());
            action.scopes.sort_unstable();
            action.scopes.dedup();
        }
        let input_schema = match &discriminator {
            None => actions
                .first()
                .map_or_else(Map::new, |a| object_schema(&a.listed_value())),
            Some(field) => grouped_schema(field, &actions),
        };
        let router = ActionRouter::new(
            self.name.clone(),
            actions.iter().map(|a| a.name.to_string()),
        )
        .discriminator(discriminator.as_deref().unwrap_or("action"))
        .schemas(actions.iter().map(|a| &a.schema_value));
        ToolDef {
            name: self.name,
            description: self.description,
            title: self.title,
            discriminator,
            actions,
            router,
            input_schema: Arc::new(input_schema),
            concurrency: self.concurrency,
            rate_limit: self.rate_limit,
            exposition: if self.single { None } else { self.exposition },
            own_problems: std::sync::OnceLock::new(),
        }
    }
}
