//! One action of a tool: its name, schema, decoder, hints, deprecation and limits.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Failure;
use super::decode::{Decoder, value_at};
use super::object_schema::bound_integers;
use crate::envelope::Text;
use crate::validate::{FieldPath, Problem, ProblemKind, Schema, SchemaError, ValidationError};

/// A qualified action name (`billing.list_invoices`), as `#[tool]` generates them for
/// `.actions(..)`: a misspelt action is a compile error, not a broken hint for the model.
///
/// ```
/// use mcp_fusion::{ErrorCode, ToolError};
/// use mcp_fusion::tools::ActionRef;
/// const LIST: ActionRef = ActionRef::new("billing.list_invoices");
/// let err = ToolError::new(ErrorCode::NOT_FOUND, "No invoice with that ID").actions([LIST]);
/// assert_eq!(err.available_actions().collect::<Vec<_>>(), ["billing.list_invoices"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActionRef(&'static str);

impl ActionRef {
    /// A reference to the action with this qualified name.
    pub const fn new(qualified: &'static str) -> Self {
        ActionRef(qualified)
    }

    /// The qualified name.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl From<ActionRef> for Text {
    fn from(action: ActionRef) -> Text {
        Cow::Borrowed(action.0)
    }
}

/// Hints about what an action does, for clients (MCP tool annotations), as the action's
/// builder sets them. Unset hints are not sent.
///
/// ```
/// use mcp_fusion::tools::ActionDef;
/// let list = ActionDef::without_arguments("list").read_only().build();
/// assert_eq!((list.annotations().read_only, list.annotations().destructive), (Some(true), None));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Annotations {
    /// The action does not modify its environment.
    pub read_only: Option<bool>,
    /// The action may perform destructive updates.
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The action interacts with an open world of external entities.
    pub open_world: Option<bool>,
}

/// A deprecated action: it still runs, and its result carries a DEPRECATED warning.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Deprecation {
    /// The author's note, used as the warning's message.
    pub note: Option<String>,
    /// The qualified action to use instead.
    pub replacement: Option<String>,
}

/// A concurrency limit: at most `max_active` calls run, `max_queued` wait (FIFO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Concurrency {
    /// Calls running at once.
    pub max_active: usize,
    /// Calls waiting for a slot.
    pub max_queued: usize,
}

/// A rate limit: at most `max` calls per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Calls allowed per window.
    pub max: u64,
    /// The window.
    pub window: Duration,
}

/// One action of a tool, as its tool holds it: described with [`ActionDef::new`] (and
/// [`ActionDefBuilder`]'s settings), read with the getters.
///
/// ```
/// use mcp_fusion::tools::ActionDef;
/// let action = ActionDef::without_arguments("list_invoices").read_only().build();
/// assert_eq!(action.annotations().read_only, Some(true));
/// ```
pub struct ActionDef {
    pub(super) name: Cow<'static, str>,
    pub(super) decoder: Option<Decoder>,
    /// Shared with each call's context, so a call does not copy it.
    pub(super) qualified: Arc<str>,
    pub(super) description: Option<String>,
    pub(super) schema_value: Value,
    pub(super) schema: Result<Schema, SchemaError>,
    pub(super) annotations: Annotations,
    pub(super) deprecated: Option<Deprecation>,
    pub(super) timeout: Option<Duration>,
    pub(super) concurrency: Option<Concurrency>,
    pub(super) rate_limit: Option<RateLimit>,
    /// The schema as written, when `with_schema` closed it (`additionalProperties: false`).
    pub(super) as_written: Option<Box<Value>>,
    pub(super) heartbeat: Option<Duration>,
    /// The human-readable name hosts show (MCP `title`).
    pub(super) title: Option<String>,
    /// The JSON Schema of the success value, when the action declares it.
    pub(super) output: Option<Arc<Map<String, Value>>>,
    /// The OAuth scopes a caller's token must grant (the tool's and its own, sorted).
    pub(super) scopes: Vec<String>,
    /// The fields only the user can give, asked of them when a call leaves one out.
    pub(super) user_fields: Vec<String>,
    /// What its handler asks of the client, which a call's client must be able to answer.
    pub(super) needs: Vec<super::Ask>,
    /// Of the fields the user gives, those the model may give too (relaying the user's answer).
    pub(super) relayed: Vec<String>,
    /// What the user reads above the form that asks for them.
    pub(super) ask_message: Option<String>,
    /// The fields mirrored in headers, each with its header's name (`header.rs`).
    pub(super) headers: Vec<(String, String)>,
    /// Whether a call may (or must) run as a task (MCP tasks extension).
    pub(super) task: Option<TaskSupport>,
}

/// Whether an action runs as a task (MCP tasks extension, SEP-2663) for a client that declared
/// the extension: the call is answered at once with a task the client polls (`tasks/get`).
/// `#[action(task)]` and `#[action(task = "required")]` in the macro.
///
/// ```
/// use mcp_fusion::tools::{ActionDef, TaskSupport};
/// let export = ActionDef::without_arguments("export").task(TaskSupport::Optional);
/// assert_eq!(export.build().task(), Some(TaskSupport::Optional));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// A task for a client that declared the extension; inline for any other.
    Optional,
    /// Only as a task: a client that did not declare the extension is answered -32021.
    Required,
    /// As `Optional`, but a task only once the call's request answers the questions under
    /// these input keys (`Context::input(key)`): before, the call runs inline and its asks end
    /// rounds (SEP-2322), so that a call gathers its input first and becomes a task on its
    /// last round. `required` says whether it is as `Required` otherwise.
    AfterInputs {
        /// The input keys whose answers the request must carry.
        keys: Vec<String>,
        /// Whether a client without the extension is refused.
        required: bool,
    },
}

impl TaskSupport {
    /// Whether a client that did not declare the extension is refused (-32021).
    pub fn required(&self) -> bool {
        match self {
            TaskSupport::Optional => false,
            TaskSupport::Required => true,
            TaskSupport::AfterInputs { required, .. } => *required,
        }
    }
}

impl std::fmt::Debug for ActionDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionDef")
            .field("name", &self.name)
            .field("qualified", &self.qualified)
            .field("description", &self.description)
            .field("schema", &self.schema_value)
            .field("annotations", &self.annotations)
            .field("deprecated", &self.deprecated)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ActionDef {
    /// An action whose arguments are `T`, validated against `T`'s JSON Schema, then decoded.
    #[allow(clippy::new_ret_no_self)] // `new` starts the builder, as `ActionDef::new::<T>(..)` reads
    pub fn new<T>(name: impl Into<Cow<'static, str>>) -> ActionDefBuilder
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
    {
        let mut schema = schemars::SchemaGenerator::default()
            .into_root_schema_for::<T>()
            .to_value();
        if let Some(root) = schema.as_object_mut() {
            // Noise for a model reading `tools/list`. `$schema` (draft 2020-12, which MCP
            // takes by default) is kept, as SEP-1613 asks.
            root.remove("title");
        }
        bound_integers(&mut schema);
        let mut action = Self::with_schema(name, schema);
        action.0.decoder = Some(Decoder::of::<T>());
        action
    }

    /// An action that takes no arguments (any sent field is unrecognized).
    pub fn without_arguments(name: impl Into<Cow<'static, str>>) -> ActionDefBuilder {
        Self::with_schema(
            name,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
    }

    /// An action with a hand-written JSON Schema for its arguments. Its arguments are closed:
    /// an object schema that does not say `additionalProperties` gets `false`, so a field it
    /// does not declare is reported (with a did-you-mean) rather than ignored;
    /// [`open_arguments`](ActionDefBuilder::open_arguments) undoes that.
    ///
    /// ```
    /// use mcp_fusion::tools::ActionDef;
    /// let get = ActionDef::with_schema("get", serde_json::json!({
    ///     "type": "object", "properties": {"id": {"type": "string"}}
    /// }));
    /// assert_eq!(get.build().schema()["additionalProperties"], false);
    /// ```
    pub fn with_schema(name: impl Into<Cow<'static, str>>, schema: Value) -> ActionDefBuilder {
        let mut closed = schema.clone();
        let (schema, as_written) = match super::object_schema::close(&mut closed) {
            true => (closed, Some(Box::new(schema))),
            false => (schema, None),
        };
        let compiled = Schema::new(&schema);
        ActionDefBuilder(ActionDef {
            name: name.into(),
            decoder: None,
            qualified: Arc::from(""),
            description: None,
            schema_value: schema,
            schema: compiled,
            annotations: Annotations::default(),
            deprecated: None,
            timeout: None,
            concurrency: None,
            rate_limit: None,
            as_written,
            heartbeat: None,
            title: None,
            output: None,
            scopes: Vec::new(),
            user_fields: Vec::new(),
            needs: Vec::new(),
            relayed: Vec::new(),
            ask_message: None,
            headers: Vec::new(),
            task: None,
        })
    }
}

/// An action being described: [`ActionDef::new`], [`ActionDef::without_arguments`] or
/// [`ActionDef::with_schema`], then its settings; a tool takes it with
/// [`ToolDefBuilder::action`](super::ToolDefBuilder::action).
///
/// ```
/// use mcp_fusion::tools::ActionDef;
/// let action = ActionDef::without_arguments("list_invoices").description("List invoices.").read_only().build();
/// assert_eq!((action.name(), action.description()), ("list_invoices", Some("List invoices.")));
/// ```
#[must_use = "an action is described for a tool: give it to ToolDefBuilder::action"]
pub struct ActionDefBuilder(pub(super) ActionDef);

impl std::fmt::Debug for ActionDefBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl ActionDefBuilder {
    /// The action as described, outside any tool (its qualified name is its bare name): for
    /// tests of what a description gives.
    pub fn build(mut self) -> ActionDef {
        self.0.qualified = Arc::from(&*self.0.name);
        self.0
    }

    /// Accepts fields the arguments do not declare (they are ignored), as the schema was
    /// written: for arguments meant to be open. `#[action(open_arguments)]` in the macro.
    ///
    /// ```
    /// use mcp_fusion::tools::ActionDef;
    /// let search = ActionDef::with_schema("search", serde_json::json!({
    ///     "type": "object", "properties": {"q": {"type": "string"}}
    /// })).open_arguments();
    /// assert!(search.build().schema().get("additionalProperties").is_none());
    /// ```
    pub fn open_arguments(mut self) -> Self {
        if let Some(as_written) = self.0.as_written.take() {
            self.0.schema_value = *as_written;
            self.0.schema = Schema::new(&self.0.schema_value);
        }
        self
    }

    /// Sets the description (from doc comments, for `#[tool]`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.0.description = (!description.is_empty()).then_some(description);
        self
    }

    /// Sets the title: the name a host shows people (MCP's `title`). In flat exposition it is
    /// the title of the action's own MCP tool. `#[action(title = "..")]` in the macro.
    ///
    /// ```
    /// let pay = mcp_fusion::tools::ActionDef::without_arguments("pay_invoice").title("Pay an invoice");
    /// assert_eq!(pay.build().title(), Some("Pay an invoice"));
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        let title = title.into();
        self.0.title = (!title.is_empty()).then_some(title);
        self
    }

    /// Declares the success value: `T`'s JSON Schema, as `T` serializes, is the `outputSchema` of
    /// the action's MCP tool when it is one (flat exposition, or a tool of one action), and each
    /// successful call of it then carries the value as `structuredContent` beside its text. A
    /// grouped tool lists none: one tool, many output types. `#[action(output_schema)]` in the
    /// macro.
    ///
    /// ```
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Invoice { id: String, amount_cents: u64 }
    ///
    /// let get = mcp_fusion::tools::ActionDef::without_arguments("get_invoice").output::<Invoice>();
    /// let get = get.build();
    /// let schema = get.output_schema().unwrap();
    /// assert_eq!(schema["required"], serde_json::json!(["id", "amount_cents"]));
    /// ```
    pub fn output<T: schemars::JsonSchema>(self) -> Self {
        let mut schema = schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value();
        if let Some(root) = schema.as_object_mut() {
            root.remove("title");
        }
        self.output_schema(schema)
    }

    /// Declares the success value with a hand-written JSON Schema (see [`output`](Self::output)).
    /// A schema that is not an object (`true`, say) declares nothing.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.0.output = match schema {
            Value::Object(schema) => Some(Arc::new(schema)),
            _ => None,
        };
        self
    }

    /// Marks the action read-only.
    pub fn read_only(mut self) -> Self {
        self.0.annotations.read_only = Some(true);
        self
    }

    /// Marks the action destructive.
    pub fn destructive(mut self) -> Self {
        self.0.annotations.destructive = Some(true);
        self
    }

    /// Marks the action idempotent.
    pub fn idempotent(mut self) -> Self {
        self.0.annotations.idempotent = Some(true);
        self
    }

    /// Marks the action as reaching an open world.
    pub fn open_world(mut self) -> Self {
        self.0.annotations.open_world = Some(true);
        self
    }

    /// Deprecates the action: `note` replaces the default message; `replacement` is the bare
    /// name of another action of the same tool.
    pub fn deprecated(mut self, note: Option<&str>, replacement: Option<&str>) -> Self {
        self.0.deprecated = Some(Deprecation {
            note: note.filter(|n| !n.is_empty()).map(str::to_owned),
            replacement: replacement.map(str::to_owned),
        });
        self
    }

    /// Sets the deadline of the action's handler.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.0.timeout = Some(timeout);
        self
    }

    /// Sends progress every `every` while the handler runs and has reported none of its own
    /// (`progress` = the seconds elapsed, no `total`), to a client that asked for progress:
    /// keeps a long call from being given up on. `#[action(heartbeat = "5s")]` in the macro.
    ///
    /// ```
    /// use std::time::Duration;
    /// let export = mcp_fusion::tools::ActionDef::without_arguments("export").heartbeat(Duration::from_secs(5));
    /// assert_eq!(export.build().heartbeat(), Some(Duration::from_secs(5)));
    /// ```
    pub fn heartbeat(mut self, every: Duration) -> Self {
        self.0.heartbeat = Some(every.max(Duration::from_millis(10)));
        self
    }

    /// Runs the action as a task for a client that declared the tasks extension (see
    /// [`TaskSupport`]). A task runs under the action's timeout, limits and middleware as a call
    /// does; its handler's asks of the user become the task's questions.
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.0.task = Some(support);
        self
    }

    /// Limits concurrent calls of this action (within the tool's own limit, if any).
    pub fn concurrency(mut self, max_active: usize, max_queued: usize) -> Self {
        self.0.concurrency = Some(Concurrency {
            max_active,
            max_queued,
        });
        self
    }

    /// Limits calls of this action to `max` per `window` (beside the tool's own limit, if any;
    /// per caller with `Server::rate_limit_key`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_fusion::tools::ActionDef;
    ///
    /// let create = ActionDef::without_arguments("create_invoice")
    ///     .rate_limit(10, Duration::from_secs(60));
    /// assert_eq!(create.build().rate_limit().map(|l| l.max), Some(10));
    /// ```
    pub fn rate_limit(mut self, max: u64, window: Duration) -> Self {
        self.0.rate_limit = Some(RateLimit { max, window });
        self
    }

    /// The OAuth scopes a caller's token must grant to call this action, besides the tool's
    /// (`#[action(scopes("invoices:write"))]` in the macro). Checked over streamable HTTP with
    /// an OAuth resource server (`server::oauth::OAuth`, feature `oauth`), after routing and validation
    /// and before the limits; a caller without them is answered 403 `insufficient_scope`. On
    /// stdio, where no token is presented, scopes do not apply.
    ///
    /// ```
    /// use mcp_fusion::tools::ActionDef;
    /// let create = ActionDef::without_arguments("create_invoice").scopes(["invoices:write"]);
    /// assert_eq!(create.build().scopes(), ["invoices:write"]);
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.0.scopes.extend(scopes.into_iter().map(Into::into));
        self.0.scopes.sort_unstable();
        self.0.scopes.dedup();
        self
    }

    /// Marks `name`, an optional field of the arguments, as one only the user can give (a
    /// confirmation above all); `#[action(ask_user(confirm))]` in the macro. `name` is the field
    /// as the arguments' schema spells it (after serde's renames).
    ///
    /// The model never gives it: the field is left out of the schema `tools/list` shows, and a
    /// call that carries it anyway is refused (USER_ONLY_FIELD: only the user can give it). The
    /// server asks the user for it once the call is validated and admitted by its limits,
    /// before its middleware and deadline: one form (MCP elicitation) with every such field,
    /// each as the arguments' schema describes it ([`ActionDef::user_field_form`]), under the
    /// action's [`ask_user_message`](ActionDef::ask_user_message), sent the way
    /// [`Context::elicit`](crate::Context::elicit) sends its own (a 2025-11-25 session's
    /// back-channel; from 2026-07-28 an `input_required` round, the retried call finding the
    /// answer). The answers go into the arguments, which are validated again, and the action
    /// runs with them. A question declined or dismissed, or left unanswered past the server's
    /// `ask_timeout`, is the envelope `Context::elicit`'s error gives (USER_DECLINED,
    /// USER_CANCELLED, TIMEOUT). When the client cannot be asked, the call never runs: from MCP
    /// 2026-07-28 a request that did not declare elicitation is answered -32021; before, the
    /// envelope CLIENT_UNSUPPORTED says the action needs a client that can ask the user, and
    /// not to retry with the field. For an answer the model may relay, see
    /// [`relayed_user_field`](Self::relayed_user_field).
    ///
    /// The field must be an optional property of the arguments that a form can show (text, a
    /// number, a boolean, or a choice among strings): a server refuses to build with one that
    /// is not, naming the tool, the action and the field.
    ///
    /// ```
    /// use mcp_fusion::tools::ActionDef;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Delete {
    ///     note: String,
    ///     /// Delete the note for good.
    ///     confirm: Option<bool>,
    /// }
    ///
    /// let delete = ActionDef::new::<Delete>("delete").user_field("confirm").build();
    /// assert_eq!(delete.user_fields(), ["confirm"]);
    /// // What a call that leaves `confirm` out has the user fill in.
    /// let form = serde_json::to_value(delete.user_field_form("confirm").unwrap()).unwrap();
    /// assert_eq!(form["properties"]["confirm"]["type"], "boolean");
    /// ```
    pub fn user_field(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.0.user_fields.contains(&name) {
            self.0.user_fields.push(name);
        }
        self
    }
}

impl ActionDefBuilder {
    /// Marks `name` as a field the user is asked for when a call leaves it out, and which the
    /// model may give too: for an answer the user gave in the conversation that the model
    /// relays (choosing one of the user's own accounts), never for a confirmation. A deliberate
    /// choice, unlike [`user_field`](Self::user_field): the field is listed in the schema the
    /// model reads, a call that gives it is not asked, and a client that cannot be asked gets
    /// MISSING_REQUIRED_FIELD, which invites the model to give it. Said by hand only, so that it
    /// is always a choice made in code.
    ///
    /// ```
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Pay {
    ///     /// The account to pay from, one of the user's.
    ///     account: Option<String>,
    /// }
    ///
    /// let pay = mcp_fusion::tools::ActionDef::new::<Pay>("pay").relayed_user_field("account").build();
    /// assert_eq!(pay.user_fields(), ["account"]);
    /// assert!(!pay.is_user_only("account"));
    /// ```
    pub fn relayed_user_field(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.0.relayed.contains(&name) {
            self.0.relayed.push(name.clone());
        }
        self.user_field(name)
    }

    /// What the user reads above the form that asks for the fields only they can give (by
    /// default, a sentence naming the action by its title). `#[action(ask_user(confirm, message
    /// = ".."))]` in the macro.
    ///
    /// ```
    /// let delete = mcp_fusion::tools::ActionDef::without_arguments("delete")
    ///     .ask_user_message("Delete this note for good?")
    ///     .build();
    /// assert_eq!(delete.ask_user_message(), "Delete this note for good?");
    /// ```
    pub fn ask_user_message(mut self, message: impl Into<String>) -> Self {
        self.0.ask_message = Some(message.into());
        self
    }

    /// Declares what the action's handler asks of the client (`Ask::Model`: sampling,
    /// `Ask::User`: elicitation, `Ask::Roots`); `#[action(needs(sampling))]` in the macro. A
    /// call whose client cannot be asked that is refused before its handler runs: from MCP
    /// 2026-07-28, with -32021 naming the capabilities the request must declare (HTTP 400);
    /// before, with the envelope CLIENT_UNSUPPORTED.
    ///
    /// ```
    /// use mcp_fusion::tools::{ActionDef, Ask};
    /// let summarize = ActionDef::without_arguments("summarize").needs([Ask::Model]).build();
    /// assert_eq!(summarize.needs(), [Ask::Model]);
    /// ```
    pub fn needs(mut self, asks: impl IntoIterator<Item = super::Ask>) -> Self {
        for ask in asks {
            if !self.0.needs.contains(&ask) {
                self.0.needs.push(ask);
            }
        }
        self
    }
}

impl ActionDef {
    /// Whether `name` is a field only the user can give: asked of them, never taken from the
    /// model ([`ActionDefBuilder::user_field`], not [`relayed_user_field`](ActionDefBuilder::relayed_user_field)).
    pub fn is_user_only(&self, name: &str) -> bool {
        self.user_fields.iter().any(|f| f == name) && !self.relayed.iter().any(|f| f == name)
    }

    /// The arguments' schema as the model reads it: without the fields only the user can give
    /// (their properties, and their names in `required`).
    pub(crate) fn listed_value(&self) -> std::borrow::Cow<'_, Value> {
        if self.user_only().next().is_none() {
            return std::borrow::Cow::Borrowed(&self.schema_value);
        }
        let mut listed = self.schema_value.clone();
        if let Some(root) = listed.as_object_mut() {
            for field in self.user_only() {
                if let Some(Value::Object(properties)) = root.get_mut("properties") {
                    properties.shift_remove(field);
                }
                if let Some(Value::Array(required)) = root.get_mut("required") {
                    required.retain(|name| name.as_str() != Some(field));
                }
            }
        }
        std::borrow::Cow::Owned(listed)
    }

    /// The fields only the user can give, in the order they were marked.
    pub(crate) fn user_only(&self) -> impl Iterator<Item = &str> {
        (self.user_fields.iter())
            .filter(|f| !self.relayed.contains(f))
            .map(String::as_str)
    }

    /// What the user reads above the form that asks for the fields only they can give: the
    /// author's words ([`ActionDefBuilder::ask_user_message`]), else a sentence naming the
    /// action by its title (or its name, its words spaced).
    pub fn ask_user_message(&self) -> String {
        if let Some(message) = &self.ask_message {
            return message.clone();
        }
        let title = match &self.title {
            Some(title) => title.clone(),
            None => {
                let spaced = self.name.replace('_', " ");
                let mut chars = spaced.chars();
                chars
                    .next()
                    .map(|first| first.to_uppercase().chain(chars).collect())
                    .unwrap_or_default()
            }
        };
        format!("\u{201c}{title}\u{201d} needs your answer before it goes on.")
    }

    /// What the action's handler asks of the client ([`ActionDefBuilder::needs`]).
    pub fn needs(&self) -> &[super::Ask] {
        &self.needs
    }

    /// The fields only the user can give ([`ActionDefBuilder::user_field`]), in the order they
    /// were marked.
    pub fn user_fields(&self) -> &[String] {
        &self.user_fields
    }

    /// The form that asks the user for `name`, a field of the arguments (one of
    /// [`user_fields`](Self::user_fields)): the field as the arguments' schema describes it
    /// (its doc comment as its description, its bounds, its choices with their titles),
    /// required in the form, where the user may still decline to answer. `None` when the
    /// arguments have no such field a form can show.
    ///
    /// ```
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Delete {
    ///     note: String,
    ///     /// Delete the note for good.
    ///     confirm: Option<bool>,
    /// }
    ///
    /// let delete = mcp_fusion::tools::ActionDef::new::<Delete>("delete").user_field("confirm").build();
    /// let form = delete.user_field_form("confirm").unwrap();
    /// assert_eq!(serde_json::to_value(form).unwrap(), serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"confirm": {"type": "boolean", "description": "Delete the note for good."}},
    ///     "required": ["confirm"],
    /// }));
    /// ```
    pub fn user_field_form(&self, name: &str) -> Option<rmcp::model::ElicitationSchema> {
        super::user_field::form(&self.schema_value, &[name])
    }

    /// Whether fields the arguments do not declare are accepted.
    pub fn accepts_unknown_fields(&self) -> bool {
        super::object_schema::is_open(&self.schema_value)
    }

    /// The OAuth scopes a caller's token must grant to call this action: the tool's and the
    /// action's own, sorted, each once.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The JSON Schema of the success value, if the action declares one.
    pub fn output_schema(&self) -> Option<&Map<String, Value>> {
        self.output.as_deref()
    }

    /// Whether it runs as a task, if it may.
    pub fn task(&self) -> Option<TaskSupport> {
        self.task.clone()
    }

    /// Whether it runs as a task, by reference.
    pub(crate) fn task_support(&self) -> Option<&TaskSupport> {
        self.task.as_ref()
    }

    /// The heartbeat's interval, if any.
    pub fn heartbeat(&self) -> Option<Duration> {
        self.heartbeat
    }

    /// The action's own concurrency limit, if any.
    pub fn concurrency(&self) -> Option<Concurrency> {
        self.concurrency
    }

    /// The action's own rate limit, if any.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.rate_limit
    }

    /// The bare name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The qualified name (`tool.action`).
    pub fn qualified(&self) -> &str {
        &self.qualified
    }

    pub(crate) fn qualified_shared(&self) -> Arc<str> {
        self.qualified.clone()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The JSON Schema of the arguments.
    pub fn schema(&self) -> &Value {
        &self.schema_value
    }

    /// The compiled schema, or why it could not be compiled.
    pub(crate) fn compiled_schema(&self) -> Result<&Schema, &SchemaError> {
        self.schema.as_ref()
    }

    /// The annotations.
    pub fn annotations(&self) -> Annotations {
        self.annotations
    }

    /// The deprecation, if any (replacement qualified).
    pub fn deprecation(&self) -> Option<&Deprecation> {
        self.deprecated.as_ref()
    }

    /// The handler's deadline, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Decodes validated arguments into the action's type `T` (the type it was made with).
    /// A whole-number float (`2.0`) where the schema allows an integer reaches `T` as that
    /// integer. A value the schema accepts but `T` refuses is answered with a validation error
    /// at the path where decoding stopped (ERRORS.md §5, the decoder row); the decoder's own
    /// words go to the log, never to the model. Successful calls pay for one decoding only.
    pub fn decode<T: 'static>(&self, args: &Value) -> Result<T, Failure> {
        let decoder = self
            .decoder
            .ok_or_else(|| Failure::Internal("this action takes no arguments".into()))?;
        let mut slot: Option<T> = None;
        if (decoder.decode)(args, &mut slot).is_err() {
            let integers = self.schema.as_ref().ok().and_then(|s| s.integers(args));
            match &integers {
                Some(fixed) if (decoder.decode)(fixed, &mut slot).is_ok() => {}
                _ => return Err(self.refused(decoder, integers.as_ref().unwrap_or(args), args)),
            }
        }
        slot.ok_or_else(|| Failure::Internal("the arguments were decoded into another type".into()))
    }

    /// The decoder row: where `decoded` (the arguments as decoded, integers fixed) was refused,
    /// described by the schema there, with the value found at that path in `sent`.
    fn refused(&self, decoder: Decoder, decoded: &Value, sent: &Value) -> Failure {
        let (path, cause) = match (decoder.locate)(decoded) {
            Some((path, cause)) => (path, cause.to_string()),
            None => (
                FieldPath::root(),
                "refused on the first decoding only".to_owned(),
            ),
        };
        tracing::warn!(
            action = %self.qualified,
            path = %path,
            cause = %cause,
            "arguments accepted by the schema were refused by the argument type"
        );
        let desc = self
            .schema
            .as_ref()
            .map_or_else(|_| "a value".into(), |schema| schema.desc_at(&path));
        let problem = Problem::new(
            path.clone(),
            ProblemKind::Decode { desc },
            value_at(sent, &path),
        );
        Failure::Invalid(ValidationError::new(&*self.qualified, vec![problem]))
    }
}
