//! The typed client answers what a server asks it: a form for the user, the client's model,
//! its roots (`client::Answers`), declaring each capability it answers; in memory and over
//! streamable HTTP, at 2025-11-25 (requests on the session) and, for rmcp's client, in
//! 2026-07-28 rounds alike.

#![allow(deprecated)] // Sampling and roots are deprecated by SEP-2577 in rmcp; still served.

use mcp_fusion::client::{Answers, Client, ClientError};
use mcp_fusion::rmcp::model::*;
use mcp_fusion::tools::{ElicitForm, Sampling};
use mcp_fusion::{Context, Server, ToolError, tool};

/// The user's name.
#[derive(serde::Deserialize, ElicitForm)]
struct Name {
    /// What you are called.
    name: String,
}

/// Asks the user, the client's model and the client's roots.
#[tool(name = "desk")]
async fn ask_everyone(f: Context) -> Result<String, ToolError> {
    let name = f
        .elicit::<Name>("What is your name?")
        .await?
        .accepted()?
        .name;
    let sampled = f.sample(Sampling::new(20).user("A greeting?")).await?;
    let roots = f.roots().await?;
    let greeting = sampled.text().unwrap_or_default().to_owned();
    Ok(format!("{greeting}, {name} ({} roots)", roots.len()))
}

fn answers() -> Answers {
    Answers::new()
        .elicitation(|_form| async {
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({"name": "Ada"}))
        })
        .sampling(|_asked| async {
            CreateMessageResult::new(
                SamplingMessage::assistant_text("Hello"),
                "test-model".to_owned(),
            )
        })
        .roots([Root::new("file:///notes")])
}

fn server() -> Server {
    Server::builder("desk", "1")
        .tool(AskEveryoneTool)
        .build()
        .expect("the server builds")
}

#[tokio::test(flavor = "current_thread")]
async fn the_typed_client_answers_forms_sampling_and_roots() {
    let (client, _connection) = answers().in_memory(server()).await.expect("connected");
    let said: String = client.call_as("desk", serde_json::json!({})).await.unwrap();
    assert_eq!(said, "Hello, Ada (1 roots)");

    // A client that answers nothing declares nothing, and is never asked.
    let (client, _connection) = Client::in_memory(server()).await.expect("connected");
    let refused = client
        .call_as::<String>("desk", serde_json::json!({}))
        .await;
    let Err(ClientError::Tool(refused)) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(refused.code(), "CLIENT_UNSUPPORTED");
}

#[tokio::test(flavor = "current_thread")]
async fn the_typed_client_answers_over_http_sessions() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = tokio::spawn(
        server()
            .serve_http(listener, mcp_fusion::server::HttpOptions::default())
            .into_future(),
    );
    let url = format!("http://{addr}/mcp");
    let (client, connection) = answers().connect_http(&url).await.expect("connected");
    let said: String = client.call_as("desk", serde_json::json!({})).await.unwrap();
    assert_eq!(said, "Hello, Ada (1 roots)");
    drop(connection);
    serving.abort();
}
