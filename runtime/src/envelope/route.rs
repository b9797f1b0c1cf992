//! The text of a routing failure (MISSING_DISCRIMINATOR, UNKNOWN_ACTION, ERRORS.md §4), laid
//! out once per router, and the §11.1 sentence of the actions that fit a call.

use serde_json::Value;

use super::escape;
use super::text::Text;
use super::text::{cut, push_escaped, sent as sent_text};
use super::tool_error::ToolError;
use crate::ErrorCode;

const CHOOSE_ACTION: &str = "Choose one of the available actions and call the tool again.";
const ADD_DISCRIMINATOR: &str = "with one of the available actions and call the tool again.";
const FIT_SOME: &str = "Actions that take every field you sent: ";
const FIT_NONE: &str = "No action takes every field you sent.";

/// The sentence of ERRORS.md §11.1 for a call that sent fields some but not all actions take:
/// `Actions that take every field you sent: {fitting}.` (the qualified names, at most 20, then
/// `, ...` and no period), or `No action takes every field you sent.` for none.
pub(crate) fn fitting_sentence<'a>(fitting: impl ExactSizeIterator<Item = &'a str>) -> String {
    if fitting.len() == 0 {
        return FIT_NONE.to_owned();
    }
    let mut out = String::from(FIT_SOME);
    for (i, name) in fitting.enumerate() {
        if i == 20 {
            out.push_str(", ...");
            return out;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(name);
    }
    out.push('.');
    out
}

/// The message and recovery of a routing failure (MISSING_DISCRIMINATOR, UNKNOWN_ACTION), laid
/// out in one buffer between the markup of the envelope's head: when no piece needs escaping,
/// the buffer is the head as `<tool_error>` writes it, and a rejected call's envelope is made
/// from it without another string (`Envelope::route`); a router's [`ToolError`] through
/// [`RouteText::into_error`].
#[derive(Debug)]
pub(crate) struct RouteText {
    /// UNKNOWN_ACTION, else MISSING_DISCRIMINATOR (a flag, to keep an `Envelope` small).
    unknown: bool,
    /// Whether the text holds a byte XML text escapes: only what was sent and the names are
    /// looked at, the fixed wording around them having none.
    needs_escape: bool,
    head: String,
    message_end: usize,
}

/// What the head holds around the message and the recovery.
const MESSAGE_START: [&str; 2] = [
    "<tool_error code=\"MISSING_DISCRIMINATOR\" severity=\"error\">\n<message>",
    "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">\n<message>",
];
const MESSAGE_END: &str = "</message>\n<recovery>";
const RECOVERY_END: &str = "</recovery>\n";

/// What follows the value sent in an UNKNOWN_ACTION head, for one tool and one suggestion (or
/// none): the rest of the message, the recovery, the markup between and after them.
#[derive(Debug, Clone)]
pub(crate) struct UnknownTail {
    text: Box<str>,
    /// Where the message ends in `text`.
    message_len: usize,
    /// Where the recovery ends in `text` (a sentence of §11.1 may follow it there).
    recovery_len: usize,
    /// Whether the recovery suggests a close action.
    suggests: bool,
    /// Whether the tool's or the suggestion's name holds a byte XML text escapes.
    needs_escape: bool,
}

impl UnknownTail {
    pub(crate) fn new(tool: &str, closest: Option<&str>) -> Self {
        let capacity = tool.len() + closest.map_or(0, str::len) + CHOOSE_ACTION.len() + 96;
        let mut text = String::with_capacity(capacity);
        text.push_str("\" does not exist on tool \"");
        text.push_str(tool);
        text.push_str("\".");
        let message_len = text.len();
        text.push_str(MESSAGE_END);
        if let Some(best) = closest {
            text.push_str("Did you mean \"");
            text.push_str(best);
            text.push_str("\"? ");
        }
        text.push_str(CHOOSE_ACTION);
        let recovery_len = text.len();
        text.push_str(RECOVERY_END);
        UnknownTail {
            text: text.into(),
            message_len,
            recovery_len,
            suggests: closest.is_some(),
            needs_escape: [Some(tool), closest]
                .into_iter()
                .flatten()
                .any(|name| !escape::is_plain_text(name)),
        }
    }
}

impl RouteText {
    fn new(code: &ErrorCode, capacity: usize) -> Self {
        let unknown = *code == ErrorCode::UNKNOWN_ACTION;
        let start = MESSAGE_START[usize::from(unknown)];
        let mut head = String::with_capacity(start.len() + capacity + 64);
        head.push_str(start);
        RouteText {
            unknown,
            needs_escape: false,
            head,
            message_end: 0,
        }
    }

    pub(crate) fn code(&self) -> &'static ErrorCode {
        static UNKNOWN: ErrorCode = ErrorCode::UNKNOWN_ACTION;
        static MISSING: ErrorCode = ErrorCode::MISSING_DISCRIMINATOR;
        if self.unknown { &UNKNOWN } else { &MISSING }
    }

    /// Appends fixed wording.
    fn fixed(&mut self, wording: &str) {
        self.head.push_str(wording);
    }

    /// Appends a piece of text that is not fixed wording.
    fn push(&mut self, piece: &str) {
        self.needs_escape |= !escape::is_plain_text(piece);
        self.head.push_str(piece);
    }

    pub(crate) fn needs_escape(&self) -> bool {
        self.needs_escape
    }

    /// Ends the message: what is written next is the recovery.
    fn end_message(&mut self) {
        self.message_end = self.head.len();
        self.head.push_str(MESSAGE_END);
    }

    /// Ends the recovery, and the head with it.
    fn finish(mut self) -> Self {
        self.head.push_str(RECOVERY_END);
        self
    }

    pub(crate) fn message(&self) -> &str {
        &self.head[MESSAGE_START[usize::from(self.unknown)].len()..self.message_end]
    }

    pub(crate) fn recovery(&self) -> &str {
        &self.head[self.message_end + MESSAGE_END.len()..self.head.len() - RECOVERY_END.len()]
    }

    /// The envelope's head, when no piece needed escaping: the buffer as it is.
    pub(crate) fn plain_head(&self) -> Option<&str> {
        (!self.needs_escape).then_some(self.head.as_str())
    }

    /// The discriminator is absent, `null` or `""`; `fit` is the sentence of §11.1, if the
    /// call has one.
    pub(crate) fn missing(discriminator: &str, fit: Option<&str>) -> Self {
        let mut text = RouteText::new(
            &ErrorCode::MISSING_DISCRIMINATOR,
            2 * discriminator.len() + 112 + fit.map_or(0, str::len),
        );
        text.fixed("The required field \"");
        text.push(discriminator);
        text.fixed("\" is missing.");
        text.end_message();
        text.add_discriminator(discriminator);
        text.add_fit(fit);
        text.finish()
    }

    /// The discriminator is there but is not a string.
    pub(crate) fn not_a_string(discriminator: &str, sent: &Value, fit: Option<&str>) -> Self {
        let mut text = RouteText::new(
            &ErrorCode::MISSING_DISCRIMINATOR,
            2 * discriminator.len() + 192 + fit.map_or(0, str::len),
        );
        text.fixed("The field \"");
        text.push(discriminator);
        text.fixed("\" must be a string naming an action; you sent ");
        text.push(&sent_text(sent));
        // No period after a value cut with `...` (ERRORS.md §4).
        if !text.head.ends_with("...") {
            text.fixed(".");
        }
        text.end_message();
        text.add_discriminator(discriminator);
        text.add_fit(fit);
        text.finish()
    }

    /// `value` (as sent) names no action of `tool`; `closest` is the close action's qualified
    /// name, if any.
    pub(crate) fn unknown(tool: &str, value: &str, closest: Option<&str>) -> Self {
        RouteText::unknown_before(value, &UnknownTail::new(tool, closest), None)
    }

    /// [`RouteText::unknown`], with what follows the value made ahead (a router keeps them);
    /// `fit` is the sentence of §11.1, written only when no action is close.
    pub(crate) fn unknown_before(value: &str, tail: &UnknownTail, fit: Option<&str>) -> Self {
        // An action close to the value keeps the recovery of §4: the call named one, misspelt.
        let fit = fit.filter(|_| !tail.suggests);
        let capacity = value.len() + tail.text.len() + fit.map_or(0, |f| f.len() + 1);
        let mut text = RouteText::new(&ErrorCode::UNKNOWN_ACTION, capacity);
        text.fixed("The action \"");
        let start = text.head.len();
        push_json_inside(&mut text.head, value);
        text.needs_escape = tail.needs_escape || !escape::is_plain_text(&text.head[start..]);
        text.message_end = text.head.len() + tail.message_len;
        match fit {
            None => text.fixed(&tail.text),
            Some(fit) => {
                text.fixed(&tail.text[..tail.recovery_len]);
                text.add_fit(Some(fit));
                text.fixed(&tail.text[tail.recovery_len..]);
            }
        }
        text
    }

    /// The sentence of §11.1 after the recovery, separated by one space.
    fn add_fit(&mut self, fit: Option<&str>) {
        if let Some(fit) = fit {
            self.fixed(" ");
            self.push(fit);
        }
    }

    fn add_discriminator(&mut self, discriminator: &str) {
        self.fixed("Add the \"");
        // Looked at when it was written into the message.
        self.fixed(discriminator);
        self.fixed("\" field ");
        self.fixed(ADD_DISCRIMINATOR);
    }

    /// The same envelope as a [`ToolError`], listing `actions`.
    pub(crate) fn into_error<I>(self, actions: I) -> ToolError
    where
        I: IntoIterator,
        I::Item: Into<Text>,
    {
        let (code, recovery) = (self.code().clone(), self.recovery().to_owned());
        ToolError::new(code, self.message().to_owned())
            .suggest(recovery)
            .actions(actions)
    }
}

/// An echoed name (§4): cut as a sent string, then written as the inside of a JSON string.
fn push_json_inside(out: &mut String, value: &str) {
    let (kept, was_cut) = cut(value);
    push_escaped(out, kept, '"');
    if was_cut {
        out.push_str("...");
    }
}
