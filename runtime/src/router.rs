//! Discriminator dispatch (ERRORS.md §4): which action a call names, or why it names none.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::ToolError;
use crate::closest::Names;
use crate::envelope::{ActionList, Envelope, RouteText, UnknownTail};
use crate::errors::Text;
use crate::hash::FoldState;

/// The actions of a grouped tool and the field that selects one.
///
/// ```
/// use mcp_fusion::router::{Router, RouteError};
/// use serde_json::json;
///
/// let router = Router::new("billing", ["list_invoices", "get_invoice"]);
/// assert_eq!(router.route(Some(&json!({"action": "billing.get_invoice"}))), Ok(1));
/// let err = router.route(Some(&json!({"action": "get_invoise"}))).unwrap_err();
/// assert_eq!(err, RouteError::UnknownAction { value: "get_invoise".into(), closest: Some(1) });
/// assert_eq!(router.error(&err).recovery(), Some("Did you mean \"billing.get_invoice\"? Choose one of the available actions and call the tool again."));
/// ```
#[derive(Debug, Clone)]
pub struct Router {
    tool: String,
    discriminator: String,
    /// The bare names, prepared for the closest-name search.
    actions: Names,
    qualified: Vec<String>,
    /// The qualified names with their `<available_actions>` block, shared by every envelope.
    listed: Arc<ActionList>,
    /// Each bare name's position.
    index: HashMap<String, usize, FoldState>,
    /// What follows the value in an UNKNOWN_ACTION head, suggesting each action (then none),
    /// made the first time it is needed.
    unknown: Arc<[OnceLock<UnknownTail>]>,
}

/// Why a call names no action.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RouteError {
    /// The discriminator is absent, `null` or `""`.
    Missing,
    /// The discriminator is not a string.
    NotAString(Value),
    /// The discriminator names no action; `closest` indexes a close one.
    UnknownAction {
        /// The value as sent.
        value: String,
        /// The index of the closest action, if one is close.
        closest: Option<usize>,
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

impl Router {
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
        let mut index = HashMap::with_capacity_and_hasher(actions.len(), FoldState::default());
        for (i, action) in actions.iter().enumerate() {
            // The first of two equal names wins, as a search in declaration order would.
            index.entry(action.clone()).or_insert(i);
        }
        Router {
            unknown: (0..=actions.len()).map(|_| OnceLock::new()).collect(),
            tool,
            discriminator: "action".into(),
            index,
            actions: Names::new(&actions),
            qualified,
            listed,
        }
    }

    /// Renames the discriminator field.
    ///
    /// ```
    /// let router = mcp_fusion::router::Router::new("deploy", ["start"]).discriminator("operation");
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
        self.route_value(arguments.and_then(|args| args.get(&self.discriminator)))
    }

    /// The index of the action named by the discriminator's value (`None`: the field is absent).
    ///
    /// ```
    /// let router = mcp_fusion::router::Router::new("billing", ["list_invoices"]);
    /// assert_eq!(router.route_value(Some(&serde_json::json!("list_invoices"))), Ok(0));
    /// ```
    pub fn route_value(&self, discriminator: Option<&Value>) -> Result<usize, RouteError> {
        self.find(discriminator).map_err(|miss| match miss {
            Miss::Missing => RouteError::Missing,
            Miss::NotAString(sent) => RouteError::NotAString(sent.clone()),
            Miss::Unknown { value, closest } => RouteError::UnknownAction {
                value: value.to_owned(),
                closest,
            },
        })
    }

    /// [`Router::route_value`], or the envelope explaining the failure (the same as
    /// [`Router::error`]'s, made without a [`ToolError`] or a copy of what was sent).
    pub(crate) fn route_or_render(&self, discriminator: Option<&Value>) -> Result<usize, Envelope> {
        self.find(discriminator)
            .map_err(|miss| Envelope::route(self.text(miss), self.listed.clone()))
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
        let miss = match err {
            RouteError::Missing => Miss::Missing,
            RouteError::NotAString(sent) => Miss::NotAString(sent),
            RouteError::UnknownAction { value, closest } => Miss::Unknown {
                value,
                closest: *closest,
            },
        };
        // Every envelope of this router lists the same actions: rendered once, shared.
        self.text(miss)
            .into_error(std::iter::empty::<Text>())
            .shared_actions(self.listed.clone())
    }

    /// The message and recovery of a routing failure.
    fn text(&self, miss: Miss<'_>) -> RouteText {
        match miss {
            Miss::Missing => RouteText::missing(&self.discriminator),
            Miss::NotAString(sent) => RouteText::not_a_string(&self.discriminator, sent),
            Miss::Unknown { value, closest } => {
                let slot = closest
                    .filter(|&i| i < self.qualified.len())
                    .unwrap_or(self.qualified.len());
                let tail = self.unknown[slot].get_or_init(|| {
                    let best = self.qualified.get(slot).map(String::as_str);
                    UnknownTail::new(&self.tool, best)
                });
                RouteText::unknown_before(value, tail)
            }
        }
    }

    /// The text of [`Router::error`]'s envelope, for code that routes calls itself and sends
    /// the text.
    ///
    /// ```
    /// use mcp_fusion::router::{Router, RouteError};
    ///
    /// let router = Router::new("billing", ["get_invoice"]);
    /// let err = RouteError::UnknownAction { value: "get_invoise".into(), closest: Some(0) };
    /// assert_eq!(router.render_error(&err), router.error(&err).render());
    /// ```
    pub fn render_error(&self, err: &RouteError) -> String {
        self.error(err).render()
    }
}
