//! From a parsed envelope back to the caller's own error type: the [`FromEnvelope`] trait, and
//! the reading of a message template that `#[tool_error(from_envelope)]` generates calls to.

use std::str::FromStr;

use super::{ParsedError, ParsedKind};
use crate::ErrorCode;
use crate::ToolError;

/// An error type a client can make from an envelope it received: the inverse of
/// `Into<ToolError>`, for callers of a tool. `#[derive(ToolErrors)]` implements it with
/// `#[tool_error(from_envelope)]`; `Client::call_typed` and `ClientError::domain` (feature
/// `client`) use it.
///
/// ```
/// use mcp_fusion::client::{FromEnvelope, ParsedError, parse_envelope};
///
/// #[derive(Debug, PartialEq)]
/// enum Lookup { Missing(String) }
///
/// impl FromEnvelope for Lookup {
///     fn from_envelope(envelope: &ParsedError) -> Option<Self> {
///         let id = envelope.details.iter().find(|(k, _)| k == "id")?;
///         (envelope.code == "NOT_FOUND").then(|| Lookup::Missing(id.1.clone()))
///     }
/// }
///
/// let text = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>No such thing.</message>\n\
///             <details>\n  <detail key=\"id\">x_1</detail>\n</details>\n</tool_error>";
/// assert_eq!(Lookup::from_envelope(&parse_envelope(text)), Some(Lookup::Missing("x_1".into())));
/// ```
pub trait FromEnvelope: Sized {
    /// The caller's error for this envelope, or `None` when it is not one of its errors.
    fn from_envelope(envelope: &ParsedError) -> Option<Self>;
}

impl FromEnvelope for ToolError {
    /// Any `<tool_error>` envelope, rebuilt (a validation error or other text is `None`).
    ///
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// use mcp_fusion::client::{FromEnvelope, parse_envelope};
    /// let sent = ToolError::new(ErrorCode::CONFLICT, "Already paid.").suggest("Check first.").retry_after(3);
    /// assert_eq!(ToolError::from_envelope(&parse_envelope(&sent.render())), Some(sent));
    /// ```
    fn from_envelope(envelope: &ParsedError) -> Option<Self> {
        if envelope.kind != ParsedKind::ToolError {
            return None;
        }
        let code = ErrorCode::custom(envelope.code.clone()).ok()?;
        let mut err = ToolError::new(code, envelope.message.clone())
            .actions(envelope.actions.iter().cloned())
            .details(envelope.details.iter().cloned())
            .severity(envelope.severity);
        if let Some(recovery) = &envelope.recovery {
            err = err.suggest(recovery.clone());
        }
        if let Some(secs) = envelope.retry_after {
            err = err.retry_after(secs);
        }
        Some(err)
    }
}

/// A piece of a message template: literal text, or a `{field}`.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Piece {
    Text(&'static str),
    Hole,
}

/// Reads a message made from `pieces`: `read` gets the text of each hole, for every way the
/// message splits into them (each hole as short as it can be first), until it accepts one.
/// `None` when the message was not made from these pieces, or `read` accepts no split.
#[doc(hidden)]
pub fn matching<'m, T>(
    message: &'m str,
    pieces: &[Piece],
    mut read: impl FnMut(&[&'m str]) -> Option<T>,
) -> Option<T> {
    fill(message, pieces, &mut Vec::new(), &mut read)
}

fn fill<'m, T>(
    rest: &'m str,
    pieces: &[Piece],
    holes: &mut Vec<&'m str>,
    read: &mut impl FnMut(&[&'m str]) -> Option<T>,
) -> Option<T> {
    match pieces {
        [] if rest.is_empty() => read(holes),
        [] => None,
        [Piece::Text(text), tail @ ..] => fill(rest.strip_prefix(text)?, tail, holes, read),
        [Piece::Hole, tail @ ..] => {
            // Where the hole can end: before an occurrence of the text after it, or anywhere.
            let ends: Vec<usize> = match tail.first() {
                None => vec![rest.len()],
                Some(Piece::Text(next)) => rest.match_indices(next).map(|(i, _)| i).collect(),
                Some(Piece::Hole) => rest
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([rest.len()])
                    .collect(),
            };
            ends.into_iter().find_map(|end| {
                holes.push(&rest[..end]);
                let found = fill(&rest[end..], tail, holes, read);
                holes.pop();
                found
            })
        }
    }
}

/// The value of a detail.
#[doc(hidden)]
pub fn detail<'e>(envelope: &'e ParsedError, key: &str) -> Option<&'e str> {
    envelope
        .details
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A field read back from its text.
#[doc(hidden)]
pub fn read<T: FromStr>(text: &str) -> Option<T> {
    text.parse().ok()
}

/// Whether the envelope is a `<tool_error>` with this code.
#[doc(hidden)]
pub fn is(envelope: &ParsedError, code: &str) -> bool {
    envelope.kind == ParsedKind::ToolError && envelope.code == code
}

#[cfg(test)]
mod tests {
    use super::*;
    use Piece::{Hole, Text};

    fn holes<'m>(message: &'m str, pieces: &[Piece]) -> Option<Vec<&'m str>> {
        matching(message, pieces, |holes| Some(holes.to_vec()))
    }

    #[test]
    fn holes_take_what_lets_the_rest_match() {
        let template = [
            Text("Invoice "),
            Hole,
            Text(" is "),
            Hole,
            Text(" and cannot be cancelled."),
        ];
        assert_eq!(
            holes("Invoice inv 1 is paid and cannot be cancelled.", &template),
            Some(vec!["inv 1", "paid"])
        );
        assert_eq!(
            holes("Invoice a is b is c and cannot be cancelled.", &template),
            Some(vec!["a", "b is c"])
        );
        assert_eq!(holes("Invoice inv_1 is already paid.", &template), None);
        assert_eq!(holes("x", &[Hole]), Some(vec!["x"]));
        assert_eq!(holes("ab", &[Hole, Hole]), Some(vec!["", "ab"]));
        assert_eq!(holes("exact", &[Text("exact")]), Some(vec![]));
        assert_eq!(holes("exact.", &[Text("exact")]), None);
    }

    #[test]
    fn a_split_the_reader_refuses_gives_way_to_the_next() {
        let template = [Text("Declined: "), Hole, Text(" (code "), Hole, Text(")")];
        let message = "Declined: no funds (code 51) (code 51)";
        assert_eq!(
            holes(message, &template),
            Some(vec!["no funds", "51) (code 51"])
        );
        let read = matching(message, &template, |h| {
            Some((h[0].to_owned(), h[1].parse::<u16>().ok()?))
        });
        assert_eq!(read, Some(("no funds (code 51)".to_owned(), 51)));
    }
}
