//! What a tool is: its definition (name, actions, schemas, annotations, limits) and the trait
//! that `#[tool]` implements. Everything here can also be written by hand.

mod invoke;

pub use invoke::{Failure, IntoOutput, Response};
pub(crate) use invoke::{Prepared, Rejection, catching, finish, prepare};

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::router::Router;
use crate::validate::{
    FieldPath, PathSegment, Problem, ProblemKind, Schema, SchemaError, ValidationError,
};
use crate::{Text, ToolError};

/// A boxed, sendable future, as [`Tool::call`] returns.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool an MCP server can list and call: its definition, and a way to run each action.
/// `#[tool]` implements it; it can be written by hand too. Routing, validation, the deprecation
/// warning, panic catching and the envelopes are not the tool's job: [`Tool::call`] does them
/// in process, and a [`crate::server::Server`] does them with its limits and middleware around
/// [`Tool::invoke`], for every registered tool alike.
///
/// ```
/// use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
/// use mcp_fusion::{ActionDef, BoxFuture, Context, Failure, Tool, ToolDef};
/// use serde_json::Value;
///
/// struct Ping(ToolDef);
///
/// impl Tool for Ping {
///     fn definition(&self) -> &ToolDef {
///         &self.0
///     }
///
///     fn invoke(&self, _action: usize, _args: Value, _cx: Context) -> BoxFuture<'_, Result<CallToolResult, Failure>> {
///         Box::pin(async { Ok(CallToolResult::success(vec![ContentBlock::text("pong")])) })
///     }
/// }
///
/// let ping = Ping(ToolDef::single(ActionDef::without_arguments("ping")).build());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let result = ping.call(None).await;
/// assert_eq!(result.content[0].as_text().unwrap().text, "pong");
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an MCP tool",
    label = "not a tool",
    note = "put `#[mcp_fusion::tool]` on an `impl {Self}` block of async actions, or on an async fn"
)]
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition: name, actions, schemas. Built once.
    fn definition(&self) -> &ToolDef;

    /// Runs the action at `index` of [`Tool::definition`]'s actions with its arguments
    /// (discriminator removed, already validated against the action's schema) and the call's
    /// context. Decoding the arguments into the action's type is the tool's, where the types
    /// are ([`ActionDef::decode`]).
    fn invoke(
        &self,
        index: usize,
        args: Value,
        context: Context,
    ) -> BoxFuture<'_, Result<CallToolResult, Failure>>;

    /// Runs one call in process: routing, validation, the deprecation warning, the action with
    /// its panic caught, and every failure as its envelope; no limits or middleware.
    fn call(&self, arguments: Option<Map<String, Value>>) -> BoxFuture<'_, CallToolResult> {
        Box::pin(invoke::in_process(self, arguments))
    }
}

/// A qualified action name (`billing.list_invoices`), as `#[tool]` generates them for
/// `.actions(..)`: a misspelt action is a compile error, not a broken hint for the model.
///
/// ```
/// use mcp_fusion::{error, ActionRef, ErrorCode};
/// const LIST: ActionRef = ActionRef::new("billing.list_invoices");
/// let err = error(ErrorCode::NOT_FOUND, "No invoice with that ID").actions([LIST]);
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

/// Hints about what an action does, for clients (MCP tool annotations). Unset hints are not sent.
///
/// ```
/// let hints = mcp_fusion::Annotations { read_only: Some(true), ..Default::default() };
/// assert_eq!(hints.read_only, Some(true));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

/// One action of a tool.
///
/// ```
/// use mcp_fusion::ActionDef;
/// let action = ActionDef::without_arguments("list_invoices").description("List invoices.").read_only();
/// assert_eq!(action.name(), "list_invoices");
/// ```
pub struct ActionDef {
    name: Cow<'static, str>,
    decoder: Option<Decoder>,
    /// Shared with each call's context, so a call does not copy it.
    qualified: Arc<str>,
    description: Option<String>,
    schema_value: Value,
    schema: Result<Schema, SchemaError>,
    annotations: Annotations,
    deprecated: Option<Deprecation>,
    timeout: Option<Duration>,
    concurrency: Option<Concurrency>,
}

/// Decodes an action's arguments into its type, erased so that a definition holds any: the
/// plain decoder, and the same through `serde_path_to_error`, run only after a failure to learn
/// where the decoder stopped.
#[derive(Clone, Copy)]
struct Decoder {
    decode: fn(&Value) -> Result<Box<dyn Any + Send>, serde_json::Error>,
    locate: fn(&Value) -> Option<(FieldPath, serde_json::Error)>,
}

impl Decoder {
    fn of<T: serde::de::DeserializeOwned + Send + 'static>() -> Self {
        Decoder {
            decode: |args| T::deserialize(args).map(|t| Box::new(t) as Box<dyn Any + Send>),
            locate: |args| {
                let err = serde_path_to_error::deserialize::<_, T>(args).err()?;
                Some((decoder_path(err.path()), err.into_inner()))
            },
        }
    }
}

/// The decoder's path as a [`FieldPath`]; the root when it cannot tell (`flatten`, untagged
/// enums and other buffered content lose the track).
fn decoder_path(path: &serde_path_to_error::Path) -> FieldPath {
    use serde_path_to_error::Segment;
    let mut out = FieldPath::root();
    for segment in path.iter() {
        out = match segment {
            Segment::Seq { index } => out.index(*index),
            Segment::Map { key } | Segment::Enum { variant: key } => out.key(key.as_str()),
            Segment::Unknown => return FieldPath::root(),
        };
    }
    out
}

/// The value at `path` in `args`, if there is one.
fn value_at<'a>(args: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    path.segments()
        .iter()
        .try_fold(args, |value, segment| match segment {
            PathSegment::Key(key) => value.get(key.as_str()),
            PathSegment::Index(i) => value.get(*i),
        })
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

/// Gives each integer whose Rust type schemars names in `format` (`uint32`, `int64`, ...) the
/// bounds of that type, unless the schema already has them: a value the type cannot hold is then
/// a field's "Too big" (with the limit), not a decoding failure of the whole arguments.
fn bound_integers(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            let integer = match node.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            let range: Option<(Value, Value)> = match node.get("format").and_then(Value::as_str) {
                _ if !integer => None,
                Some("uint8") => Some((0.into(), u8::MAX.into())),
                Some("uint16") => Some((0.into(), u16::MAX.into())),
                Some("uint32") => Some((0.into(), u32::MAX.into())),
                Some("uint64" | "uint") => Some((0.into(), u64::MAX.into())),
                Some("int8") => Some((i8::MIN.into(), i8::MAX.into())),
                Some("int16") => Some((i16::MIN.into(), i16::MAX.into())),
                Some("int32") => Some((i32::MIN.into(), i32::MAX.into())),
                Some("int64" | "int") => Some((i64::MIN.into(), i64::MAX.into())),
                _ => None,
            };
            if let Some((min, max)) = range {
                if !node.contains_key("exclusiveMinimum") {
                    node.entry("minimum").or_insert(min);
                }
                if !node.contains_key("exclusiveMaximum") {
                    node.entry("maximum").or_insert(max);
                }
            }
            node.values_mut().for_each(bound_integers);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integers),
        _ => {}
    }
}

impl ActionDef {
    /// An action whose arguments are `T`, validated against `T`'s JSON Schema, then decoded.
    pub fn new<T>(name: impl Into<Cow<'static, str>>) -> Self
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
    {
        let mut schema = schemars::SchemaGenerator::default()
            .into_root_schema_for::<T>()
            .to_value();
        if let Some(root) = schema.as_object_mut() {
            // Noise for a model reading `tools/list`; the draft is fixed by the contract.
            root.remove("$schema");
            root.remove("title");
        }
        bound_integers(&mut schema);
        let mut action = Self::with_schema(name, schema);
        action.decoder = Some(Decoder::of::<T>());
        action
    }

    /// An action that takes no arguments (any sent field is unrecognized).
    pub fn without_arguments(name: impl Into<Cow<'static, str>>) -> Self {
        Self::with_schema(
            name,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
    }

    /// An action with a hand-written JSON Schema for its arguments.
    pub fn with_schema(name: impl Into<Cow<'static, str>>, schema: Value) -> Self {
        let compiled = Schema::new(&schema);
        ActionDef {
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
        }
    }

    /// Sets the description (from doc comments, for `#[tool]`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.description = (!description.is_empty()).then_some(description);
        self
    }

    /// Marks the action read-only.
    pub fn read_only(mut self) -> Self {
        self.annotations.read_only = Some(true);
        self
    }

    /// Marks the action destructive.
    pub fn destructive(mut self) -> Self {
        self.annotations.destructive = Some(true);
        self
    }

    /// Marks the action idempotent.
    pub fn idempotent(mut self) -> Self {
        self.annotations.idempotent = Some(true);
        self
    }

    /// Marks the action as reaching an open world.
    pub fn open_world(mut self) -> Self {
        self.annotations.open_world = Some(true);
        self
    }

    /// Deprecates the action: `note` replaces the default message; `replacement` is the bare
    /// name of another action of the same tool.
    pub fn deprecated(mut self, note: Option<&str>, replacement: Option<&str>) -> Self {
        self.deprecated = Some(Deprecation {
            note: note.filter(|n| !n.is_empty()).map(str::to_owned),
            replacement: replacement.map(str::to_owned),
        });
        self
    }

    /// Sets the deadline of the action's handler.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Limits concurrent calls of this action (within the tool's own limit, if any).
    pub fn concurrency(mut self, max_active: usize, max_queued: usize) -> Self {
        self.concurrency = Some(Concurrency {
            max_active,
            max_queued,
        });
        self
    }

    /// The action's own concurrency limit, if any.
    pub fn concurrency_limit(&self) -> Option<Concurrency> {
        self.concurrency
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
    pub fn description_text(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The JSON Schema of the arguments.
    pub fn schema(&self) -> &Value {
        &self.schema_value
    }

    /// The compiled schema, or why it could not be compiled.
    pub fn compiled_schema(&self) -> Result<&Schema, &SchemaError> {
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
    pub fn timeout_duration(&self) -> Option<Duration> {
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
        let decoded = match (decoder.decode)(args) {
            Ok(decoded) => decoded,
            Err(_) => {
                let integers = self.schema.as_ref().ok().and_then(|s| s.integers(args));
                match integers.as_ref().map(decoder.decode) {
                    Some(Ok(decoded)) => decoded,
                    _ => {
                        return Err(self.refused(decoder, integers.as_ref().unwrap_or(args), args));
                    }
                }
            }
        };
        decoded
            .downcast::<T>()
            .map(|t| *t)
            .map_err(|_| Failure::Internal("the arguments were decoded into another type".into()))
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

/// A tool's definition: what `tools/list` shows and what `tools/call` routes on.
///
/// ```
/// use mcp_fusion::{ActionDef, ToolDef};
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
    name: Cow<'static, str>,
    description: Option<String>,
    discriminator: Option<Cow<'static, str>>,
    actions: Vec<ActionDef>,
    router: Router,
    input_schema: Arc<Map<String, Value>>,
    concurrency: Option<Concurrency>,
    rate_limit: Option<RateLimit>,
}

/// Builds a [`ToolDef`].
#[derive(Debug)]
pub struct ToolDefBuilder {
    name: Cow<'static, str>,
    description: Option<String>,
    discriminator: Option<Cow<'static, str>>,
    single: bool,
    actions: Vec<ActionDef>,
    concurrency: Option<Concurrency>,
    rate_limit: Option<RateLimit>,
}

impl ToolDef {
    /// A grouped tool: actions selected by a discriminator field (`action` unless renamed).
    #[allow(clippy::new_ret_no_self)] // `new` starts the builder, as `ToolDef::new(..)..build()` reads
    pub fn new(name: impl Into<Cow<'static, str>>) -> ToolDefBuilder {
        ToolDefBuilder {
            name: name.into(),
            description: None,
            discriminator: None,
            single: false,
            actions: Vec::new(),
            concurrency: None,
            rate_limit: None,
        }
    }

    /// A single-action tool: no discriminator, the arguments are the action's.
    pub fn single(action: ActionDef) -> ToolDefBuilder {
        let mut builder = Self::new(action.name.clone());
        builder.single = true;
        builder.actions.push(action);
        builder
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description, if any.
    pub fn description_text(&self) -> Option<&str> {
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
    pub fn router(&self) -> &Router {
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

impl ToolDefBuilder {
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
    pub fn action(mut self, action: ActionDef) -> Self {
        self.actions.push(action);
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
        }
        let input_schema = match &discriminator {
            None => actions
                .first()
                .map_or_else(Map::new, |a| object_schema(&a.schema_value)),
            Some(field) => grouped_schema(field, &actions),
        };
        let router = Router::new(
            self.name.clone(),
            actions.iter().map(|a| a.name.to_string()),
        )
        .discriminator(discriminator.as_deref().unwrap_or("action"));
        ToolDef {
            name: self.name,
            description: self.description,
            discriminator,
            actions,
            router,
            input_schema: Arc::new(input_schema),
            concurrency: self.concurrency,
            rate_limit: self.rate_limit,
        }
    }
}

/// A schema as a root object schema (MCP requires `type: object` at the root).
fn object_schema(schema: &Value) -> Map<String, Value> {
    let mut root = schema.as_object().cloned().unwrap_or_default();
    root.entry("type").or_insert_with(|| json!("object"));
    root
}

/// The input schema of a grouped tool, flat so that every MCP client shows it usefully: the
/// discriminator (an enum of the action names, each described), then every action's fields in
/// declaration order, each saying which actions take it and which require it.
fn grouped_schema(discriminator: &str, actions: &[ActionDef]) -> Map<String, Value> {
    let names: Vec<&str> = actions.iter().map(|a| a.name.as_ref()).collect();
    let listing: Vec<String> = actions
        .iter()
        .map(|a| match &a.description {
            Some(d) => format!("{}: {}", a.name, first_line(d)),
            None => a.name.to_string(),
        })
        .collect();
    let mut properties = Map::new();
    properties.insert(
        discriminator.to_owned(),
        json!({"type": "string", "enum": names, "description": format!("The action to run. {}", listing.join("; "))}),
    );
    let mut used_by: Vec<(String, Vec<&str>, Vec<&str>)> = Vec::new();
    let mut defs = Map::new();
    for action in actions {
        let schema = &action.schema_value;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (field, field_schema) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if !properties.contains_key(field) {
                properties.insert(field.clone(), field_schema.clone());
                used_by.push((field.clone(), Vec::new(), Vec::new()));
            }
            if let Some((_, takes, requires)) = used_by.iter_mut().find(|(f, ..)| f == field) {
                takes.push(&action.name);
                if required.contains(&field.as_str()) {
                    requires.push(&action.name);
                }
            }
        }
        for (name, def) in schema
            .get("$defs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            defs.entry(name.clone()).or_insert_with(|| def.clone());
        }
    }
    for (field, takes, requires) in used_by {
        let Some(Value::Object(field_schema)) = properties.get_mut(&field) else {
            continue;
        };
        let mut note = format!("For {}", takes.join(", "));
        if !requires.is_empty() {
            note.push_str(&format!("; required by {}", requires.join(", ")));
        }
        note.push('.');
        let description = match field_schema.get("description").and_then(Value::as_str) {
            Some(d) => format!("{d} ({note})"),
            None => note,
        };
        field_schema.insert("description".into(), Value::String(description));
    }
    let mut root = Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    root.insert("required".into(), json!([discriminator]));
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    root
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

/// What an action's handler gets besides its arguments: the action it runs as, and helpers
/// that build its errors and warnings.
///
/// ```
/// use mcp_fusion::{Context, ErrorCode};
/// let f = Context::detached("billing.get_invoice");
/// let err = f.error(ErrorCode::NOT_FOUND, "No invoice with that ID");
/// assert_eq!(err.code(), &ErrorCode::NOT_FOUND);
/// f.warn(f.error(ErrorCode::DEPRECATED, "Old field used."));
/// assert_eq!(f.take_warnings().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    action: Arc<str>,
    warnings: Arc<std::sync::Mutex<Vec<ToolError>>>,
}

impl Context {
    pub(crate) fn new(action: Arc<str>) -> Self {
        Context {
            action,
            warnings: Arc::default(),
        }
    }

    /// A context outside any server, for tests of handlers.
    pub fn detached(qualified_action: impl Into<Arc<str>>) -> Self {
        Self::new(qualified_action.into())
    }

    /// The qualified action this call runs (`billing.get_invoice`).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Starts an error of this action: [`crate::error`], ready to return.
    pub fn error(&self, code: crate::ErrorCode, message: impl Into<Text>) -> ToolError {
        crate::error(code, message)
    }

    /// MISSING_REQUIRED_FIELD for `field`.
    pub fn required(&self, field: &str) -> ToolError {
        ToolError::missing_required_field(field)
    }

    /// Adds a warning to this call's successful result (its severity becomes `warning`).
    pub fn warn(&self, warning: ToolError) {
        let mut warnings = self
            .warnings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        warnings.push(warning.warning());
    }

    /// The warnings added so far, in order, leaving none.
    pub fn take_warnings(&self) -> Vec<ToolError> {
        std::mem::take(
            &mut *self
                .warnings
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}
