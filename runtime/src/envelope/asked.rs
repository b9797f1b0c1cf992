//! The envelopes of a handler's ask of its client that got no usable answer (the client cannot
//! be asked, the user declined, dismissed or did not answer in time, the client failed): each
//! tells the model what the user did and what to do next, never INTERNAL_ERROR.

use std::time::Duration;

use super::builtin::duration_text;
use super::text::push_cut;
use crate::{ErrorCode, Severity, ToolError};

impl ToolError {
    /// CLIENT_UNSUPPORTED: the call needed to ask the client for `capability` (`elicitation`,
    /// `sampling`, `roots`), which it did not declare or cannot be asked for here.
    pub(crate) fn client_unsupported(capability: &str) -> Self {
        let (message, recovery) = match capability {
            "elicitation" => (
                "This call needs to ask the user, and the client cannot show the question (no elicitation).",
                "Ask the user in the conversation, then call the tool again with the answer in its arguments.",
            ),
            "sampling" => (
                "This call needs the client's model, and the client does not offer it (no sampling).",
                "Tell the user this tool needs a client that supports sampling.",
            ),
            _ => (
                "This call needs the client's roots, and the client does not list them (no roots).",
                "Ask the user which folders to use, then call the tool again with them in its arguments.",
            ),
        };
        ToolError::new(ErrorCode::from_static("CLIENT_UNSUPPORTED"), message).suggest(recovery)
    }

    /// USER_ONLY_FIELD: the call gave a field only the user can give (a confirmation).
    pub(crate) fn user_only_field(field: &str) -> Self {
        ToolError::new(
            ErrorCode::from_static("USER_ONLY_FIELD"),
            format!("Only the user can give \"{field}\"; the call may not carry it."),
        )
        .suggest(format!(
            "Call again without \"{field}\": the server asks the user for it."
        ))
    }

    /// CLIENT_UNSUPPORTED for an action that needs the user's own answer, which the client
    /// cannot ask for: the model is told not to fill it in.
    pub(crate) fn user_answer_unavailable(field: &str) -> Self {
        ToolError::new(
            ErrorCode::from_static("CLIENT_UNSUPPORTED"),
            format!(
                "This action needs the user's own answer (\"{field}\"), and the client cannot ask them (no elicitation)."
            ),
        )
        .suggest(format!(
            "Do not retry with \"{field}\": tell the user this action needs a client that can ask them."
        ))
    }

    /// USER_DECLINED: the user declined to answer the call's question.
    pub(crate) fn user_declined() -> Self {
        ToolError::new(
            ErrorCode::from_static("USER_DECLINED"),
            "The user declined to answer.",
        )
        .suggest(
            "Do not ask again: go on without it, or ask the user in the conversation what to do.",
        )
    }

    /// USER_CANCELLED: the user dismissed the call's question without a choice.
    pub(crate) fn user_cancelled() -> Self {
        ToolError::new(
            ErrorCode::from_static("USER_CANCELLED"),
            "The user dismissed the question without answering.",
        )
        .suggest("Ask the user in the conversation whether to go on, then call the tool again.")
    }

    /// TIMEOUT: nobody answered the call's question within `waited`: the user (`user`), or the
    /// client's model.
    pub(crate) fn client_timed_out(user: bool, waited: Duration) -> Self {
        let (who, recovery) = match user {
            true => (
                "The user",
                "Ask the user in the conversation whether to go on, then call the tool again.",
            ),
            false => (
                "The client's model",
                "Try again later, or go on without it.",
            ),
        };
        ToolError::new(
            ErrorCode::TIMEOUT,
            format!("{who} did not answer within {}.", duration_text(waited)),
        )
        .suggest(recovery)
    }

    /// CLIENT_FAILED: the client answered the call's question (for `capability`) with an error,
    /// or with something that is no answer to it; `reason` is what it said (cut).
    pub(crate) fn client_failed(capability: &str, reason: &str) -> Self {
        let mut message = format!("The client could not answer ({capability}): ");
        push_cut(&mut message, reason);
        ToolError::new(ErrorCode::from_static("CLIENT_FAILED"), message)
            .suggest("Retry once; if it fails again, go on without it or tell the user.")
            .severity(Severity::Error)
    }

    /// URL_REFUSED: the call wanted to send the user to a link of `scheme` (empty: no URL),
    /// which is not shown: only `https` links are (and `http` to the user's own machine).
    pub(crate) fn url_refused(scheme: &str) -> Self {
        let mut message = String::from("The link was not shown to the user: ");
        match scheme {
            "" => message.push_str("it is no URL, and only https links are shown."),
            scheme => {
                message.push_str("its scheme is \"");
                push_cut(&mut message, scheme);
                message.push_str("\", and only https links are shown.");
            }
        }
        ToolError::new(ErrorCode::from_static("URL_REFUSED"), message).suggest(
            "If the link came from your arguments, call the tool again with an https link; \
             otherwise tell the user this step cannot be done here.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_told_what_the_user_did() {
        let late = ToolError::client_timed_out(true, Duration::from_secs(600));
        assert_eq!(late.message(), "The user did not answer within 10 minutes.");
        assert_eq!(late.code(), &ErrorCode::TIMEOUT);
        assert!(ToolError::user_declined().is_error());
        assert_eq!(
            ToolError::client_unsupported("elicitation").code().as_str(),
            "CLIENT_UNSUPPORTED"
        );
        let failed = ToolError::client_failed("sampling", "the user rejected it");
        assert_eq!(
            failed.message(),
            "The client could not answer (sampling): the user rejected it"
        );
        let refused = ToolError::url_refused("javascript");
        assert_eq!(refused.code().as_str(), "URL_REFUSED");
        assert_eq!(
            refused.message(),
            "The link was not shown to the user: its scheme is \"javascript\", and only https links are shown."
        );
        assert!(
            ToolError::url_refused("")
                .message()
                .contains("it is no URL")
        );
    }
}
