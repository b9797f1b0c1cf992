//! `<contract_awareness>` (ERRORS.md §7): what changed in an action's contract since it was
//! locked, injected into its validation errors.

use std::fmt;

use crate::envelope::{escape_attr as attr, escape_text as text};

/// How much a contract change can break a caller that learned the old contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChangeSeverity {
    /// Old calls now fail.
    Breaking,
    /// Old calls may fail or behave differently.
    Risky,
    /// Old calls still work.
    Safe,
    /// Nothing a call can notice (descriptions).
    Cosmetic,
}

impl ChangeSeverity {
    /// `BREAKING`, `RISKY`, `SAFE` or `COSMETIC`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChangeSeverity::Breaking => "BREAKING",
            ChangeSeverity::Risky => "RISKY",
            ChangeSeverity::Safe => "SAFE",
            ChangeSeverity::Cosmetic => "COSMETIC",
        }
    }

    /// Whether a change of this severity is shown to the model (§7: BREAKING or RISKY).
    pub(crate) const fn reaches_the_model(self) -> bool {
        matches!(self, ChangeSeverity::Breaking | ChangeSeverity::Risky)
    }

    /// Reads `BREAKING`, `RISKY`, `SAFE` or `COSMETIC`.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Breaking, Self::Risky, Self::Safe, Self::Cosmetic]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

impl fmt::Display for ChangeSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change between the locked contract and the running one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContractChange {
    /// How much it can break.
    pub severity: ChangeSeverity,
    /// What changed (free text, usually a field path).
    pub field: String,
    /// The change in words.
    pub description: String,
    /// The old value, when known.
    pub before: Option<String>,
    /// The new value, when known.
    pub after: Option<String>,
    /// The qualified action it belongs to, or `None` for the tool as a whole.
    pub action: Option<String>,
}

impl ContractChange {
    /// A change of the whole tool: `field` changed, said in words by `description`.
    ///
    /// ```
    /// use mcp_fusion::contract::{ChangeSeverity, ContractChange};
    /// let change = ContractChange::new(ChangeSeverity::Breaking, "currency", "The field \"currency\" was added and is required.")
    ///     .of_action("billing.create_invoice")
    ///     .after("one of: 'EUR', 'USD'");
    /// assert_eq!(change.action.as_deref(), Some("billing.create_invoice"));
    /// ```
    pub fn new(
        severity: ChangeSeverity,
        field: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        ContractChange {
            severity,
            field: field.into(),
            description: description.into(),
            before: None,
            after: None,
            action: None,
        }
    }

    /// The change belongs to this qualified action (`billing.create_invoice`).
    pub fn of_action(mut self, action: impl Into<String>) -> Self {
        self.action = Some(action.into());
        self
    }

    /// The old value.
    pub fn before(mut self, before: impl Into<String>) -> Self {
        self.before = Some(before.into());
        self
    }

    /// The new value.
    pub fn after(mut self, after: impl Into<String>) -> Self {
        self.after = Some(after.into());
        self
    }
}

/// How many changes a block shows unless configured otherwise.
pub const DEFAULT_MAX_CHANGES: usize = 5;

/// Adds the `<contract_awareness>` block to a `<validation_error>` of `action`, just before its
/// closing tag, when a BREAKING or RISKY change belongs to that action or to the whole tool.
/// Any other envelope, or one with no such change, comes back unchanged.
///
/// ```
/// use mcp_fusion::contract::{ChangeSeverity, ContractChange, inject_contract_awareness};
/// let envelope = "<validation_error action=\"billing.create_invoice\">\n<recovery>Fix it.</recovery>\n</validation_error>";
/// let changes = [ContractChange::new(ChangeSeverity::Breaking, "currency", "The field \"currency\" is now required.")
///     .of_action("billing.create_invoice")];
/// let text = inject_contract_awareness(envelope, "billing.create_invoice", &changes, 5);
/// assert!(text.contains("<contract_awareness action=\"billing.create_invoice\" changes=\"1\" max_severity=\"BREAKING\">"));
/// assert!(text.ends_with("</contract_awareness>\n</validation_error>"));
/// ```
pub fn inject_contract_awareness(
    envelope: &str,
    action: &str,
    changes: &[ContractChange],
    max: usize,
) -> String {
    awareness_of_invalid(envelope, action, changes, max)
        .map_or_else(|| envelope.to_owned(), |(text, _)| text)
}

/// [`inject_contract_awareness`], with the number of qualifying changes the block counts; `None`
/// when no block is written.
pub(crate) fn awareness_of_invalid(
    envelope: &str,
    action: &str,
    changes: &[ContractChange],
    max: usize,
) -> Option<(String, usize)> {
    inject(envelope, "validation_error", action, changes, max)
}

/// The UNKNOWN_ACTION envelope of an action that the lockfile has and the running contract
/// removed, with that action's `<contract_awareness>` block just before `</tool_error>`
/// (ERRORS.md §4), and the number of changes it counts; `None` for any other envelope.
pub(crate) fn inject_removed_action(
    envelope: &str,
    action: &str,
    changes: &[ContractChange],
    max: usize,
) -> Option<(String, usize)> {
    if !envelope.starts_with("<tool_error code=\"UNKNOWN_ACTION\"")
        || !changes.iter().any(|c| c.action.as_deref() == Some(action))
    {
        return None;
    }
    inject(envelope, "tool_error", action, changes, max)
}

fn inject(
    envelope: &str,
    root: &str,
    action: &str,
    changes: &[ContractChange],
    max: usize,
) -> Option<(String, usize)> {
    let close = format!("</{root}>");
    let body = envelope
        .strip_suffix(close.as_str())
        .filter(|_| envelope.starts_with('<') && envelope[1..].starts_with(root))
        .filter(|_| envelope[1 + root.len()..].starts_with(' '))?;
    let mut qualifying: Vec<&ContractChange> = changes
        .iter()
        .filter(|c| c.severity.reaches_the_model())
        .filter(|c| c.action.as_deref().is_none_or(|a| a == action))
        .collect();
    // Stable: ties keep the order the diff produced. `str` orders by scalar value.
    qualifying.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.field.cmp(&b.field))
    });
    let first = qualifying.first()?;

    let mut out = String::with_capacity(envelope.len() + 400 + 200 * qualifying.len().min(max));
    out.push_str(body);
    out.push_str("<contract_awareness action=\"");
    attr(&mut out, action);
    out.push_str("\" changes=\"");
    out.push_str(&qualifying.len().to_string());
    out.push_str("\" max_severity=\"");
    out.push_str(first.severity.as_str());
    out.push_str("\">\n  <system_note>");
    text(
        &mut out,
        &format!(
            "The contract of \"{action}\" changed since it was last locked. Arguments learned from the old contract may no longer be valid."
        ),
    );
    out.push_str("</system_note>\n");
    for change in qualifying.iter().take(max) {
        out.push_str("  <change severity=\"");
        out.push_str(change.severity.as_str());
        out.push_str("\" field=\"");
        attr(&mut out, &change.field);
        out.push_str("\">\n    <description>");
        text(&mut out, &change.description);
        out.push_str("</description>\n");
        for (tag, value) in [("before", &change.before), ("after", &change.after)] {
            if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                out.push_str("    <");
                out.push_str(tag);
                out.push('>');
                text(&mut out, value);
                out.push_str("</");
                out.push_str(tag);
                out.push_str(">\n");
            }
        }
        out.push_str("  </change>\n");
    }
    out.push_str("</contract_awareness>\n");
    out.push_str(&close);
    Some((out, qualifying.len()))
}
