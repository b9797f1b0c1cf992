//! Asking the user for the fields only they can give ([`ActionDefBuilder::user_field`]) that a
//! call left out: once the call is validated (the fields are optional, so it passes without
//! them) and, on a server, admitted by its limits, before its middleware. The fields left out
//! are asked in one form (MCP elicitation) through the call's way to its client; the answers
//! go into the arguments, which are then validated again, as the model's own would be. A
//! client that cannot be asked gets MISSING_REQUIRED_FIELD for the first of them (ERRORS.md
//! §4).
//!
//! [`ActionDefBuilder::user_field`]: super::ActionDefBuilder::user_field

use rmcp::model::ElicitRequestParams;
use serde_json::{Map, Value};

use super::client::{ClientAccess, ClientRequestKind, form_answer};
use super::{ActionDef, Ask, AskError, Elicited};
use crate::ToolError;

/// The fields only the user can give that `args` leave out (absent, or `null`), in the order
/// they were marked.
pub(crate) fn missing<'a>(action: &'a ActionDef, args: &Value) -> Vec<&'a str> {
    (action.user_fields.iter())
        .filter(|name| args.get(name.as_str()).is_none_or(Value::is_null))
        .map(String::as_str)
        .collect()
}

/// The first field only the user can give that `args` carry (not `null`): the model gave what
/// it may not.
pub(crate) fn given_by_model<'a>(action: &'a ActionDef, args: &Value) -> Option<&'a str> {
    (action.user_only()).find(|name| args.get(*name).is_some_and(|v| !v.is_null()))
}

/// Asks the user, through `client`, for the `missing` fields of a call of `action`, and puts
/// their answers into `args`. Why the call cannot go on: MISSING_REQUIRED_FIELD when the
/// client cannot be asked (no way back to it, or no elicitation declared), else the envelope
/// of what the user or the client did instead of answering, as `Context::elicit` gives it.
pub(crate) async fn ask(
    action: &ActionDef,
    missing: &[&str],
    args: &mut Value,
    client: Option<&ClientAccess>,
) -> Result<(), ToolError> {
    let Some(first) = missing.first() else {
        return Ok(());
    };
    // A field only the user can give is never the model's to fill in: it is told so.
    let user_only = missing.iter().find(|name| action.is_user_only(name));
    let unasked = || match user_only {
        Some(name) => ToolError::user_answer_unavailable(name),
        None => ToolError::missing_required_field(first),
    };
    // From 2026-07-28, a request that did not declare elicitation is answered -32021.
    let client = client.filter(|client| client.can(Ask::User));
    // The server refuses to build with a field a form cannot show, so a form is always made.
    let (Some(client), Some(form)) = (client, super::user_field::form(action.schema(), missing))
    else {
        return Err(unasked());
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: action.ask_user_message(),
        requested_schema: form,
    };
    let answer = client.ask(ClientRequestKind::Elicit(params), None).await;
    let mut given = match form_answer::<Map<String, Value>>(answer?)? {
        Elicited::Accepted(given) => given,
        Elicited::Declined => return Err(AskError::Declined.into()),
        Elicited::Cancelled => return Err(AskError::Cancelled.into()),
    };
    let Some(args) = args.as_object_mut() else {
        return Err(unasked());
    };
    for name in missing {
        match given.remove(*name) {
            Some(value) if !value.is_null() => {
                args.insert((*name).to_owned(), value);
            }
            _ => {
                let reason = format!("the form came back without \"{name}\"");
                let failed = AskError::Failed {
                    ask: Ask::User,
                    reason,
                };
                return Err(failed.into());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
// A client link logs at rmcp's levels, deprecated by SEP-2577; still served.
#[allow(deprecated)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use rmcp::model::{ClientCapabilities, LoggingLevel};
    use serde_json::json;

    use super::*;
    use crate::tool::{BoxFuture, ClientLink};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Delete {
        note: String,
        /// Delete for good.
        confirm: Option<bool>,
        /// Why.
        reason: Option<String>,
    }

    fn delete() -> ActionDef {
        ActionDef::new::<Delete>("delete")
            .user_field("confirm")
            .user_field("reason")
            .build()
    }

    /// A client that answers every form with `answer`, recording what it was asked.
    #[derive(Debug)]
    struct Answering {
        capabilities: ClientCapabilities,
        answer: Value,
        asked: Mutex<Vec<Value>>,
    }

    impl ClientLink for Answering {
        fn capabilities(&self) -> &ClientCapabilities {
            &self.capabilities
        }

        fn request(
            &self,
            request: ClientRequestKind,
            _key: Option<&str>,
        ) -> BoxFuture<'_, Result<Value, AskError>> {
            if let ClientRequestKind::Elicit(params) = request {
                let params = serde_json::to_value(params).expect("params are JSON");
                self.asked.lock().unwrap().push(params);
            }
            Box::pin(std::future::ready(Ok(self.answer.clone())))
        }

        fn log(&self, _: LoggingLevel, _: Option<&str>, _: Value) -> BoxFuture<'static, bool> {
            Box::pin(std::future::ready(false))
        }
    }

    fn client(elicitation: bool, answer: Value) -> (ClientAccess, Arc<Answering>) {
        let mut capabilities = ClientCapabilities::default();
        if elicitation {
            capabilities.elicitation = Some(Default::default());
        }
        let link = Arc::new(Answering {
            capabilities,
            answer,
            asked: Mutex::default(),
        });
        let access = ClientAccess {
            link: link.clone(),
            ask_timeout: Duration::from_secs(60),
        };
        (access, link)
    }

    #[test]
    fn the_fields_left_out_are_those_absent_or_null() {
        let action = delete();
        let missing = |args: Value| missing(&action, &args);
        assert_eq!(missing(json!({"note": "a"})), ["confirm", "reason"]);
        assert_eq!(
            missing(json!({"note": "a", "confirm": null, "reason": "old"})),
            ["confirm"]
        );
        assert!(missing(json!({"confirm": false, "reason": ""})).is_empty());
    }

    #[tokio::test]
    async fn the_answers_go_into_the_arguments() {
        let action = delete();
        let answer =
            json!({"action": "accept", "content": {"confirm": true, "reason": "old", "x": 1}});
        let (access, link) = client(true, answer);
        let mut args = json!({"note": "a"});
        ask(&action, &["confirm", "reason"], &mut args, Some(&access))
            .await
            .expect("answered");
        assert_eq!(args, json!({"note": "a", "confirm": true, "reason": "old"}));
        let asked = link.asked.lock().unwrap()[0].clone();
        assert_eq!(
            asked["message"],
            "\u{201c}Delete\u{201d} needs your answer before it goes on."
        );
        assert_eq!(
            asked["requestedSchema"]["required"],
            json!(["confirm", "reason"])
        );
    }

    #[tokio::test]
    async fn no_answer_is_an_envelope() {
        let action = delete();
        let code = |err: ToolError| err.code().as_str().to_owned();
        let mut args = json!({"note": "a"});
        let unasked = ask(&action, &["confirm"], &mut args, None).await;
        let unasked = unasked.unwrap_err();
        // Only the user can give it: the model is told so, never invited to fill it in.
        assert_eq!(code(unasked.clone()), "CLIENT_UNSUPPORTED");
        assert_eq!(unasked, ToolError::user_answer_unavailable("confirm"));
        let (mute, _) = client(false, json!({}));
        let unasked = ask(&action, &["confirm"], &mut args, Some(&mute)).await;
        assert_eq!(code(unasked.unwrap_err()), "CLIENT_UNSUPPORTED");
        // A field the model may relay is its to give when the user cannot be asked.
        let relayed = ActionDef::new::<Delete>("delete")
            .relayed_user_field("reason")
            .build();
        let unasked = ask(&relayed, &["reason"], &mut args, None).await;
        assert_eq!(
            unasked.unwrap_err(),
            ToolError::missing_required_field("reason")
        );
        for (answer, expected) in [
            (json!({"action": "decline"}), "USER_DECLINED"),
            (json!({"action": "cancel"}), "USER_CANCELLED"),
            (json!({"action": "accept", "content": {}}), "CLIENT_FAILED"),
            (json!({"what": 1}), "CLIENT_FAILED"),
        ] {
            let (access, _) = client(true, answer);
            let refused = ask(&action, &["confirm"], &mut args, Some(&access)).await;
            assert_eq!(code(refused.unwrap_err()), expected);
        }
        assert_eq!(args, json!({"note": "a"}));
    }
}
