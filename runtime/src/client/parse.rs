//! Envelope text → structured error, for clients (ERRORS.md §6). Never panics.

use roxmltree::{Document, Node, ParsingOptions};

use crate::Severity;

use crate::ToolError;
use crate::envelope::replace_forbidden;

mod index_set;

pub use index_set::IndexSet;
use index_set::{index_set, set_bracket};

/// What kind of text [`parse_envelope`] was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParsedKind {
    /// A `<tool_error>` envelope.
    ToolError,
    /// A `<validation_error>` envelope.
    ValidationError,
    /// Anything else: code `UNKNOWN`, the whole text as the message.
    NotAnEnvelope,
}

/// A re-parsed envelope: what a client learns from an error result's text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedError {
    /// Which envelope the text was.
    pub kind: ParsedKind,
    /// The `code` attribute; `VALIDATION_ERROR` for a validation error, `UNKNOWN` for other text.
    pub code: String,
    /// The severity; `error` when missing or unknown.
    pub severity: Severity,
    /// The `<message>` text; empty for a validation error; the whole text when not an envelope.
    pub message: String,
    /// The `<recovery>` text, if any.
    pub recovery: Option<String>,
    /// The available actions, in order.
    pub actions: Vec<String>,
    /// The details as `(key, value)` pairs, in order.
    pub details: Vec<(String, String)>,
    /// The retry delay in whole seconds, if any.
    pub retry_after: Option<u64>,
    /// The qualified action of a validation error (`tool/action` is read as `tool.action`).
    pub action: Option<String>,
    /// A validation error's `<field>` lines, in document order, the `(more)` line included.
    pub fields: Vec<ParsedField>,
    /// How many problems the `(more)` line says were not shown.
    pub more: Option<u64>,
    /// How many changes a `<contract_awareness>` block counts (its `changes`).
    pub contract_changes: Option<u64>,
}

/// One `<field>` line of a validation error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedField {
    /// The field's path, as the `name` attribute writes it (`lines[0].quantity`, or
    /// `lines[0-4,7].quantity` for the same problem in several elements, ERRORS.md §11.6).
    pub path: String,
    /// The indices of the elements of one array the line stands for, as ranges: those of the
    /// index set in its name (`[0-4,7]` gives 0..=4 and 7..=7), or the mirror's `elements`.
    /// Empty for a line of one element or of no array, and for a set past the envelope's
    /// budget of indices ([`parse_envelope`]), which no envelope of this project reaches.
    pub elements: IndexSet,
    /// The row of ERRORS.md §5 the line was written by (`minimum`, `enum`, ...). Only the mirror
    /// names it: `None` when the envelope was read from its text, and for the `(more)` line.
    pub problem: Option<String>,
    /// The line: `{headline}. You sent: {sent}. {expected}.`
    pub text: String,
}

impl ParsedField {
    /// The path of each element the line stands for (`lines[0].quantity`, `lines[1].quantity`,
    /// …), or its path alone when it stands for one. Made one at a time, as they are taken.
    ///
    /// ```
    /// use mcp_fusion::client::parse_envelope;
    /// let parsed = parse_envelope("<validation_error action=\"shop.add\">\n\
    ///     <field name=\"lines[0-2,5].qty\">Too small. You sent: 0. Expected a number >= 1.</field>\n\
    ///     </validation_error>");
    /// let field = &parsed.fields[0];
    /// assert_eq!(field.elements, [0, 1, 2, 5]);
    /// assert_eq!(field.elements.ranges().collect::<Vec<_>>(), [0..=2, 5..=5]);
    /// let paths: Vec<String> = field.paths().collect();
    /// assert_eq!(paths, ["lines[0].qty", "lines[1].qty", "lines[2].qty", "lines[5].qty"]);
    /// ```
    pub fn paths(&self) -> impl Iterator<Item = String> + '_ {
        let bracket = match self.elements.len() {
            0 | 1 => None,
            _ => set_bracket(&self.path),
        };
        let each = bracket.map(|(open, close)| {
            let (head, tail) = (&self.path[..open], &self.path[close..]);
            self.elements
                .iter()
                .map(move |i| format!("{head}{i}{tail}"))
        });
        let alone = bracket.is_none().then(|| self.path.clone());
        each.into_iter().flatten().chain(alone)
    }
}

/// What one envelope may cost its reader, [`parse_envelope`] and [`ParsedError::from_mirror`]
/// alike: a server, hostile or broken, cannot make a client spend more than a small multiple
/// of what it sent.
mod budget {
    /// A longer text is not read as an envelope.
    pub(super) const BYTES: usize = 4 << 20;
    /// XML nodes (elements, texts, comments) a text may hold to be read as an envelope.
    pub(super) const NODES: u32 = 1 << 17;
    /// `<field>` lines (or mirror fields) an envelope may hold to be read as one.
    pub(super) const FIELDS: usize = 4096;
    /// The indices the index sets of one envelope may name together; a set past it is read as
    /// none (its field's `elements` empty, its name as written).
    pub(super) const INDICES: u64 = 1 << 20;
}

/// Parses an error result's text. Text that is not an envelope gives code `UNKNOWN`.
///
/// Follows ERRORS.md §6: a well-formed XML document without a DTD whose root is
/// `<tool_error code="..">` with a `<message>`, or `<validation_error action="..">`. Children may
/// come in any order, the first of each wins and unknown ones are ignored. Texts come back
/// exactly as the XML parser decodes them, never trimmed (except comma-joined actions).
///
/// Reading costs a bounded multiple of the text's size, however hostile the text: a text over
/// 4 MiB, or of more than 131,072 XML nodes, or a validation error of more than 4,096 fields
/// is not read as an envelope (code `UNKNOWN`, the text as message); index sets are kept as
/// ranges, and those of one envelope name at most 2^20 indices together (a set past that
/// budget is read as none: its field's `elements` are empty, its name stays as written).
///
/// ```
/// use mcp_fusion::Severity;
/// use mcp_fusion::client::parse_envelope;
///
/// let parsed = parse_envelope("<tool_error code=\"NOT_FOUND\">\n<message>No such project.</message>\n\
///                     <retry_after>2.5 seconds</retry_after>\n</tool_error>");
/// assert_eq!(parsed.code, "NOT_FOUND");
/// assert_eq!(parsed.severity, Severity::Error);
/// assert_eq!(parsed.message, "No such project.");
/// assert_eq!(parsed.retry_after, Some(3));
///
/// let other = parse_envelope("Internal Server Error");
/// assert_eq!((other.code.as_str(), other.message.as_str()), ("UNKNOWN", "Internal Server Error"));
/// ```
#[must_use]
pub fn parse_envelope(text: &str) -> ParsedError {
    envelope(text)
        .unwrap_or_else(|NotEnvelope| blank(ParsedKind::NotAnEnvelope, "UNKNOWN", text.to_owned()))
}

/// The reason a text is not an envelope does not matter: it is reported as `UNKNOWN` either way.
struct NotEnvelope;

type Parsed<T> = Result<T, NotEnvelope>;

fn blank(kind: ParsedKind, code: &str, message: String) -> ParsedError {
    ParsedError {
        kind,
        code: code.to_owned(),
        severity: Severity::Error,
        message,
        recovery: None,
        actions: Vec::new(),
        details: Vec::new(),
        retry_after: None,
        action: None,
        fields: Vec::new(),
        more: None,
        contract_changes: None,
    }
}

fn envelope(text: &str) -> Parsed<ParsedError> {
    // Without a DTD only the five predefined entities exist, so nothing can expand unboundedly.
    if text.len() > budget::BYTES {
        return Err(NotEnvelope);
    }
    let options = ParsingOptions {
        allow_dtd: false,
        nodes_limit: budget::NODES,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options).map_err(|_| NotEnvelope)?;
    let root = doc.root().first_element_child().ok_or(NotEnvelope)?;
    if is(root, "tool_error") {
        tool_error(root)
    } else if is(root, "validation_error") {
        validation_error(root)
    } else {
        Err(NotEnvelope)
    }
}

fn tool_error(root: Node<'_, '_>) -> Parsed<ParsedError> {
    let code = attribute(root, "code")?;
    let message = text_of(first(root, "message").ok_or(NotEnvelope)?)?;
    let mut parsed = blank(ParsedKind::ToolError, code, message);
    // A missing or unknown severity is the TypeScript reference's default, `error`.
    if let Some(severity) = attribute(root, "severity").ok().and_then(Severity::parse) {
        parsed.severity = severity;
    }
    parsed.recovery = first(root, "recovery").map(text_of).transpose()?;
    if let Some(list) = first(root, "available_actions") {
        parsed.actions = actions(list)?;
    }
    if let Some(list) = first(root, "details") {
        parsed.details = pairs(list, "detail", "key")?;
    }
    if let Some(retry) = first(root, "retry_after") {
        parsed.retry_after = retry_after(&text_of(retry)?);
    }
    parsed.contract_changes = contract_changes(root);
    Ok(parsed)
}

fn validation_error(root: Node<'_, '_>) -> Parsed<ParsedError> {
    // The reference writes `tool/action`; the one separator it inserts becomes the `.` of this
    // contract, and anything after it belongs to the action name and stays as written.
    let action = attribute(root, "action")?.replacen('/', ".", 1);
    let mut parsed = blank(
        ParsedKind::ValidationError,
        "VALIDATION_ERROR",
        String::new(),
    );
    parsed.recovery = first(root, "recovery").map(text_of).transpose()?;
    parsed.action = Some(action);
    if children(root, "field").nth(budget::FIELDS).is_some() {
        return Err(NotEnvelope);
    }
    let mut indices = budget::INDICES;
    for (path, text) in pairs(root, "field", "name")? {
        // A real field named `(more)` is written `["(more)"]`: this name is only the count's.
        if path == "(more)" && parsed.more.is_none() {
            parsed.more = more_count(&text);
        }
        let elements = index_set(&path, indices).unwrap_or_default();
        indices -= elements.len();
        parsed.fields.push(ParsedField {
            path,
            elements,
            problem: None,
            text,
        });
    }
    parsed.contract_changes = contract_changes(root);
    Ok(parsed)
}

/// `k` of `{k} more problem(s) not shown. ...`.
fn more_count(line: &str) -> Option<u64> {
    let (k, rest) = line.split_once(' ')?;
    let k: u64 = k.parse().ok()?;
    (rest.starts_with("more problem")).then_some(k)
}

/// The `changes` count of a `<contract_awareness>` block (ERRORS.md §7).
fn contract_changes(root: Node<'_, '_>) -> Option<u64> {
    let block = first(root, "contract_awareness")?;
    attribute(block, "changes").ok()?.parse().ok()
}

/// `<action>` children in order, or else the reference's comma-joined text.
fn actions(list: Node<'_, '_>) -> Parsed<Vec<String>> {
    let mut items = children(list, "action").peekable();
    if items.peek().is_some() {
        return items.map(text_of).collect();
    }
    let joined: String = list
        .children()
        .filter(Node::is_text)
        .filter_map(|n| n.text())
        .collect();
    Ok(joined
        .split(',')
        .map(|a| a.trim_matches([' ', '\t', '\r', '\n']))
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
        .collect())
}

/// `(attribute, text)` of every `element` child, in document order; the attribute is required.
fn pairs(parent: Node<'_, '_>, element: &str, attr: &str) -> Parsed<Vec<(String, String)>> {
    children(parent, element)
        .map(|node| Ok((attribute(node, attr)?.to_owned(), text_of(node)?)))
        .collect()
}

/// `{n} second` or `{n} seconds`, exactly; a fraction rounds up and zero is no delay, as when
/// rendering. Digits beyond `u64` saturate.
fn retry_after(text: &str) -> Option<u64> {
    let number = text
        .strip_suffix(" seconds")
        .or_else(|| text.strip_suffix(" second"))?;
    let (whole, fraction) = match number.split_once('.') {
        Some((_, "")) => return None,
        Some(split) => split,
        None => (number, ""),
    };
    if whole.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs = whole.bytes().try_fold(0u64, |n, b| {
        b.is_ascii_digit()
            .then(|| n.saturating_mul(10).saturating_add(u64::from(b - b'0')))
    })?;
    let secs = secs.saturating_add(u64::from(fraction.bytes().any(|b| b != b'0')));
    (secs > 0).then_some(secs)
}

/// The text content of a text element. Comments and processing instructions are skipped, as
/// XML parsers do when delivering text; a child element means the text is not an envelope.
fn text_of(node: Node<'_, '_>) -> Parsed<String> {
    node.children().try_fold(String::new(), |mut out, child| {
        if child.is_element() {
            return Err(NotEnvelope);
        }
        if child.is_text() {
            out.push_str(child.text().unwrap_or_default());
        }
        Ok(out)
    })
}

/// An element named exactly `name`: no prefix, no namespace (`<x:message>` is another element).
fn is(node: Node<'_, '_>, name: &str) -> bool {
    node.is_element() && node.tag_name().namespace().is_none() && node.tag_name().name() == name
}

fn first<'a, 'input>(parent: Node<'a, 'input>, name: &str) -> Option<Node<'a, 'input>> {
    children(parent, name).next()
}

fn children<'a, 'input>(
    parent: Node<'a, 'input>,
    name: &str,
) -> impl Iterator<Item = Node<'a, 'input>> {
    parent.children().filter(move |&n| is(n, name))
}

/// An attribute without a namespace; a missing one makes the text not an envelope.
fn attribute<'a>(node: Node<'a, '_>, name: &str) -> Parsed<&'a str> {
    node.attributes()
        .find(|a| a.namespace().is_none() && a.name() == name)
        .map(|a| a.value())
        .ok_or(NotEnvelope)
}

impl From<&ToolError> for ParsedError {
    /// What [`parse_envelope`] gives back for this error's rendered text.
    fn from(err: &ToolError) -> Self {
        let clean = |text: &str| replace_forbidden(text).into_owned();
        ParsedError {
            kind: ParsedKind::ToolError,
            code: err.code().as_str().to_owned(),
            severity: err.get_severity(),
            message: clean(err.message()),
            recovery: err.recovery().map(clean),
            actions: err.available_actions().map(clean).collect(),
            details: err
                .get_details()
                .map(|(k, v)| (clean(k), clean(v)))
                .collect(),
            retry_after: err.get_retry_after().map(u64::from),
            action: None,
            fields: Vec::new(),
            more: None,
            contract_changes: None,
        }
    }
}

impl ParsedError {
    /// Reads one object of a result's mirror (ERRORS.md §9), or `None` when it is not one (a
    /// client then reads the text). Strings come back as the server sent them: characters that
    /// the text replaces with U+FFFD are kept.
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// use mcp_fusion::client::ParsedError;
    ///
    /// let err = ToolError::new(ErrorCode::NOT_FOUND, "No invoice inv_9.").actions(["billing.list_invoices"]);
    /// let parsed = ParsedError::from_mirror(&err.mirror()).unwrap();
    /// assert_eq!(parsed, mcp_fusion::client::parse_envelope(&err.render()));
    /// assert!(ParsedError::from_mirror(&serde_json::json!({"kind": "tool_error"})).is_none());
    /// ```
    #[must_use]
    pub fn from_mirror(entry: &serde_json::Value) -> Option<Self> {
        let entry = entry.as_object()?;
        let string = |key: &str| match entry.get(key) {
            None => Some(None),
            Some(value) => value.as_str().map(|s| Some(s.to_owned())),
        };
        let count = |key: &str| match entry.get(key) {
            None => Some(None),
            Some(value) => value.as_u64().map(Some),
        };
        let kind = match entry.get("kind")?.as_str()? {
            "tool_error" => ParsedKind::ToolError,
            "validation_error" => ParsedKind::ValidationError,
            _ => return None,
        };
        let message = match kind {
            ParsedKind::ToolError => string("message")??,
            _ => String::new(),
        };
        let mut parsed = blank(kind, string("code")?.as_deref()?, message);
        if let Some(severity) = string("severity")?.as_deref().and_then(Severity::parse) {
            parsed.severity = severity;
        }
        parsed.recovery = string("recovery")?;
        parsed.retry_after = count("retry_after")?;
        parsed.more = count("more")?;
        parsed.contract_changes = count("contract_changes")?;
        parsed.action = string("action")?;
        if let Some(actions) = entry.get("actions") {
            parsed.actions = actions
                .as_array()?
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
        }
        if let Some(details) = entry.get("details") {
            parsed.details = details
                .as_array()?
                .iter()
                .map(|pair| match pair.as_array()?.as_slice() {
                    [k, v] => Some((k.as_str()?.to_owned(), v.as_str()?.to_owned())),
                    _ => None,
                })
                .collect::<Option<_>>()?;
        }
        if let Some(fields) = entry.get("fields") {
            let fields = fields.as_array()?;
            if fields.len() > budget::FIELDS {
                return None;
            }
            let mut indices = budget::INDICES;
            parsed.fields = fields
                .iter()
                .map(|field| {
                    let field = field.as_object()?;
                    let text = |key: &str| field.get(key)?.as_str().map(str::to_owned);
                    let elements = match field.get("elements") {
                        None => IndexSet::new(),
                        Some(list) => {
                            let set: IndexSet = list
                                .as_array()?
                                .iter()
                                .map(serde_json::Value::as_u64)
                                .collect::<Option<_>>()?;
                            // Past the budget, as the text's reader reads it: no set.
                            if set.len() > indices {
                                IndexSet::new()
                            } else {
                                indices -= set.len();
                                set
                            }
                        }
                    };
                    Some(ParsedField {
                        path: text("path")?,
                        elements,
                        problem: match field.get("problem") {
                            None => None,
                            Some(problem) => Some(problem.as_str()?.to_owned()),
                        },
                        text: text("text")?,
                    })
                })
                .collect::<Option<_>>()?;
        }
        if let Some(k) = parsed.more {
            // The line the text writes for it (ERRORS.md §5), as a re-parse lists it (§6).
            let noun = if k == 1 { "problem" } else { "problems" };
            parsed.fields.push(ParsedField {
                path: "(more)".into(),
                elements: IndexSet::new(),
                problem: None,
                text: format!("{k} more {noun} not shown. Fix the fields above first."),
            });
        }
        Some(parsed)
    }
}

#[cfg(test)]
mod tests;
