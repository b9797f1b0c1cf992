//! The machine-readable mirror of an envelope (ERRORS.md §9): the same facts as JSON in the
//! result's `_meta`, for hosts and typed clients. Values are the plain strings, before the text's
//! escaping.
//!
//! An envelope on its way out keeps its mirror as the facts it is made of (the error itself, a
//! validation error's field lines laid out once for the text, or a routing failure's message and
//! recovery beside its router's actions), written straight to the output when the answer is
//! serialised; a `serde_json::Value` is only made when rmcp's `CallToolResult` is asked for.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::render::{self, ROUTE_TAIL};
use super::{ActionList, RouteText, ToolError};

/// The key of the mirror in a result's `_meta`: an array with one object per envelope, in the
/// order of the text blocks.
///
/// ```
/// use mcp_fusion::{ErrorCode, ToolError};
/// use mcp_fusion::client::MIRROR_KEY;
/// use mcp_fusion::rmcp::model::CallToolResult;
///
/// let result = CallToolResult::from(ToolError::new(ErrorCode::NOT_FOUND, "No invoice inv_9.").detail("requestedId", "inv_9"));
/// let mirror = &result.meta.as_ref().unwrap().0[MIRROR_KEY][0];
/// assert_eq!(mirror["code"], "NOT_FOUND");
/// assert_eq!(mirror["details"], serde_json::json!([["requestedId", "inv_9"]]));
/// ```
pub const MIRROR_KEY: &str = "dev.mcp-fusion/errors";

impl ToolError {
    /// This envelope's mirror object (ERRORS.md §9): `kind`, `code`, `severity`, `message`,
    /// and `recovery`, `actions`, `details`, `retry_after` when the envelope has them.
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// let mirror = ToolError::new(ErrorCode::RATE_LIMITED, "Slow down <now>.").retry_after(5).mirror();
    /// assert_eq!(mirror, serde_json::json!({"kind": "tool_error", "code": "RATE_LIMITED",
    ///     "severity": "error", "message": "Slow down <now>.", "retry_after": 5}));
    /// ```
    pub fn mirror(&self) -> Value {
        serde::Serialize::serialize(&ErrorMirror(self, None), serde_json::value::Serializer)
            .unwrap_or_else(|_| Value::Object(Map::new()))
    }
}

/// A tool error's mirror object, with the count of a `<contract_awareness>` block.
struct ErrorMirror<'a>(&'a ToolError, Option<usize>);

impl serde::Serialize for ErrorMirror<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ErrorMirror(err, contract_changes) = *self;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", "tool_error")?;
        map.serialize_entry("code", err.code().as_str())?;
        map.serialize_entry("severity", err.get_severity().as_str())?;
        map.serialize_entry("message", err.message())?;
        if let Some(recovery) = err.recovery() {
            map.serialize_entry("recovery", recovery)?;
        }
        if err.available_actions().len() > 0 {
            map.serialize_entry("actions", &Seq(|| err.available_actions()))?;
        }
        if err.get_details().len() > 0 {
            map.serialize_entry("details", &Seq(|| err.get_details()))?;
        }
        if let Some(secs) = err.get_retry_after() {
            map.serialize_entry("retry_after", &secs)?;
        }
        if let Some(changes) = contract_changes {
            map.serialize_entry("contract_changes", &changes)?;
        }
        map.end()
    }
}

/// The recovery line of every `<validation_error>` (ERRORS.md §5).
pub(crate) const VALIDATION_RECOVERY: &str =
    "Fix the fields above and call the tool again. Do not explain the error.";

/// What an envelope's mirror object is made of.
#[derive(Debug)]
pub(crate) enum Mirror {
    Tool(ToolError),
    Validation(FieldsMirror),
    Route(RouteMirror),
}

/// A routing failure's mirror: its message and recovery, and its router's actions.
#[derive(Debug)]
pub(crate) struct RouteMirror {
    text: RouteText,
    actions: Arc<ActionList>,
}

/// A validation error's mirror: its action, one object per `<field>` line, the `(more)` count.
#[derive(Debug)]
pub(crate) struct FieldsMirror {
    /// Boxed, to keep an [`Envelope`] (returned by value) small.
    pub(crate) action: Box<str>,
    pub(crate) fields: FieldLines,
    pub(crate) more: usize,
}

/// The `<field>` lines' mirror objects: each line's path and text as the envelope's text lays
/// them out, before escaping, one after another in one buffer (no string of its own each).
#[derive(Debug, Default)]
pub(crate) struct FieldLines {
    plain: String,
    /// Each line's start, the end of its path (the start of its text), its end, and its row.
    marks: Vec<(usize, usize, usize, super::Text)>,
    /// The lines written for several elements of one array, with their elements (behind one
    /// thin pointer, made only when there are some: an [`Envelope`] stays small, and a line of
    /// one element costs nothing more).
    grouped: Option<Box<Grouped>>,
}

/// The elements of the lines that have some: each such line's index among the lines, and where
/// its elements end in `elements`.
#[derive(Debug, Default)]
struct Grouped {
    lines: Vec<(usize, usize)>,
    elements: Vec<usize>,
}

impl FieldLines {
    /// Room for `lines` lines of a usual length.
    pub(crate) fn with_capacity(lines: usize) -> Self {
        FieldLines {
            plain: String::with_capacity(lines * 128),
            marks: Vec::with_capacity(lines),
            grouped: None,
        }
    }

    /// Where a line's path and then its text are written, after the lines before it.
    pub(crate) fn buffer(&mut self) -> &mut String {
        &mut self.plain
    }

    /// Ends the line written to the buffer since `start`, its path ending at `split`; `elements`
    /// are those it stands for (none for one).
    #[inline]
    pub(crate) fn mark(
        &mut self,
        start: usize,
        split: usize,
        problem: super::Text,
        elements: &[usize],
    ) {
        if !elements.is_empty() {
            self.group(elements);
        }
        self.marks.push((start, split, self.plain.len(), problem));
    }

    /// Keeps the elements of the line about to be marked.
    #[cold]
    fn group(&mut self, elements: &[usize]) {
        let grouped = self.grouped.get_or_insert_default();
        grouped.elements.extend_from_slice(elements);
        grouped
            .lines
            .push((self.marks.len(), grouped.elements.len()));
    }

    /// The lines' mirror objects, in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = FieldMirror<'_>> {
        let (lines, all) = match self.grouped.as_deref() {
            Some(grouped) => (&grouped.lines[..], &grouped.elements[..]),
            None => (&[][..], &[][..]),
        };
        let (mut next, mut from) = (0, 0);
        self.marks
            .iter()
            .enumerate()
            .map(move |(line, (start, split, end, problem))| {
                let elements = match lines.get(next) {
                    Some(&(at, until)) if at == line => {
                        next += 1;
                        &all[std::mem::replace(&mut from, until)..until]
                    }
                    _ => &[],
                };
                FieldMirror {
                    path: &self.plain[*start..*split],
                    elements,
                    problem,
                    text: &self.plain[*split..*end],
                }
            })
    }
}

/// One `<field>` line's mirror: its path and line as the text lays them out, before escaping,
/// and the elements it stands for (ERRORS.md §11.6).
pub(crate) struct FieldMirror<'a> {
    pub(crate) path: &'a str,
    pub(crate) elements: &'a [usize],
    pub(crate) problem: &'a str,
    pub(crate) text: &'a str,
}

impl Mirror {
    /// The mirror object, written to any serializer in the order the `Value` has its keys.
    pub(crate) fn serialize<S: Serializer>(
        &self,
        serializer: S,
        contract_changes: Option<usize>,
    ) -> Result<S::Ok, S::Error> {
        let mirror = match self {
            Mirror::Tool(err) => return ErrorMirror(err, contract_changes).serialize(serializer),
            Mirror::Route(route) => {
                let names = route.actions.names();
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("kind", "tool_error")?;
                map.serialize_entry("code", route.text.code().as_str())?;
                map.serialize_entry("severity", "error")?;
                map.serialize_entry("message", route.text.message())?;
                map.serialize_entry("recovery", route.text.recovery())?;
                if !names.is_empty() {
                    map.serialize_entry("actions", names)?;
                }
                if let Some(changes) = contract_changes {
                    map.serialize_entry("contract_changes", &changes)?;
                }
                return map.end();
            }
            Mirror::Validation(mirror) => mirror,
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", "validation_error")?;
        map.serialize_entry("code", "VALIDATION_ERROR")?;
        map.serialize_entry("severity", "error")?;
        map.serialize_entry("action", &mirror.action)?;
        map.serialize_entry("fields", &Seq(|| mirror.fields.iter()))?;
        map.serialize_entry("recovery", VALIDATION_RECOVERY)?;
        if mirror.more > 0 {
            map.serialize_entry("more", &mirror.more)?;
        }
        if let Some(changes) = contract_changes {
            map.serialize_entry("contract_changes", &changes)?;
        }
        map.end()
    }

    /// The mirror object as a JSON value.
    pub(crate) fn to_value(&self, contract_changes: Option<usize>) -> Value {
        self.serialize(serde_json::value::Serializer, contract_changes)
            .unwrap_or_else(|_| Value::Object(Map::new()))
    }
}

impl serde::Serialize for FieldMirror<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("path", &self.path)?;
        if !self.elements.is_empty() {
            map.serialize_entry("elements", self.elements)?;
        }
        map.serialize_entry("problem", &self.problem)?;
        map.serialize_entry("text", &self.text)?;
        map.end()
    }
}

/// A sequence written from an iterator, without collecting it.
struct Seq<F>(F);

impl<F, I> serde::Serialize for Seq<F>
where
    F: Fn() -> I,
    I: ExactSizeIterator,
    I::Item: serde::Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items = (self.0)();
        let mut seq = serializer.serialize_seq(Some(items.len()))?;
        for item in items {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

/// One envelope on its way out: its text, what its mirror is made of, and the result's
/// `isError`.
#[derive(Debug)]
pub(crate) struct Envelope {
    /// The text; for a routing failure, its part before the router's `<available_actions>`
    /// block (see [`Envelope::text`]), left empty when the route's own text is that part.
    text: String,
    /// Whether the text goes on with the routing failure's shared block and `</tool_error>`.
    routed: bool,
    pub(crate) mirror: Mirror,
    pub(crate) is_error: bool,
    /// How many changes a `<contract_awareness>` block in the text counts, when it has one.
    /// (A count past `u32::MAX` is written as that: an [`Envelope`] stays small.)
    pub(crate) contract_changes: Option<u32>,
}

// Results carry it by value (`Result<_, Envelope>`): under 128 bytes, clippy's bound for them.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Envelope>() < 128);

impl Envelope {
    pub(crate) fn of(err: ToolError) -> Self {
        Envelope {
            text: err.render(),
            routed: false,
            is_error: err.is_error(),
            mirror: Mirror::Tool(err),
            contract_changes: None,
        }
    }

    /// A validation error's envelope: its text and its fields' mirror.
    pub(crate) fn validation(text: String, mirror: FieldsMirror) -> Self {
        Envelope {
            text,
            routed: false,
            mirror: Mirror::Validation(mirror),
            is_error: true,
            contract_changes: None,
        }
    }

    /// A routing failure's envelope, listing its router's `actions`: the same as
    /// `Envelope::of(text.into_error(..))`, with the actions' block and their JSON made once per
    /// router rather than copied into each envelope.
    pub(crate) fn route(text: RouteText, actions: Arc<ActionList>) -> Self {
        // Without a piece to escape, the route's text is its head: nothing is written here.
        let head = match text.plain_head() {
            Some(_) => String::new(),
            None => render::route_head(&text),
        };
        Envelope {
            text: head,
            routed: true,
            mirror: Mirror::Route(RouteMirror { text, actions }),
            is_error: true,
            contract_changes: None,
        }
    }

    /// The text, or for a routing failure its head: the route's own text when it needed no
    /// escaping.
    fn head(&self) -> &str {
        match &self.mirror {
            Mirror::Route(route) if self.routed => route.text.plain_head().unwrap_or(&self.text),
            _ => &self.text,
        }
    }

    /// The whole text.
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self.shared() {
            None => Cow::Borrowed(&self.text),
            Some(list) => {
                let head = self.head();
                let mut text =
                    String::with_capacity(head.len() + list.block.len() + ROUTE_TAIL.len());
                text.push_str(head);
                text.push_str(&list.block);
                text.push_str(ROUTE_TAIL);
                Cow::Owned(text)
            }
        }
    }

    /// The whole text, owned.
    pub(crate) fn into_text(self) -> String {
        if self.shared().is_some() {
            self.text().into_owned()
        } else {
            self.text
        }
    }

    /// The whole text's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.head().len()
            + self
                .shared()
                .map_or(0, |list| list.block.len() + ROUTE_TAIL.len())
    }

    /// The routing failure's shared actions, when the text goes on with their block.
    fn shared(&self) -> Option<&ActionList> {
        match &self.mirror {
            Mirror::Route(route) if self.routed => Some(&route.actions),
            _ => None,
        }
    }

    /// Records that a `<contract_awareness>` block counting `changes` was written: `text` is
    /// now the whole text.
    pub(crate) fn with_contract_changes(mut self, text: String, changes: usize) -> Self {
        self.text = text;
        self.routed = false;
        self.contract_changes = Some(u32::try_from(changes).unwrap_or(u32::MAX));
        self
    }

    /// The code of the envelope and whether it is a warning.
    #[cfg(feature = "otel")]
    pub(crate) fn code(&self) -> (&str, bool) {
        match &self.mirror {
            Mirror::Tool(err) => (err.code().as_str(), !err.is_error()),
            Mirror::Route(route) => (route.text.code().as_str(), false),
            Mirror::Validation(_) => ("VALIDATION_ERROR", false),
        }
    }

    /// Writes the result carrying exactly this envelope (ERRORS.md §1, §9) as rmcp's
    /// `CallToolResult` serialises it, with `resultType` when `result_type`.
    pub(crate) fn serialize<S: Serializer>(
        &self,
        serializer: S,
        result_type: bool,
    ) -> Result<S::Ok, S::Error> {
        struct Content<'a>(&'a str);
        impl serde::Serialize for Content<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(1))?;
                seq.serialize_element(&TextBlock(self.0))?;
                seq.end()
            }
        }
        struct TextBlock<'a>(&'a str);
        impl serde::Serialize for TextBlock<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", self.0)?;
                map.end()
            }
        }
        struct Meta<'a>(&'a Envelope);
        impl serde::Serialize for Meta<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(MIRROR_KEY, &[Object(self.0)])?;
                map.end()
            }
        }
        struct Object<'a>(&'a Envelope);
        impl serde::Serialize for Object<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let changes = self.0.contract_changes.map(|c| c as usize);
                self.0.mirror.serialize(serializer, changes)
            }
        }
        let mut map = serializer.serialize_map(None)?;
        if result_type {
            map.serialize_entry("resultType", "complete")?;
        }
        map.serialize_entry("content", &Content(&self.text()))?;
        map.serialize_entry("isError", &self.is_error)?;
        map.serialize_entry("_meta", &Meta(self))?;
        map.end()
    }

    /// [`Envelope::serialize`] to JSON, by hand (`super::json`): the same bytes, its strings
    /// escaped faster.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>, result_type: bool) {
        use super::json::{number, string};
        out.reserve(self.len() * 2 + 256);
        if result_type {
            out.extend_from_slice(br#"{"resultType":"complete","content":[{"type":"text","text":"#);
        } else {
            out.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
        }
        match self.shared() {
            None => string(out, &self.text),
            Some(list) => {
                // The head's closing quote gives way to the block, JSON-escaped once per router,
                // and the tail (nothing in it to escape).
                string(out, self.head());
                out.pop();
                out.extend_from_slice(list.json().0);
                out.extend_from_slice(ROUTE_TAIL.as_bytes());
                out.push(b'"');
            }
        }
        out.extend_from_slice(if self.is_error {
            br#"}],"isError":true,"_meta":{"#
        } else {
            br#"}],"isError":false,"_meta":{"#
        });
        out.extend_from_slice(b"\"dev.mcp-fusion/errors\":[");
        // Keys are plain ASCII: written as they are.
        let key = |out: &mut Vec<u8>, key: &str| {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\":");
        };
        match &self.mirror {
            Mirror::Route(route) => {
                out.extend_from_slice(br#"{"kind":"tool_error","code":"#);
                string(out, route.text.code().as_str());
                out.extend_from_slice(br#","severity":"error","message":"#);
                string(out, route.text.message());
                key(out, "recovery");
                string(out, route.text.recovery());
                if !route.actions.names().is_empty() {
                    key(out, "actions");
                    out.extend_from_slice(route.actions.json().1);
                }
            }
            Mirror::Tool(err) => {
                out.extend_from_slice(br#"{"kind":"tool_error","code":"#);
                string(out, err.code().as_str());
                key(out, "severity");
                string(out, err.get_severity().as_str());
                key(out, "message");
                string(out, err.message());
                if let Some(recovery) = err.recovery() {
                    key(out, "recovery");
                    string(out, recovery);
                }
                if err.available_actions().len() > 0 {
                    key(out, "actions");
                    out.push(b'[');
                    for (i, action) in err.available_actions().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        string(out, action);
                    }
                    out.push(b']');
                }
                if err.get_details().len() > 0 {
                    key(out, "details");
                    out.push(b'[');
                    for (i, (k, v)) in err.get_details().enumerate() {
                        out.extend_from_slice(if i > 0 { b",[" } else { b"[" });
                        string(out, k);
                        out.push(b',');
                        string(out, v);
                        out.push(b']');
                    }
                    out.push(b']');
                }
                if let Some(secs) = err.get_retry_after() {
                    key(out, "retry_after");
                    number(out, u64::from(secs));
                }
            }
            Mirror::Validation(mirror) => {
                out.extend_from_slice(
                    br#"{"kind":"validation_error","code":"VALIDATION_ERROR","severity":"error","action":"#,
                );
                string(out, &mirror.action);
                key(out, "fields");
                out.push(b'[');
                for (i, field) in mirror.fields.iter().enumerate() {
                    out.extend_from_slice(if i > 0 {
                        br#",{"path":"#
                    } else {
                        br#"{"path":"#
                    });
                    string(out, field.path);
                    if !field.elements.is_empty() {
                        key(out, "elements");
                        out.push(b'[');
                        for (i, &element) in field.elements.iter().enumerate() {
                            if i > 0 {
                                out.push(b',');
                            }
                            number(out, element as u64);
                        }
                        out.push(b']');
                    }
                    key(out, "problem");
                    string(out, field.problem);
                    key(out, "text");
                    string(out, field.text);
                    out.push(b'}');
                }
                out.push(b']');
                key(out, "recovery");
                string(out, VALIDATION_RECOVERY);
                if mirror.more > 0 {
                    key(out, "more");
                    number(out, mirror.more as u64);
                }
            }
        }
        if let Some(changes) = self.contract_changes {
            key(out, "contract_changes");
            number(out, u64::from(changes));
        }
        out.extend_from_slice(b"}]}}");
    }

    /// A result carrying exactly this envelope (ERRORS.md §1, §9).
    pub(crate) fn into_result(self) -> CallToolResult {
        let mirror = self
            .mirror
            .to_value(self.contract_changes.map(|c| c as usize));
        let is_error = self.is_error;
        let content = vec![ContentBlock::text(self.into_text())];
        let mut result = if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        push(&mut result, mirror);
        result
    }
}

/// Appends one object to a result's mirror, making the array when it is the first.
pub(crate) fn push(result: &mut CallToolResult, mirror: Value) {
    let meta = result.meta.get_or_insert_with(MetaObject::new);
    match meta.0.entry(MIRROR_KEY) {
        Entry::Occupied(mut at) => match at.get_mut() {
            Value::Array(entries) => entries.push(mirror),
            other => *other = Value::Array(vec![mirror]),
        },
        Entry::Vacant(at) => {
            at.insert(Value::Array(vec![mirror]));
        }
    }
}

/// The mirror objects of a result, in order; empty when it carries none.
#[cfg(any(feature = "client", feature = "otel"))]
pub(crate) fn entries(result: &CallToolResult) -> &[Value] {
    match result.meta.as_ref().and_then(|meta| meta.0.get(MIRROR_KEY)) {
        Some(Value::Array(entries)) => entries,
        _ => &[],
    }
}
