//! Everything an MCP server offers, in one server: `#[tool]` tools beside an rmcp
//! `ServerHandler` of its own (`ServerBuilder::handler`) for prompts, resources (a template,
//! subscriptions), completion and `logging/setLevel`, all served through the same front. Its
//! tools, prompts and resources are those the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) asks a server for, under the names it asks for them
//! by: `cargo xtask conformance` runs the suite against it.
//!
//! `cargo run --example everything` (stdio), or `cargo run --example everything -- --http
//! 127.0.0.1:8080` (streamable HTTP with sessions, endpoint `/mcp`; port 0 picks a free one,
//! and the address is printed on stderr).
//!
//! Its tools reach the client through their `Context`: they log, ask the client's model
//! (sampling), ask the user (elicitation, forms typed by `#[derive(ElicitForm)]`) and list the
//! client's roots; from MCP 2026-07-28 in `input_required` rounds (`common/input_required.rs`,
//! and a prompt of its handler). One mirrors a field in an HTTP header (`test_header_mirror`,
//! SEP-2243). Some run as tasks for a client that declared the tasks extension
//! (`common/task_fixtures.rs`).

#[path = "common/cli.rs"]
mod cli;
#[path = "common/input_required.rs"]
mod input_required;
#[path = "common/prompts_resources.rs"]
mod prompts_resources;
#[path = "common/task_fixtures.rs"]
mod task_fixtures;

use std::time::Duration;

use clap::Parser;
use input_required::InputRequired;
use mcp_fusion::rmcp::model::ElicitationSchema;
use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use mcp_fusion::server::{Changes, HttpOptions, StdioOptions};
use mcp_fusion::tools::{ElicitChoice, ElicitForm};
use mcp_fusion::tools::{Elicited, LogLevel, Response, Sampling};
use mcp_fusion::{Context, Server, ToolError, ToolErrors, tool};
use prompts_resources::{PNG, PromptsAndResources};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Everything an MCP server offers: tools, prompts, resources, completion, logging.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Serve streamable HTTP on this address (endpoint `/mcp`) instead of stdio.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    http: Option<String>,
    /// Seconds between two changes of the resource `test://watched-resource`.
    #[arg(long, value_name = "S", default_value = "3", value_parser = some_seconds)]
    update_every: Duration,
}

/// A duration in seconds, more than none.
fn some_seconds(text: &str) -> Result<Duration, String> {
    match cli::seconds(text)? {
        every if every.is_zero() => Err("more than 0 seconds".into()),
        every => Ok(every),
    }
}

/// An 8 kHz mono WAV of eight samples of silence, base64.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

#[derive(Debug, ToolErrors)]
enum SuiteError {
    #[tool_error(
        code = "INTENTIONAL_FAILURE",
        "This tool always fails: it shows how a failure reads.",
        recovery = "Nothing to fix: call another tool."
    )]
    Intentional,
}

/// The prompt `test_sampling` asks the client's model.
#[derive(Deserialize, JsonSchema)]
struct Prompt {
    /// The prompt to send to the client's model.
    prompt: String,
}

/// The message `test_elicitation` shows the user.
#[derive(Deserialize, JsonSchema)]
struct Message {
    /// The message to show the user.
    message: String,
}

/// What `test_elicitation` asks the user.
#[derive(Serialize, Deserialize, ElicitForm)]
struct Contact {
    /// User's response
    username: String,
    /// User's email address
    #[form(format = "email")]
    email: String,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Serialize, Deserialize, ElicitForm)]
struct Profile {
    /// User name
    #[form(default = "John Doe")]
    name: String,
    /// User age
    #[form(default = 30)]
    age: i64,
    /// User score
    #[form(default = 95.5)]
    score: f64,
    /// User status
    #[form(default = Status::Active)]
    status: Status,
    /// Verification status
    #[form(default = true)]
    verified: bool,
}

/// A user's status, shown by its value.
#[derive(Serialize, Deserialize, ElicitChoice)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// Every shape of choice SEP-1330 names. Written by hand: `#[derive(ElicitForm)]` never
/// writes the legacy `enumNames`, which the suite still asks for.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Choices {
    untitled_single: String,
    titled_single: String,
    legacy_enum: String,
    untitled_multi: Vec<String>,
    titled_multi: Vec<String>,
}

impl ElicitForm for Choices {
    fn schema() -> ElicitationSchema {
        let titled = |titles: [&str; 3]| -> Vec<serde_json::Value> {
            let values = ["value1", "value2", "value3"].into_iter().zip(titles);
            values
                .map(|(v, t)| json!({"const": v, "title": t}))
                .collect()
        };
        let schema = json!({"type": "object", "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option",
                "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                "oneOf": titled(["First Option", "Second Option", "Third Option"])},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options",
                "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                "minItems": 1, "maxItems": 3,
                "items": {"anyOf": titled(["First Choice", "Second Choice", "Third Choice"])}},
        }, "required": []});
        serde_json::from_value(schema).expect("an elicitation schema")
    }
}

/// What the user did with a form, as `action=…, content=…`.
fn completed<T: Serialize>(answer: Elicited<T>) -> String {
    let (action, content) = match answer {
        Elicited::Accepted(form) => ("accept", serde_json::to_value(form).unwrap_or_default()),
        Elicited::Declined => ("decline", json!({})),
        Elicited::Cancelled => ("cancel", json!({})),
    };
    format!("action={action}, content={content}")
}

/// A result of content blocks.
fn blocks(content: Vec<ContentBlock>) -> Response {
    Response::from(CallToolResult::success(content))
}

/// The suite's test tools, with the server's handle for telling clients what changed.
struct SuiteTools {
    changes: Changes,
}

/// The conformance suite's test tools: each action is an MCP tool of its own, `test_{action}`.
#[tool(name = "test", exposition = "flat")]
impl SuiteTools {
    /// Answers with one text block.
    #[action(read_only)]
    async fn simple_text(&self) -> Result<Response, SuiteError> {
        Ok(Response::text("A simple text answer."))
    }

    /// Answers with an image (a small PNG).
    #[action(read_only)]
    async fn image_content(&self) -> Result<Response, SuiteError> {
        Ok(blocks(vec![ContentBlock::image(PNG, "image/png")]))
    }

    /// Answers with audio (a short WAV).
    #[action(read_only)]
    async fn audio_content(&self) -> Result<Response, SuiteError> {
        Ok(blocks(vec![ContentBlock::audio(WAV, "audio/wav")]))
    }

    /// Answers with an embedded text resource.
    #[action(read_only)]
    async fn embedded_resource(&self) -> Result<Response, SuiteError> {
        let resource = ResourceContents::text(
            "The text of an embedded resource.",
            "test://embedded-resource",
        )
        .with_mime_type("text/plain");
        Ok(blocks(vec![ContentBlock::resource(resource)]))
    }

    /// Answers with text, an image and an embedded JSON resource.
    #[action(read_only)]
    async fn multiple_content_types(&self) -> Result<Response, SuiteError> {
        let json = serde_json::json!({"kind": "mixed", "blocks": 3}).to_string();
        let resource = ResourceContents::text(json, "test://mixed-content-resource")
            .with_mime_type("application/json");
        Ok(blocks(vec![
            ContentBlock::text("Three kinds of content follow: this text, an image, a resource."),
            ContentBlock::image(PNG, "image/png"),
            ContentBlock::resource(resource),
        ]))
    }

    /// Sends three log messages to the client while it runs, at the level `info` (sent when
    /// the client's `logging/setLevel` lets `info` through).
    #[action(read_only)]
    async fn tool_with_logging(&self, f: Context) -> Result<Response, SuiteError> {
        let mut sent = 0;
        for (step, line) in ["started", "processing data", "completed"]
            .iter()
            .enumerate()
        {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            sent += usize::from(f.log(LogLevel::Info, format!("Tool {line}")).await);
        }
        Ok(Response::text(format!("Done: {sent} log messages sent.")))
    }

    /// Sends one log message at the level `info`: only to a client whose level lets it through
    /// (from 2026-07-28, the level its request carries; none when it carries none).
    #[action(read_only)]
    async fn logging_tool(&self, f: Context) -> Result<Response, SuiteError> {
        let sent = f.log(LogLevel::Info, "Tool ran").await;
        Ok(Response::text(format!(
            "Done: {} log messages sent.",
            usize::from(sent)
        )))
    }

    /// Reports its progress (0, 50 and 100 of 100, 50 ms apart) to a client that asks for it.
    #[action(read_only)]
    async fn tool_with_progress(&self, f: Context) -> Result<Response, SuiteError> {
        let mut sent = 0;
        for done in [0.0, 50.0, 100.0] {
            if done > 0.0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let message = format!("{done} of 100");
            sent += usize::from(f.progress(done, Some(100.0), Some(&message)));
        }
        Ok(Response::text(format!(
            "Done: {sent} progress notifications sent."
        )))
    }

    /// Always fails, to show how a tool's failure reads.
    #[action(read_only)]
    async fn error_handling(&self) -> Result<Response, SuiteError> {
        Err(SuiteError::Intentional)
    }

    /// Answers on the call's own stream: this server does not close a call's stream before its
    /// answer (SEP-1699 lets a server do so and a client resume), so there is nothing to resume.
    #[action(read_only)]
    async fn reconnection(&self) -> Result<Response, SuiteError> {
        Ok(Response::text(
            "Answered on the call's own stream, which this server never closes before the answer.",
        ))
    }

    /// Asks the client's model to answer a prompt (sampling) and answers with its reply.
    #[action(read_only)]
    async fn sampling(&self, args: Prompt, f: Context) -> Result<Response, ToolError> {
        let sampled = f.sample(Sampling::new(100).user(args.prompt)).await?;
        let reply = sampled.text().unwrap_or("(no text)");
        Ok(Response::text(format!("LLM response: {reply}")))
    }

    /// Asks the user for a username and an email address (elicitation), and says what they
    /// answered.
    #[action(read_only)]
    async fn elicitation(&self, args: Message, f: Context) -> Result<Response, ToolError> {
        let answer = f.elicit::<Contact>(args.message).await?;
        Ok(Response::text(format!(
            "User response: {}",
            completed(answer)
        )))
    }

    /// Asks the user who they are: up to 2025-11-25 a request on the session; from 2026-07-28
    /// the call's answer on its own stream is `input_required`, never a request of the server's
    /// (SEP-2575).
    #[action(read_only)]
    async fn streaming_elicitation(&self, f: Context) -> Result<Response, ToolError> {
        let answer = f.elicit::<Contact>("Who are you?").await?;
        Ok(Response::text(format!(
            "User response: {}",
            completed(answer)
        )))
    }

    /// Asks the user to review a form whose fields have defaults (SEP-1034).
    #[action(read_only)]
    async fn elicitation_sep1034_defaults(&self, f: Context) -> Result<Response, ToolError> {
        let message = "Please review and update the form fields with defaults";
        let answer = f.elicit::<Profile>(message).await?;
        Ok(Response::text(format!(
            "Elicitation completed: {}",
            completed(answer)
        )))
    }

    /// Needs the client's model (sampling): at MCP 2026-07-28, a request that did not declare
    /// the capability is refused -32021 (`requiredCapabilities: {sampling: {}}`) before the
    /// handler runs.
    #[action(read_only, needs(sampling))]
    async fn missing_capability(&self, f: Context) -> Result<Response, ToolError> {
        let sampled = f.sample(Sampling::new(10).user("Say hello.")).await?;
        let reply = sampled.text().unwrap_or("(no text)");
        Ok(Response::text(format!("LLM response: {reply}")))
    }

    /// Tells every client listening for it that the listing of tools changed.
    #[action]
    async fn trigger_tool_change(&self) -> Result<Response, SuiteError> {
        self.changes.tool_list_changed();
        Ok(Response::text("Told: the tool list changed."))
    }

    /// Tells every client listening for it that the listing of prompts changed.
    #[action]
    async fn trigger_prompt_change(&self) -> Result<Response, SuiteError> {
        self.changes.prompt_list_changed();
        Ok(Response::text("Told: the prompt list changed."))
    }

    /// Asks the user to choose among enumerated options, titled and untitled, single and
    /// multiple, and in the legacy form with `enumNames` (SEP-1330).
    #[action(read_only)]
    async fn elicitation_sep1330_enums(&self, f: Context) -> Result<Response, ToolError> {
        let message = "Please select options from the enum fields";
        let answer = f.elicit::<Choices>(message).await?;
        Ok(Response::text(format!(
            "Elicitation completed: {}",
            completed(answer)
        )))
    }
}

// Someone to reach, as the suite's JSON Schema 2020-12 tool declares them (SEP-1613): an
// address that is a definition of its own with an anchor (`$defs`, `$ref`, `$anchor`), a phone
// or an email (`allOf` of `anyOf`), the phone when it is the contact method and else the email
// (`if`/`then`/`else`), and no other field (`additionalProperties: false`). schemars derives the
// fields; `#[schemars(extend(..))]` adds the rules over them. The tool lists them all, and the
// server refuses any call that breaks one. (`//`, not `///`: a doc comment would be the
// schema's `description`.)
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]},
))]
struct Person {
    // Optional, and never null: `with` lists the value's own schema, `default` lets it be left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Address")]
    address: Option<Address>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ContactMethod")]
    contact_method: Option<ContactMethod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    email: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
struct Address {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    street: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    city: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum ContactMethod {
    Phone,
    Email,
}

/// Echoes someone to reach: a schema of JSON Schema 2020-12 with every keyword the suite
/// checks is kept (`$schema`, `$defs` with `$anchor`, `allOf`, `if`/`then`/`else`,
/// `additionalProperties: false`), each enforced (SEP-1613).
#[tool(name = "json_schema_2020_12_tool", read_only)]
async fn echo_person(person: Person) -> Result<Person, SuiteError> {
    Ok(person)
}

/// Where a message goes: its channel travels in the HTTP header `Mcp-Param-Channel` too.
#[derive(Deserialize, JsonSchema)]
struct Post {
    /// The channel, mirrored in `Mcp-Param-Channel` so that a proxy can route on it.
    channel: String,
    /// The message.
    #[serde(default)]
    text: String,
}

/// Posts a message to a channel. Over streamable HTTP from 2026-07-28 (SEP-2243) the channel
/// is sent in `Mcp-Param-Channel` as well, and a call whose header is missing, is not the
/// body's value or is bad Base64 is refused (HTTP 400, JSON-RPC -32020).
#[tool(name = "test_header_mirror", header(channel = "Channel"))]
async fn post_to_channel(post: Post) -> Result<String, SuiteError> {
    Ok(format!("posted to {}: {}", post.channel, post.text))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    cli::log_to_stderr();
    let handler = PromptsAndResources::default();
    let builder = Server::builder("everything", env!("CARGO_PKG_VERSION"));
    let changes = builder.changes();
    let server = builder
        .instructions("Tools, prompts and resources of every kind MCP has, for testing clients.")
        .tool(SuiteTools {
            changes: changes.clone(),
        })
        .tool(EchoPersonTool)
        .tool(InputRequired)
        .tool(PostToChannelTool)
        // Tools that run as tasks (SEP-2663), and one that never does.
        .tool(task_fixtures::GreetTool)
        .tool(task_fixtures::SlowComputeTool)
        .tool(task_fixtures::FailingJobTool)
        .tool(task_fixtures::ProtocolErrorJobTool)
        .tool(task_fixtures::ConfirmDeleteTool)
        .tool(task_fixtures::MultiInputTool)
        .tool(task_fixtures::TestToolWithTaskTool)
        // Every progress report is sent, however close to the last (the suite's are 50 ms apart).
        .progress_interval(Duration::ZERO)
        .handler(handler.clone())
        .build()?;
    tokio::spawn(handler.update_watched(args.update_every, changes));
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match &args.http {
        None => {
            (server.serve_stdio(StdioOptions::default()))
                .with_graceful_shutdown(stop)
                .await?
        }
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "everything: streamable HTTP on http://{}/mcp",
                listener.local_addr()?
            );
            (server.serve_http(listener, HttpOptions::default()))
                .with_graceful_shutdown(stop)
                .await?
        }
    }
    Ok(())
}
