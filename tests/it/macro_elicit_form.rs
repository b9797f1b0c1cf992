//! `#[derive(ElicitForm)]` and `#[derive(ElicitChoice)]`: the schema each kind of field becomes
//! is exactly the `requestedSchema` MCP elicitation defines (2025-11-25: flat primitive
//! properties; SEP-1034 defaults; SEP-1330 titled and untitled single- and multi-select enums),
//! serialized and compared whole, in declaration order; the user's answer reads back into the
//! struct. And `#[action(ask_user(..))]`: the field is marked on the action's definition, and a
//! server refuses to build when it is not an optional field a form can show.

use mcp_fusion::Server;
use mcp_fusion::tools::{ElicitChoice, ElicitForm};
use mcp_fusion::{Tool as _, ToolError, tool};
use serde_json::{Value, json};

/// The plan, as the user picks it.
#[derive(Debug, PartialEq, serde::Deserialize, ElicitChoice)]
#[serde(rename_all = "snake_case")]
enum Plan {
    /// Free, for one person
    Free,
    /// Team, billed monthly
    SmallTeam,
    #[choice(title = "Enterprise (talk to us)")]
    #[serde(rename = "ent")]
    Enterprise,
}

/// A topic, shown by its value (no titles).
#[derive(Debug, PartialEq, serde::Deserialize, ElicitChoice)]
enum Topic {
    Rust,
    Go,
    Zig,
}

/// A topic, titled.
#[derive(Debug, PartialEq, serde::Deserialize, ElicitChoice)]
#[serde(rename_all = "lowercase")]
enum Channel {
    /// By email
    Email,
    /// By text message
    Sms,
}

/// Text, a boolean and numbers, each with its options.
#[derive(Debug, serde::Deserialize, ElicitForm)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Primitives {
    /// Where we write to you.
    #[form(
        title = "Email address",
        format = "email",
        min_length = 3,
        max_length = 254
    )]
    email_address: String,
    #[form(format = "uri")]
    website: Option<String>,
    #[form(format = "date", default = "2026-07-28")]
    start: String,
    #[form(format = "date-time")]
    meeting: Option<String>,
    /// Subscribe to the newsletter.
    #[form(default = true)]
    newsletter: bool,
    #[form(min = 18, max = 130, default = 30)]
    age: u8,
    seats: u16,
    offset: i32,
    tiny: i8,
    big: u64,
    huge: i64,
    #[form(min = -5)]
    delta: Option<i64>,
    #[form(min = 0, max = 1, default = 0.5)]
    ratio: f64,
    #[form(min = -1.5, max = 2.25, default = 1)]
    scale: f32,
    #[serde(rename = "note")]
    #[form(default = "none", max_length = 200)]
    comment: Option<String>,
    #[serde(skip)]
    internal: Vec<u8>,
}

#[test]
fn primitives_are_the_schemas_mcp_defines() {
    let schema = serde_json::to_value(Primitives::schema()).unwrap();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "emailAddress": {
                    "type": "string", "title": "Email address", "description": "Where we write to you.",
                    "minLength": 3, "maxLength": 254, "format": "email",
                },
                "website": {"type": "string", "format": "uri"},
                "start": {"type": "string", "format": "date", "default": "2026-07-28"},
                "meeting": {"type": "string", "format": "date-time"},
                "newsletter": {"type": "boolean", "description": "Subscribe to the newsletter.", "default": true},
                "age": {"type": "integer", "minimum": 18, "maximum": 130, "default": 30},
                "seats": {"type": "integer", "minimum": 0, "maximum": 65535},
                "offset": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
                "tiny": {"type": "integer", "minimum": -128, "maximum": 127},
                "big": {"type": "integer", "minimum": 0},
                "huge": {"type": "integer"},
                "delta": {"type": "integer", "minimum": -5},
                "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.5},
                "scale": {"type": "number", "minimum": -1.5, "maximum": 2.25, "default": 1.0},
                "note": {"type": "string", "maxLength": 200, "default": "none"},
            },
            "required": [
                "emailAddress", "start", "newsletter", "age", "seats", "offset", "tiny", "big",
                "huge", "ratio", "scale",
            ],
        })
    );
    // Declaration order, as the user reads the form.
    let order: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        order,
        [
            "emailAddress",
            "website",
            "start",
            "meeting",
            "newsletter",
            "age",
            "seats",
            "offset",
            "tiny",
            "big",
            "huge",
            "delta",
            "ratio",
            "scale",
            "note",
        ]
    );
}

/// Choices: one and several, titled (SEP-1330 `oneOf`/`anyOf` of `const` and `title`) and not
/// (`enum`), with defaults (SEP-1034).
#[derive(Debug, serde::Deserialize, ElicitForm)]
struct Choices {
    /// The plan to start on.
    #[form(title = "Plan", default = Plan::SmallTeam)]
    plan: Plan,
    #[form(default = Topic::Go)]
    favourite: Option<Topic>,
    /// Topics to follow.
    #[form(min_items = 1, max_items = 2, default = [Topic::Rust, Topic::Zig])]
    topics: Vec<Topic>,
    #[form(title = "Reach me", default = [Channel::Sms])]
    channels: Option<Vec<Channel>>,
}

#[test]
fn choices_are_the_enums_of_sep_1330_with_the_defaults_of_sep_1034() {
    let schema = serde_json::to_value(Choices::schema()).unwrap();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "string", "title": "Plan", "description": "The plan to start on.",
                    "oneOf": [
                        {"const": "free", "title": "Free, for one person"},
                        {"const": "small_team", "title": "Team, billed monthly"},
                        {"const": "ent", "title": "Enterprise (talk to us)"},
                    ],
                    "default": "small_team",
                },
                "favourite": {"type": "string", "enum": ["Rust", "Go", "Zig"], "default": "Go"},
                "topics": {
                    "type": "array", "description": "Topics to follow.", "minItems": 1, "maxItems": 2,
                    "items": {"type": "string", "enum": ["Rust", "Go", "Zig"]},
                    "default": ["Rust", "Zig"],
                },
                "channels": {
                    "type": "array", "title": "Reach me",
                    "items": {"anyOf": [
                        {"const": "email", "title": "By email"},
                        {"const": "sms", "title": "By text message"},
                    ]},
                    "default": ["sms"],
                },
            },
            "required": ["plan", "topics"],
        })
    );
}

#[test]
fn a_choice_knows_its_values_and_titles() {
    assert_eq!(Plan::SmallTeam.value(), "small_team");
    assert_eq!(Plan::Enterprise.value(), "ent");
    let choices = Plan::choices();
    let read: Vec<(&str, Option<&str>)> = choices.iter().map(|c| (c.value(), c.title())).collect();
    assert_eq!(
        read,
        [
            ("free", Some("Free, for one person")),
            ("small_team", Some("Team, billed monthly")),
            ("ent", Some("Enterprise (talk to us)")),
        ]
    );
    assert!(Topic::choices().iter().all(|c| c.title().is_none()));
}

#[test]
fn the_answer_reads_back_into_the_form() {
    let answer = json!({"plan": "ent", "topics": ["Go"], "channels": ["email", "sms"]});
    let form: Choices = serde_json::from_value(answer).unwrap();
    assert_eq!(form.plan, Plan::Enterprise);
    assert_eq!(form.favourite, None);
    assert_eq!(form.topics, [Topic::Go]);
    assert_eq!(form.channels, Some(vec![Channel::Email, Channel::Sms]));
}

/// A form with no field: accept or decline, nothing to fill in.
#[derive(serde::Deserialize, ElicitForm)]
struct Proceed {}

#[test]
fn a_form_without_fields_asks_only_to_accept() {
    assert_eq!(
        serde_json::to_value(Proceed::schema()).unwrap(),
        json!({"type": "object", "properties": {}})
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct DeleteNote {
    note: String,
    /// Delete the note for good.
    confirm: Option<bool>,
    plan: Option<Tier>,
}

/// A plan, in the arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Tier {
    /// Free
    Free,
    /// Pro
    Pro,
}

struct Notes;

/// Notes.
#[tool]
impl Notes {
    /// Deletes a note, once the user confirms.
    #[action(destructive, ask_user(confirm, "plan"))]
    async fn delete(&self, args: DeleteNote) -> Result<String, ToolError> {
        let _ = args.plan;
        Ok(format!("{}: {:?}", args.note, args.confirm))
    }
}

#[test]
fn ask_user_marks_the_fields_on_the_action() {
    let def = Notes.definition();
    assert_eq!(def.actions()[0].user_fields(), ["confirm", "plan"]);
    let form = serde_json::to_value(def.actions()[0].user_field_form("plan").unwrap()).unwrap();
    assert_eq!(
        form,
        json!({
            "type": "object",
            // The enum's doc comment, as schemars describes the field.
            "properties": {"plan": {"type": "string", "description": "A plan, in the arguments.", "oneOf": [
                {"const": "free", "title": "Free"},
                {"const": "pro", "title": "Pro"},
            ]}},
            "required": ["plan"],
        })
    );
    assert!(Server::builder("t", "1").tool(Notes).build().is_ok());
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Archive {
    note_id: String,
    confirm_archive: Option<bool>,
    tags: Option<Vec<String>>,
}

struct Archives;

/// Archives.
#[tool]
impl Archives {
    /// Archives a note.
    #[action(ask_user(confirm_archive, noteId, tags, nothing))]
    async fn archive(&self, args: Archive) -> Result<Value, ToolError> {
        Ok(json!([args.note_id, args.confirm_archive, args.tags]))
    }
}

#[test]
fn a_field_the_user_cannot_give_is_refused_when_the_server_is_built() {
    let refused = Server::builder("t", "1")
        .tool(Archives)
        .build()
        .unwrap_err();
    let at = "tool \"archives\", action \"archives.archive\": the field";
    let problems = refused.problems();
    assert_eq!(problems.len(), 4, "{refused}");
    assert!(
        problems[0].starts_with(&format!(
            "{at} \"confirm_archive\" is marked as one only the user can give"
        )) && problems[0].contains("no such field (did you mean \"confirmArchive\"?)"),
        "{refused}"
    );
    assert!(
        problems[1].starts_with(&format!("{at} \"noteId\""))
            && problems[1].contains("the arguments require it, so no call leaves it out"),
        "{refused}"
    );
    assert!(
        problems[2].starts_with(&format!("{at} \"tags\""))
            && problems[2].contains("a form shows only text, numbers, booleans and choices"),
        "{refused}"
    );
    assert!(
        problems[3].starts_with(&format!("{at} \"nothing\""))
            && problems[3].contains("the arguments have no such field;"),
        "{refused}"
    );
}
