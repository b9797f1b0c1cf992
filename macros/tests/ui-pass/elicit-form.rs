#![deny(warnings, missing_docs, unused_qualifications)]
//! `#[derive(ElicitForm)]` with a field of each kind and every option, `#[derive(ElicitChoice)]`
//! titled by doc comments and by `title`, and an action with `ask_user` that asks for the form,
//! compiled under `deny(warnings, missing_docs, unused_qualifications)`.

use mcp_fusion::tools::{ElicitChoice, ElicitForm};
use mcp_fusion::{Context, ToolError, tool};

/// The plan to start on.
#[derive(Debug, serde::Deserialize, ElicitChoice)]
#[serde(rename_all = "snake_case")]
pub enum Plan {
    /// Free, for one person
    Free,
    /// A team, billed monthly
    SmallTeam,
    /// Talk to us.
    #[choice(title = "Enterprise")]
    Enterprise,
}

/// A topic to follow, shown by its value.
#[derive(Debug, serde::Deserialize, ElicitChoice)]
#[allow(missing_docs)]
pub enum Topic {
    Rust,
    Go,
}

/// What signing up asks.
#[derive(Debug, serde::Deserialize, ElicitForm)]
#[serde(rename_all = "camelCase")]
pub struct Signup {
    /// Where we write to you.
    #[form(title = "Email", format = "email", min_length = 3, max_length = 254, default = "a@b.c")]
    pub email_address: String,
    /// Your website.
    #[form(format = "uri")]
    pub website: Option<String>,
    /// Your age.
    #[form(min = 18, max = 130)]
    pub age: Option<u8>,
    /// The share of emails you want.
    #[form(min = 0, max = 1, default = 0.5)]
    pub share: f64,
    /// Your plan.
    #[form(default = Plan::Free)]
    pub plan: Plan,
    /// What to follow.
    #[form(min_items = 1, max_items = 2, default = [Topic::Rust])]
    pub topics: Vec<Topic>,
    /// Whether to subscribe.
    #[form(default = false)]
    pub newsletter: bool,
    /// Not in the form.
    #[serde(skip)]
    pub internal: Vec<u8>,
}

/// What deleting a note takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Delete {
    /// The note.
    pub note: String,
    /// Whether the user confirmed.
    pub confirm: Option<bool>,
}

/// Notes.
pub struct Notes;

/// Notes.
#[tool]
impl Notes {
    /// Deletes a note, once the user confirms.
    #[action(destructive, ask_user(confirm))]
    async fn delete(&self, args: Delete, f: Context) -> Result<String, ToolError> {
        if args.confirm != Some(true) {
            let signup = f.elicit::<Signup>("Sign up first").await?.accepted()?;
            return Ok(signup.email_address);
        }
        Ok(args.note)
    }
}

fn main() {
    assert_eq!(Signup::schema().properties.len(), 7);
    assert_eq!(Plan::SmallTeam.value(), "small_team");
    assert_eq!(Topic::choices().len(), 2);
    assert_eq!(Notes::ACTIONS.delete.as_str(), "notes.delete");
}
