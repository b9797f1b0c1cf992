//! The `auth/*` client scenarios of the conformance suite, through `client::oauth`: the mock
//! server answers 401 first; the client discovers, registers (a client ID metadata document
//! where the authorization server takes one, else dynamically; pre-registered or client
//! credentials when the scenario's context gives a client), authorizes with PKCE through a
//! user agent that grants at once, lists the tools and calls each, stepping up when a call is
//! challenged.

use mcp_fusion::client::oauth::{Algorithm, HeadlessUserAgent, OAuth, OAuthError, Registration};
use mcp_fusion::client::{Answers, Client, ClientError};
use mcp_fusion::rmcp::model::ProtocolVersion;
use mcp_fusion::rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::Value;

/// Where the authorization server sends the user back (never fetched: the user agent reads it).
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The client's metadata document, as the suite's scenarios expect it.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Runs the `auth/*` scenario `scenario` against the mock server at `server_url`, with the
/// scenario's context (`MCP_CONFORMANCE_CONTEXT`) when it has one.
// `pub` as the conformance client's `main.rs` calls it (its contract with this file).
#[allow(unreachable_pub)]
pub async fn run(scenario: &str, server_url: &str, context: Option<Value>) -> Result<(), Error> {
    let context = context.unwrap_or(Value::Null);
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    let oauth = match scenario {
        "auth/client-credentials-basic" => {
            let (id, secret) = (text("client_id"), text("client_secret"));
            OAuth::client_credentials(id.ok_or("no client_id")?, secret.ok_or("no client_secret")?)
        }
        "auth/client-credentials-jwt" => {
            let algorithm = match text("signing_algorithm").as_deref() {
                Some("ES384") => Algorithm::ES384,
                Some("RS256") => Algorithm::RS256,
                Some("EdDSA") => Algorithm::EdDSA,
                _ => Algorithm::ES256,
            };
            let (id, pem) = (text("client_id"), text("private_key_pem"));
            OAuth::client_credentials_jwt(
                id.ok_or("no client_id")?,
                pem.ok_or("no key")?,
                algorithm,
            )
        }
        "auth/enterprise-managed-authorization" | "auth/wif-jwt-bearer" => {
            return Err(format!(
                "{scenario}: mcp-fusion's OAuth client has no JWT bearer grant (an identity \
                 assertion exchanged for a token); not run"
            )
            .into());
        }
        "auth/dpop" | "auth/dpop-nonce" => {
            return Err(
                format!("{scenario}: rmcp's OAuth client does not do DPoP; not run").into(),
            );
        }
        _ => {
            let registration = match text("client_id") {
                Some(client_id) => Registration::Preregistered {
                    client_id,
                    client_secret: text("client_secret"),
                },
                None => Registration::MetadataDocument {
                    url: CLIENT_METADATA_URL.into(),
                    client_name: "mcp-fusion conformance client".into(),
                },
            };
            OAuth::authorization_code(REDIRECT_URI, HeadlessUserAgent).registration(registration)
        }
    };
    let mut session = oauth.session(server_url)?;
    // The protocol version the suite asks for: 2026-07-28 is discovered (`server/discover`,
    // the version on every request), earlier ones initialized.
    let modern =
        std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").is_ok_and(|v| v.as_str() >= "2026");
    let (client, connection) = session
        .connect(|transport| async move {
            let lifecycle = match modern {
                true => ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
                false => ClientLifecycleMode::Initialize,
            };
            let connection = Answers::new()
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| ClientError::Transport(Box::new(e)))?;
            Ok((Client::new(connection.peer().clone()), connection))
        })
        .await?;
    let tools = session.retry(|| client.list_tools()).await?;
    for tool in tools {
        let name = tool.name.to_string();
        match session.retry(|| client.call_raw(&name, Value::Null)).await {
            Ok(_) => {}
            Err(failed) => match stopped(&failed) {
                // The client gave up on an endless step-up: what the scenario asks.
                true => eprintln!("{name}: {failed}: stopped"),
                false => return Err(failed.into()),
            },
        }
    }
    drop(connection);
    Ok(())
}

/// Whether `failed` is the step-up limit.
fn stopped(failed: &mcp_fusion::client::ClientError) -> bool {
    let mcp_fusion::client::ClientError::Transport(error) = failed else {
        return false;
    };
    matches!(
        error.downcast_ref::<OAuthError>(),
        Some(OAuthError::StepUpLimit { .. })
    )
}
