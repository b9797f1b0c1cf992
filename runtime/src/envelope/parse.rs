//! Envelope text → structured error, for clients (ERRORS.md §6). Never panics.

use roxmltree::{Document, Node, ParsingOptions};

use crate::Severity;

use super::ToolError;

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
    /// The indices of the elements of one array the line stands for, ascending: those of the
    /// index set in its name (`[0-4,7]` gives 0, 1, 2, 3, 4, 7), or the mirror's `elements`.
    /// Empty for a line of one element or of no array (and for a set of more than 2^20
    /// indices, which no envelope of this project writes).
    pub elements: Vec<u64>,
    /// The row of ERRORS.md §5 the line was written by (`minimum`, `enum`, ...). Only the mirror
    /// names it: `None` when the envelope was read from its text, and for the `(more)` line.
    pub problem: Option<String>,
    /// The line: `{headline}. You sent: {sent}. {expected}.`
    pub text: String,
}

impl ParsedField {
    /// The path of each element the line stands for (`lines[0].quantity`, `lines[1].quantity`,
    /// …), or its path alone when it stands for one.
    ///
    /// ```
    /// use mcp_fusion::client::parse_envelope;
    /// let parsed = parse_envelope("<validation_error action=\"shop.add\">\n\
    ///     <field name=\"lines[0-2,5].qty\">Too small. You sent: 0. Expected a number >= 1.</field>\n\
    ///     </validation_error>");
    /// let field = &parsed.fields[0];
    /// assert_eq!(field.elements, [0, 1, 2, 5]);
    /// assert_eq!(field.paths(), ["lines[0].qty", "lines[1].qty", "lines[2].qty", "lines[5].qty"]);
    /// ```
    #[must_use]
    pub fn paths(&self) -> Vec<String> {
        match (self.elements.as_slice(), index_set(&self.path)) {
            ([_, _, ..], Some((open, close, _))) => self
                .elements
                .iter()
                .map(|i| format!("{}{i}{}", &self.path[..open], &self.path[close..]))
                .collect(),
            _ => vec![self.path.clone()],
        }
    }
}

/// Where the index set of a field's name is (the positions after its `[` and at its `]`), and
/// its indices, ascending, each once: the one bracket whose content begins with a digit and
/// holds `,` or `-` (ERRORS.md §11.6). `None` when the name has no such bracket, has two, or the
/// set is not one (or would give more than 2^20 indices).
fn index_set(name: &str) -> Option<(usize, usize, Vec<u64>)> {
    const MOST: u64 = 1 << 20;
    let bytes = name.as_bytes();
    let mut found = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'[' {
            i += 1;
            continue;
        }
        let open = i + 1;
        match bytes.get(open) {
            // A key in JSON string syntax: skipped whole, escapes and all.
            Some(b'"') => {
                let mut j = open + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
            }
            Some(b) if b.is_ascii_digit() => {
                let close = open + name[open..].find(']')?;
                let content = &name[open..close];
                if content.contains([',', '-']) {
                    if found.is_some() {
                        return None;
                    }
                    found = Some((open, close));
                }
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    let (open, close) = found?;
    let mut indices = Vec::new();
    for part in name[open..close].split(',') {
        let number = |s: &str| -> Option<u64> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if first > last || (indices.len() as u64).saturating_add(last - first) >= MOST {
            return None;
        }
        indices.extend(first..=last);
    }
    indices.sort_unstable();
    indices.dedup();
    Some((open, close, indices))
}

/// Parses an error result's text. Text that is not an envelope gives code `UNKNOWN`.
///
/// Follows ERRORS.md §6: a well-formed XML document without a DTD whose root is
/// `<tool_error code="..">` with a `<message>`, or `<validation_error action="..">`. Children may
/// come in any order, the first of each wins and unknown ones are ignored. Texts come back
/// exactly as the XML parser decodes them, never trimmed (except comma-joined actions).
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
    let options = ParsingOptions {
        allow_dtd: false,
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
    for (path, text) in pairs(root, "field", "name")? {
        // A real field named `(more)` is written `["(more)"]`: this name is only the count's.
        if path == "(more)" && parsed.more.is_none() {
            parsed.more = more_count(&text);
        }
        let elements = index_set(&path).map_or_else(Vec::new, |(_, _, set)| set);
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
        let e = &*err.0;
        ParsedError {
            kind: ParsedKind::ToolError,
            code: e.code.as_str().to_owned(),
            severity: e.severity,
            message: super::replace_forbidden(&e.message).into_owned(),
            recovery: e
                .recovery
                .as_deref()
                .map(|r| super::replace_forbidden(r).into_owned()),
            actions: e
                .actions
                .names()
                .iter()
                .map(|a| super::replace_forbidden(a).into_owned())
                .collect(),
            details: e
                .details
                .iter()
                .map(|(k, v)| {
                    (
                        super::replace_forbidden(k).into_owned(),
                        super::replace_forbidden(v).into_owned(),
                    )
                })
                .collect(),
            retry_after: e.retry_after.map(u64::from),
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
            parsed.fields = fields
                .as_array()?
                .iter()
                .map(|field| {
                    let field = field.as_object()?;
                    let text = |key: &str| field.get(key)?.as_str().map(str::to_owned);
                    let elements = match field.get("elements") {
                        None => Vec::new(),
                        Some(list) => list
                            .as_array()?
                            .iter()
                            .map(serde_json::Value::as_u64)
                            .collect::<Option<_>>()?,
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
                elements: Vec::new(),
                problem: None,
                text: format!("{k} more {noun} not shown. Fix the fields above first."),
            });
        }
        Some(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorCode, ToolError};

    fn not_envelope(text: &str) {
        let parsed = parse_envelope(text);
        assert_eq!(
            parsed,
            blank(ParsedKind::NotAnEnvelope, "UNKNOWN", text.to_owned()),
            "{text:?}"
        );
    }

    fn tool(body: &str) -> ParsedError {
        let parsed = parse_envelope(&format!("<tool_error code=\"X\">{body}</tool_error>"));
        assert_eq!(parsed.kind, ParsedKind::ToolError, "{body:?}");
        parsed
    }

    #[test]
    fn children_in_any_order_first_wins_unknown_ignored() {
        let parsed = parse_envelope(
            "<tool_error extra=\"1\" severity=\"critical\" code=\"C\"><retry_after>7 seconds</retry_after>\
             <unknown><message>no</message></unknown><details><detail key=\"k\">v</detail><other/></details>\
             <recovery>r1</recovery><message>m1</message><message>m2</message><recovery>r2</recovery>\
             <available_actions><action>a</action> <x/> <action>b</action></available_actions>\
             <available_actions><action>c</action></available_actions><details><detail>no key</detail></details>\
             <retry_after>1 second</retry_after><field name=\"f\">t</field></tool_error>",
        );
        let expected = ParsedError {
            severity: Severity::Critical,
            recovery: Some("r1".into()),
            actions: vec!["a".into(), "b".into()],
            details: vec![("k".into(), "v".into())],
            retry_after: Some(7),
            ..blank(ParsedKind::ToolError, "C", "m1".into())
        };
        assert_eq!(parsed, expected);
    }

    #[test]
    fn severity_missing_or_unknown_is_error() {
        assert_eq!(tool("<message/>").severity, Severity::Error);
        assert_eq!(tool("<message/>").message, "");
        let parsed =
            parse_envelope("<tool_error code=\"X\" severity=\"Warning\"><message/></tool_error>");
        assert_eq!(parsed.severity, Severity::Error);
        let parsed =
            parse_envelope("<tool_error code=\"X\" severity=\"warning\"><message/></tool_error>");
        assert_eq!(parsed.severity, Severity::Warning);
    }

    #[test]
    fn empty_recovery_element_is_an_empty_recovery() {
        assert_eq!(tool("<message/><recovery/>").recovery.as_deref(), Some(""));
        assert_eq!(tool("<message/>").recovery, None);
    }

    #[test]
    fn text_is_decoded_and_never_trimmed() {
        let parsed = tool(
            "<message> a&#13;\r\nb\rc <![CDATA[<b>]]>&#x1F600;&amp;amp;<!--note-->d </message>\
             <recovery>\n\tr\n</recovery><details><detail key=\" k&#9;\"> v </detail></details>",
        );
        assert_eq!(parsed.message, " a\r\nb\nc <b>\u{1F600}&amp;d ");
        assert_eq!(parsed.recovery.as_deref(), Some("\n\tr\n"));
        assert_eq!(parsed.details, [(" k\t".to_owned(), " v ".to_owned())]);
    }

    #[test]
    fn comma_joined_actions_are_split_and_trimmed() {
        let parsed = tool(
            "<message/><available_actions> list,\r\n\tcreate ,, ,delete\t,</available_actions>",
        );
        assert_eq!(parsed.actions, ["list", "create", "delete"]);
        assert!(
            tool("<message/><available_actions> </available_actions>")
                .actions
                .is_empty()
        );
        // Entries of an `<action>` list are taken as written.
        let parsed =
            tool("<message/><available_actions>x,y<action> a </action></available_actions>");
        assert_eq!(parsed.actions, [" a "]);
    }

    #[test]
    fn retry_after_variants() {
        let secs = |text: &str| retry_after(text);
        assert_eq!(secs("1 second"), Some(1));
        assert_eq!(secs("30 seconds"), Some(30));
        assert_eq!(secs("2 second"), Some(2));
        assert_eq!(secs("2.5 seconds"), Some(3));
        assert_eq!(secs("0.001 seconds"), Some(1));
        assert_eq!(secs("4.000 seconds"), Some(4));
        assert_eq!(secs("0 seconds"), None);
        assert_eq!(secs("0.0 seconds"), None);
        assert_eq!(secs("18446744073709551615 seconds"), Some(u64::MAX));
        assert_eq!(secs("18446744073709551615.5 seconds"), Some(u64::MAX));
        assert_eq!(secs("99999999999999999999999999 seconds"), Some(u64::MAX));
        for garbage in [
            "",
            "5",
            "seconds",
            " seconds",
            "-1 seconds",
            "+1 seconds",
            "1e3 seconds",
            ".5 seconds",
            "5. seconds",
            "1.2.3 seconds",
            " 5 seconds",
            "5 seconds ",
            "5  seconds",
            "5 Seconds",
            "5 minutes",
            "５ seconds",
            "soon",
        ] {
            assert_eq!(secs(garbage), None, "{garbage:?}");
        }
        assert_eq!(
            tool("<message/><retry_after>2.5 seconds</retry_after>").retry_after,
            Some(3)
        );
        assert_eq!(
            tool("<message/><retry_after>later</retry_after>").retry_after,
            None
        );
    }

    #[test]
    fn index_sets_in_field_names() {
        let set = |name: &str| index_set(name).map(|(_, _, set)| set);
        assert_eq!(
            set("lines[0-4,7,9].quantity"),
            Some(vec![0, 1, 2, 3, 4, 7, 9])
        );
        assert_eq!(set("matrix[1][0,2]"), Some(vec![0, 2]));
        assert_eq!(
            set("[\"line items\"][0-2][\"unit price\"]"),
            Some(vec![0, 1, 2])
        );
        // A key in brackets may hold anything, quotes and brackets included.
        assert_eq!(set("[\"a,b-c\"][3,4]"), Some(vec![3, 4]));
        assert_eq!(set("[\"x\\\"]1,2\"][3,4]"), Some(vec![3, 4]));
        // Not a set: one index, none, two sets, a backwards run, an empty part, too many.
        for name in [
            "lines[3].quantity",
            "(root)",
            "(more)",
            "a[0,1][2,3]",
            "a[9-1]",
            "a[1,,2]",
            "a[1-]",
            "a[0-18446744073709551615]",
            "a[0,1",
        ] {
            assert_eq!(set(name), None, "{name}");
        }
    }

    #[test]
    fn validation_error_fields_and_action() {
        let parsed = parse_envelope(
            "<validation_error action=\"users/create/v2\" severity=\"warning\"><message>ignored</message>\
             <field name=\"a\">one</field><recovery>fix</recovery><field name=\"(more)\">1 more problem</field>\
             <contract_awareness changes=\"3\"><change field=\"x\"><description>d</description></change></contract_awareness>\
             </validation_error>",
        );
        let field = |path: &str, text: &str| ParsedField {
            path: path.into(),
            elements: Vec::new(),
            problem: None,
            text: text.into(),
        };
        let expected = ParsedError {
            recovery: Some("fix".into()),
            action: Some("users.create/v2".into()),
            fields: vec![field("a", "one"), field("(more)", "1 more problem")],
            more: Some(1),
            contract_changes: Some(3),
            ..blank(
                ParsedKind::ValidationError,
                "VALIDATION_ERROR",
                String::new(),
            )
        };
        assert_eq!(parsed, expected);
        assert_eq!(
            parse_envelope("<validation_error action=\"billing.x\"/>")
                .action
                .as_deref(),
            Some("billing.x")
        );
    }

    #[test]
    fn texts_that_are_not_envelopes() {
        for text in [
            "",
            "Internal Server Error",
            "<tool_error code=\"X\"><message>cut",
            "<tool_error code=\"X\"><message>a\0b</message></tool_error>",
            "<tool_error code=\"X\"><message>\u{FFFF}</message></tool_error>",
            "<tool_error code=\"X\"><message>&bogus;</message></tool_error>",
            "<tool_error><message>no code</message></tool_error>",
            "<tool_error code=\"X\"><recovery>no message</recovery></tool_error>",
            "<tool_error code=\"X\"><message><b>x</b></message></tool_error>",
            "<tool_error code=\"X\"><message/><recovery>a<i/></recovery></tool_error>",
            "<tool_error code=\"X\"><message/><available_actions><action><b/></action></available_actions></tool_error>",
            "<tool_error code=\"X\"><message/><details><detail>v</detail></details></tool_error>",
            "<tool_error code=\"X\"><message/><details><detail key=\"k\"><b/></detail></details></tool_error>",
            "<tool_error code=\"X\"><message/><retry_after><n>5</n> seconds</retry_after></tool_error>",
            "<tool_error x:code=\"X\" xmlns:x=\"urn:x\"><message/></tool_error>",
            "<tool_error code=\"X\"><x:message xmlns:x=\"urn:x\"/></tool_error>",
            "<tool_error xmlns=\"urn:x\" code=\"X\"><message/></tool_error>",
            "<validation_error action=\"a.b\"><field>no name</field></validation_error>",
            "<validation_error action=\"a.b\"><field name=\"f\">x<b/></field></validation_error>",
            "<validation_error><field name=\"f\">no action</field></validation_error>",
            "<error><message>nope</message></error>",
            "<!DOCTYPE tool_error><tool_error code=\"X\"><message/></tool_error>",
            "<!DOCTYPE t [<!ENTITY e \"x\">]><tool_error code=\"X\"><message>&e;</message></tool_error>",
            "<tool_error code=\"X\"><message/></tool_error><tool_error code=\"Y\"><message/></tool_error>",
            "<tool_error code=\"X\" code=\"Y\"><message/></tool_error>",
        ] {
            not_envelope(text);
        }
    }

    #[test]
    fn prolog_and_whitespace_around_the_root_are_fine() {
        let parsed = parse_envelope(
            "<?xml version=\"1.0\"?>\n<!-- c --><tool_error code=\"X\"><message>m</message></tool_error>\n",
        );
        assert_eq!(parsed, blank(ParsedKind::ToolError, "X", "m".into()));
    }

    #[test]
    fn every_truncation_is_not_an_envelope() {
        let text = ToolError::new(ErrorCode::CONFLICT, "Paid \u{1F600}.")
            .suggest("r")
            .actions(["a.b"])
            .detail("k", "v")
            .retry_after(5)
            .render();
        for (cut, _) in text.char_indices().skip(1) {
            not_envelope(&text[..cut]);
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 100_000;
        let text = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
        assert_eq!(parse_envelope(&text).code, "UNKNOWN");
        let text = format!(
            "<tool_error code=\"X\"><message/>{}{}</tool_error>",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        );
        assert_eq!(parse_envelope(&text).kind, ParsedKind::ToolError);
    }

    #[test]
    fn rendered_errors_round_trip() {
        let hostile = "a]]>b ]]]> </message><recovery>x &amp; \r\n\r\t\u{1F600} \0 \u{B}\u{FFFE}\u{FFFF} \"'<>";
        let errors = [
            ToolError::new(ErrorCode::NOT_FOUND, ""),
            ToolError::new(ErrorCode::RATE_LIMITED, "slow")
                .retry_after(1)
                .warning(),
            ToolError::new(ErrorCode::SERVER_BUSY, "busy")
                .retry_after(u32::MAX)
                .critical(),
            ToolError::new(
                ErrorCode::custom("HOSTILE_1").unwrap_or(ErrorCode::CONFLICT),
                hostile,
            )
            .suggest(hostile)
            .actions([hostile, "billing.list", " spaced , comma "])
            .detail(hostile, hostile)
            .detail("", "")
            .detail("k", "\r")
            .retry_after(2.5),
        ];
        for err in &errors {
            assert_eq!(
                parse_envelope(&err.render()),
                ParsedError::from(err),
                "{}",
                err.render()
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_without_panic(text in "(?s).*") {
            let _ = parse_envelope(&text);
        }

        #[test]
        fn arbitrary_errors_round_trip(
            message in "(?s).*",
            recovery in "(?s).*",
            actions in proptest::collection::vec("(?s).*", 0..4),
            details in proptest::collection::vec(("(?s).*", "(?s).*"), 0..4),
            retry in proptest::option::of(proptest::num::u32::ANY),
        ) {
            let mut err = ToolError::new(ErrorCode::CONFLICT, message).suggest(recovery).actions(actions).details(details);
            if let Some(secs) = retry {
                err = err.retry_after(secs);
            }
            proptest::prop_assert_eq!(parse_envelope(&err.render()), ParsedError::from(&err));
        }
    }
}
