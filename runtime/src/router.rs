//! Discriminator dispatch (ERRORS.md §4): which action a call names, or why it names none,
//! and which actions take the fields it sent (§11.1).

mod fields;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::ToolError;
use crate::closest::Names;
use crate::envelope::Text;
use crate::envelope::{ActionList, Envelope, RouteText, UnknownTail, fitting_sentence};
use fields::Takes;
use foldhash::fast::FixedState;

/// The actions of a grouped tool and the field that selects one.
///
/// ```
/// use mcp_fusion::router::{ActionRouter, RouteError};
/// use serde_json::json;
///
/// let router = ActionRouter::new("billing", ["list_invoices", "get_invoice"]);
/// assert_eq!(router.route(Some(&json!({"action": "billing.get_invoice"}))), Ok(1));
/// let err = router.route(Some(&json!({"action": "get_invoise"}))).unwrap_err();
/// assert_eq!(err, RouteError::UnknownAction { value: "get_invoise".into(), closest: Some(1), fields: vec![] });
/// assert_eq!(router.error(&err).recovery(), Some("Did you mean \"billing.get_invoice\"? Choose one of the available actions and call the tool again."));
/// ```
#[derive(Debug, Clone)]
pub struct ActionRouter {
    tool: String,
    discriminator: String,
    /// The bare names, prepared for the closest-name search.
    actions: Names,
    qualified: Vec<String>,
    /// The qualified names with their `<available_actions>` block, shared by every envelope.
    listed: Arc<ActionList>,
    /// Each bare name's position.
    index: HashMap<String, usize, FixedState>,
    /// What follows the value in an UNKNOWN_ACTION head, suggesting each action (then none),
    /// made the first time it is needed.
    unknown: Arc<[OnceLock<UnknownTail>]>,
    /// The fields each action takes, when its schema was given ([`ActionRouter::schemas`]).
    takes: Option<Arc<[Takes]>>,
}

/// Why a call names no action. `fields` are the other fields the call sent (their names, in
/// the order sent), from which the envelope tells which actions take them (ERRORS.md §11.1).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RouteError {
    /// The discriminator is absent, `null` or `""`.
    Missing {
        /// The other fields sent.
        fields: Vec<String>,
    },
    /// The discriminator is not a string.
    NotAString {
        /// The discriminator's value.
        sent: Value,
        /// The other fields sent.
        fields: Vec<String>,
    },
    /// The discriminator names no action; `closest` indexes a close one.
    UnknownAction {
        /// The value as sent.
        value: String,
        /// The index of the closest action, if one is close.
        closest: Option<usize>,
        /// The other fields sent.
        fields: Vec<String>,
    },
}

/// [`RouteError`], borrowing what was sent.
#[derive(Clone, Copy)]
enum Miss<'v> {
    Missing,
    NotAString(&'v Value),
    Unknown {
        value: &'v str,
        closest: Option<usize>,
    },
}

/// The other fields a call sent, as they were sent.
#[derive(Clone, Copy)]
enum Sent<'v> {
    Arguments(Option<&'v Map<String, Value>>),
    Names(&'v [String]),
}

impl ActionRouter {
    /// A tool's actions (bare names, in declaration order), selected by the field `action`.
    pub fn new<I>(tool: impl Into<String>, actions: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let tool = tool.into();
        let actions: Vec<String> = actions.into_iter().map(Into::into).collect();
        let qualified: Vec<String> = actions.iter().map(|a| format!("{tool}.{a}")).collect();
        let listed = Arc::new(ActionList::new(
            qualified.iter().map(|q| Text::Owned(q.clone())),
        ));
        let mut index = HashMap::with_capacity_and_hasher(actions.len(), FixedState::default());
        for (i, action) in actions.iter().enumerate() {
            // The first of two equal names wins, as a search in declaration order would.
            index.entry(action.clone()).or_insert(i);
        }
        ActionRouter {
            unknown: (0..=actions.len()).map(|_| OnceLock::new()).collect(),
            tool,
            discriminator: "action".into(),
            index,
            actions: Names::new(&actions),
            qualified,
            listed,
            takes: None,
        }
    }

    /// The actions' argument schemas (the discriminator removed), in the order of the actions:
    /// an action takes a field its schema (read as its target when it holds a `$ref`) declares
    /// in `properties` or matches by a pattern of `patternProperties`. A call that names no
    /// action is then told which actions take every field it sent (ERRORS.md §11.1). Without
    /// them the router does not know, and says nothing of the fields.
    ///
    /// ```
    /// use mcp_fusion::router::ActionRouter;
    /// use serde_json::json;
    ///
    /// let id = json!({"type": "object", "properties": {"id": {"type": "string"}}});
    /// let list = json!({"type": "object", "properties": {"limit": {"type": "integer"}}});
    /// let router = ActionRouter::new("billing", ["list_invoices", "get_invoice"]).schemas([&list, &id]);
    /// let err = router.route(Some(&json!({"id": "inv_1"}))).unwrap_err();
    /// assert_eq!(
    ///     router.error(&err).recovery(),
    ///     Some("Add the \"action\" field with one of the available actions and call the tool again. \
    ///           Actions that take every field you sent: billing.get_invoice.")
    /// );
    /// ```
    pub fn schemas<'s>(mut self, schemas: impl IntoIterator<Item = &'s Value>) -> Self {
        let mut takes: Vec<Takes> = schemas.into_iter().map(Takes::of).collect();
        takes.resize_with(self.qualified.len(), Takes::default);
        self.takes = Some(takes.into());
        self
    }

    /// Renames the discriminator field.
    ///
    /// ```
    /// let router = mcp_fusion::router::ActionRouter::new("deploy", ["start"]).discriminator("operation");
    /// assert_eq!(router.route(Some(&serde_json::json!({"operation": "start"}))), Ok(0));
    /// ```
    pub fn discriminator(mut self, name: impl Into<String>) -> Self {
        self.discriminator = name.into();
        self
    }

    /// The discriminator field's name.
    pub fn discriminator_name(&self) -> &str {
        &self.discriminator
    }

    /// The tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The qualified action names (`tool.action`), in declaration order.
    pub fn qualified_actions(&self) -> &[String] {
        &self.qualified
    }

    /// The index of the action a call's arguments name. Absent arguments count as `{}`.
    pub fn route(&self, arguments: Option<&Value>) -> Result<usize, RouteError> {
        let arguments = arguments.and_then(Value::as_object);
        let discriminator = arguments.and_then(|args| args.get(&self.discriminator));
        self.find(discriminator).map_err(|miss| {
            let fields = self.sent_fields(arguments).map(str::to_owned).collect();
            self.route_error(miss, fields)
        })
    }

    /// The index of the action named by the discriminator's value (`None`: the field is absent),
    /// for a call that sent no other field.
    ///
    /// ```
    /// let router = mcp_fusion::router::ActionRouter::new("billing", ["list_invoices"]);
    /// assert_eq!(router.route_value(Some(&serde_json::json!("list_invoices"))), Ok(0));
    /// ```
    pub fn route_value(&self, discriminator: Option<&Value>) -> Result<usize, RouteError> {
        self.find(discriminator)
            .map_err(|miss| self.route_error(miss, Vec::new()))
    }

    fn route_error(&self, miss: Miss<'_>, fields: Vec<String>) -> RouteError {
        match miss {
            Miss::Missing => RouteError::Missing { fields },
            Miss::NotAString(sent) => RouteError::NotAString {
                sent: sent.clone(),
                fields,
            },
            Miss::Unknown { value, closest } => RouteError::UnknownAction {
                value: value.to_owned(),
                closest,
                fields,
            },
        }
    }

    /// [`ActionRouter::route`] of a call's arguments, or the envelope explaining the failure (the
    /// same as [`ActionRouter::error`]'s, made without a [`ToolError`] or a copy of what was sent).
    pub(crate) fn route_or_render(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<usize, Envelope> {
        let discriminator = match arguments.len() {
            // A few keys are compared rather than the name hashed.
            0..=8 => arguments
                .iter()
                .find(|(key, _)| **key == self.discriminator)
                .map(|(_, value)| value),
            _ => arguments.get(&self.discriminator),
        };
        self.find(discriminator).map_err(|miss| {
            let text = self.text(miss, Sent::Arguments(Some(arguments)));
            Envelope::route(text, self.listed.clone())
        })
    }

    /// The names of the fields sent besides the discriminator, in the order sent.
    fn sent_fields<'a>(
        &'a self,
        arguments: Option<&'a Map<String, Value>>,
    ) -> impl Iterator<Item = &'a str> {
        arguments
            .into_iter()
            .flat_map(|args| args.keys())
            .map(String::as_str)
            .filter(|key| *key != self.discriminator)
    }

    /// The sentence of ERRORS.md §11.1 for a call that sent `sent`: none when it sent no other
    /// field, when every action takes them all, or when the schemas are not known.
    fn fit(&self, sent: Sent<'_>) -> Option<String> {
        let takes = self.takes.as_deref()?;
        let names: Box<dyn Iterator<Item = &str>> = match sent {
            Sent::Arguments(arguments) => Box::new(self.sent_fields(arguments)),
            Sent::Names(names) => Box::new(names.iter().map(String::as_str)),
        };
        let mut fitting = vec![true; takes.len()];
        let mut any = false;
        for name in names {
            any = true;
            for (fits, takes) in fitting.iter_mut().zip(takes) {
                *fits = *fits && takes.takes(name);
            }
        }
        if !any || fitting.iter().all(|f| *f) {
            return None;
        }
        let names: Vec<&str> = self
            .qualified
            .iter()
            .zip(&fitting)
            .filter(|(_, fits)| **fits)
            .map(|(name, _)| name.as_str())
            .collect();
        Some(fitting_sentence(names.into_iter()))
    }

    fn find<'v>(&self, discriminator: Option<&'v Value>) -> Result<usize, Miss<'v>> {
        let value = match discriminator {
            None | Some(Value::Null) => return Err(Miss::Missing),
            Some(Value::String(s)) if s.is_empty() => return Err(Miss::Missing),
            Some(Value::String(s)) => s,
            Some(other) => return Err(Miss::NotAString(other)),
        };
        if let Some(i) = self.position(value) {
            return Ok(i);
        }
        let bare = value
            .strip_prefix(self.tool.as_str())
            .and_then(|rest| rest.strip_prefix('.'));
        if let Some(i) = bare.and_then(|bare| self.position(bare)) {
            return Ok(i);
        }
        let closest = self.actions.closest(bare.unwrap_or(value));
        Err(Miss::Unknown { value, closest })
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The envelope for a routing failure, listing every action qualified.
    pub fn error(&self, err: &RouteError) -> ToolError {
        let (miss, fields) = match err {
            RouteError::Missing { fields } => (Miss::Missing, fields),
            RouteError::NotAString { sent, fields } => (Miss::NotAString(sent), fields),
            RouteError::UnknownAction {
                value,
                closest,
                fields,
            } => (
                Miss::Unknown {
                    value,
                    closest: *closest,
                },
                fields,
            ),
        };
        // Every envelope of this router lists the same actions: rendered once, shared.
        self.text(miss, Sent::Names(fields))
            .into_error(std::iter::empty::<Text>())
            .shared_actions(self.listed.clone())
    }

    /// The message and recovery of a routing failure.
    fn text(&self, miss: Miss<'_>, sent: Sent<'_>) -> RouteText {
        match miss {
            Miss::Missing => RouteText::missing(&self.discriminator, self.fit(sent).as_deref()),
            Miss::NotAString(value) => {
                RouteText::not_a_string(&self.discriminator, value, self.fit(sent).as_deref())
            }
            Miss::Unknown { value, closest } => {
                let slot = closest
                    .filter(|&i| i < self.qualified.len())
                    .unwrap_or(self.qualified.len());
                let tail = self.unknown[slot].get_or_init(|| {
                    let best = self.qualified.get(slot).map(String::as_str);
                    UnknownTail::new(&self.tool, best)
                });
                // Only when no action is close (the call then named none of them).
                let fit = match slot == self.qualified.len() {
                    true => self.fit(sent),
                    false => None,
                };
                RouteText::unknown_before(value, tail, fit.as_deref())
            }
        }
    }

    /// The text of [`ActionRouter::error`]'s envelope, for code that routes calls itself and sends
    /// the text.
    ///
    /// ```
    /// use mcp_fusion::router::{ActionRouter, RouteError};
    ///
    /// let router = ActionRouter::new("billing", ["get_invoice"]);
    /// let err = RouteError::UnknownAction { value: "get_invoise".into(), closest: Some(0), fields: vec![] };
    /// assert_eq!(router.render_error(&err), router.error(&err).render());
    /// ```
    pub fn render_error(&self, err: &RouteError) -> String {
        self.error(err).render()
    }
}
