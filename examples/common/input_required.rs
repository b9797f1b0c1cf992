//! The everything example's tools that ask their client for input, under the names and input
//! keys the official MCP conformance suite asks for (`test_input_required_result_*`). Each asks
//! through its `Context` (`f.elicit`, `f.sample`, `f.roots`), so it works in both protocol
//! eras: up to 2025-11-25 the client is asked on the session and answers while the tool waits;
//! from 2026-07-28 (SEP-2322) the call ends its round with `input_required`, its asks in
//! `inputRequests` under the keys named here (`Context::input`) and its earlier answers sealed
//! in `requestState`, and the client calls again with the answers, which the tool, run again
//! from the top, finds.

use mcp_fusion::tools::{Ask, ElicitForm, Response, Sampling};
use mcp_fusion::{Context, ToolError, tool};
use serde::Deserialize;

/// Your name.
#[derive(Deserialize, ElicitForm)]
struct Name {
    /// What you are called.
    name: String,
}

/// Please confirm.
#[derive(Deserialize, ElicitForm)]
struct Confirm {
    /// Whether you confirm.
    ok: bool,
}

/// Your favourite colour.
#[derive(Deserialize, ElicitForm)]
struct Colour {
    /// A colour.
    color: String,
}

/// The text of the model's answer.
fn said(answer: &mcp_fusion::tools::Sampled) -> &str {
    answer.text().unwrap_or("(no text)")
}

pub(crate) struct InputRequired;

/// Tools that ask their client for input, one kind of ask each, then several at once, then in
/// several rounds: each action is an MCP tool of its own, `test_input_required_result_{action}`.
#[tool(name = "test_input_required_result", exposition = "flat")]
impl InputRequired {
    /// Asks the user's name (input key `user_name`) and greets them.
    #[action(read_only)]
    async fn elicitation(&self, f: Context) -> Result<Response, ToolError> {
        let asked = f.input("user_name").elicit::<Name>("What is your name?");
        let Name { name } = asked.await?.accepted()?;
        Ok(Response::text(format!("Hello, {name}!")))
    }

    /// Asks the client's model the capital of France (input key `capital_question`).
    #[action(read_only)]
    async fn sampling(&self, f: Context) -> Result<Response, ToolError> {
        let question = Sampling::new(100).user("What is the capital of France?");
        let answer = f.input("capital_question").sample(question).await?;
        Ok(Response::text(format!(
            "The model answered: {}",
            said(&answer)
        )))
    }

    /// Lists the client's roots (input key `client_roots`).
    #[action(read_only)]
    async fn list_roots(&self, f: Context) -> Result<Response, ToolError> {
        let roots = f.input("client_roots").roots().await?;
        let named: Vec<String> = (roots.iter())
            .map(|root| match &root.name {
                Some(name) => format!("{} ({name})", root.uri),
                None => root.uri.clone(),
            })
            .collect();
        Ok(Response::text(format!(
            "The client's roots: {}.",
            named.join(", ")
        )))
    }

    /// Asks the user to confirm (input key `confirm`). From 2026-07-28 the answer reaches the
    /// tool only with the `requestState` its round ended with, which the server sealed and
    /// checks before the tool runs again: the answer says `state-ok`.
    #[action(read_only)]
    async fn request_state(&self, f: Context) -> Result<Response, ToolError> {
        let Confirm { ok } = (f.input("confirm").elicit("Please confirm").await?).accepted()?;
        Ok(Response::text(format!(
            "state-ok: the answer came back with this server's requestState (confirmed: {ok})."
        )))
    }

    /// Asks the user's name, the client's model for a greeting and the client's roots at once:
    /// one round with three asks (`user_name`, `greeting`, `client_roots`).
    #[action(read_only)]
    async fn multiple_inputs(&self, f: Context) -> Result<Response, ToolError> {
        let greeting = Sampling::new(50).user("Generate a greeting");
        let (name, greeting, roots) = tokio::join!(
            f.input("user_name").elicit::<Name>("What is your name?"),
            f.input("greeting").sample(greeting),
            f.input("client_roots").roots(),
        );
        let (Name { name }, greeting, roots) = (name?.accepted()?, greeting?, roots?);
        Ok(Response::text(format!(
            "Hello, {name}! The model's greeting: {:?}; the client's roots: {}.",
            said(&greeting),
            roots.len()
        )))
    }

    /// Asks the user two questions, one after the other: two rounds (`step1`, then `step2`),
    /// the state of the second keeping the answer to the first.
    #[action(read_only)]
    async fn multi_round(&self, f: Context) -> Result<Response, ToolError> {
        let asked = f
            .input("step1")
            .elicit::<Name>("Step 1: What is your name?");
        let Name { name } = asked.await?.accepted()?;
        let asked = f
            .input("step2")
            .elicit("Step 2: What is your favorite color?");
        let Colour { color } = asked.await?.accepted()?;
        Ok(Response::text(format!("{name} likes {color}.")))
    }

    /// Asks the user to confirm (input key `confirm`): a retry whose `requestState` was
    /// altered is refused before the tool runs again.
    #[action(read_only)]
    async fn tampered_state(&self, f: Context) -> Result<Response, ToolError> {
        let Confirm { ok } = (f.input("confirm").elicit("Please confirm").await?).accepted()?;
        Ok(Response::text(format!("Confirmed: {ok}.")))
    }

    /// Asks the client's model for a word (`word`) and the user to confirm (`confirm`), each
    /// only when the client declared it can be asked: a client that declared sampling alone is
    /// asked no form.
    #[action(read_only)]
    async fn capabilities(&self, f: Context) -> Result<Response, ToolError> {
        // Asking what the client did not declare would refuse the whole call (-32021 from MCP
        // 2026-07-28): each question is asked only where it can be.
        let word = async {
            match f.can_ask(Ask::Model) {
                true => f
                    .input("word")
                    .sample(Sampling::new(10).user("Say one word."))
                    .await
                    .map(Some),
                false => Ok(None),
            }
        };
        let confirmed = async {
            match f.can_ask(Ask::User) {
                true => f
                    .input("confirm")
                    .elicit::<Confirm>("Please confirm")
                    .await
                    .map(Some),
                false => Ok(None),
            }
        };
        let (word, confirmed) = tokio::join!(word, confirmed);
        let (word, confirmed) = (word?, confirmed?.map(|answer| answer.accepted()));
        let word = word.as_ref().map_or("(not asked)", said);
        let confirmed = match confirmed.transpose()? {
            Some(Confirm { ok }) => ok.to_string(),
            None => "(not asked)".to_owned(),
        };
        Ok(Response::text(format!(
            "The model's word: {word}. The user confirmed: {confirmed}."
        )))
    }
}
