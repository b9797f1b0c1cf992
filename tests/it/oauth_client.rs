//! OAuth as a client (`client::oauth`, on rmcp's authorization support), against the test
//! suite's own authorization server (`drivers::issuer`, started here) and servers of this
//! crate as OAuth resource servers: client credentials, the authorization code with PKCE and
//! dynamic registration, step-up; the hostile cases (a metadata issuer that does not match, a
//! redirect to another origin, a token endpoint that never answers, an endless step-up); and a
//! gateway whose upstream takes only the gateway's own client credentials.

use std::time::Duration;

use mcp_fusion::client::oauth::{HeadlessUserAgent, OAuth, OAuthError};
use mcp_fusion::client::{Answers, Client, ClientError};
use mcp_fusion::server::HttpOptions;
use mcp_fusion::server::gateway::Upstream;
use mcp_fusion::server::oauth::{JwtVerifier, OAuth as ResourceServer, TokenError, TokenVerifier};
use mcp_fusion::tools::{BoxFuture, Caller};
use mcp_fusion::{Context, Server, ToolError, tool};
use mcp_fusion_drivers::issuer::Issuer;
use serde_json::{Value, json};

/// What a handler sees of its caller.
struct WhoAmI;

/// Tells the caller who it is.
#[tool]
impl WhoAmI {
    /// The caller's subject and scopes.
    #[action(read_only)]
    async fn whoami(&self, f: Context) -> Result<Value, ToolError> {
        let caller = f
            .caller()
            .ok_or_else(|| ToolError::forbidden("No verified caller."))?;
        Ok(json!({"subject": caller.subject(), "scopes": caller.scopes()}))
    }

    /// Only for admins.
    #[action(scopes("admin"))]
    async fn admin(&self) -> Result<&'static str, ToolError> {
        Ok("done")
    }
}

/// The issuer's JWTs, less those revoked: a token can stop being taken before it expires.
#[derive(Clone)]
struct Revocable {
    jwt: std::sync::Arc<JwtVerifier>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    revoked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Revocable {
    /// Every token taken so far is refused from now on.
    fn revoke_all(&self) {
        let seen = self.seen.lock().unwrap().clone();
        self.revoked.lock().unwrap().extend(seen);
    }
}

impl TokenVerifier for Revocable {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>> {
        Box::pin(async move {
            if self.revoked.lock().unwrap().iter().any(|t| t == token) {
                return Err(TokenError::Invalid("revoked".into()));
            }
            self.seen.lock().unwrap().push(token.to_owned());
            self.jwt.verify(token).await
        })
    }
}

/// A resource server of `issuer`'s on a free loopback port: its resource URI.
async fn resource_server(issuer: &Issuer) -> String {
    revocable_server(issuer).await.0
}

/// A resource server of `issuer`'s whose tokens can be revoked: its resource URI, its verifier.
async fn revocable_server(issuer: &Issuer) -> (String, Revocable) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let resource = format!("http://{}/mcp", listener.local_addr().unwrap());
    let jwt = JwtVerifier::new(&issuer.url, &resource).jwks_url(format!("{}/jwks", issuer.url));
    let verifier = Revocable {
        jwt: std::sync::Arc::new(jwt),
        seen: std::sync::Arc::default(),
        revoked: std::sync::Arc::default(),
    };
    let mut options = HttpOptions::default();
    options.oauth = Some(ResourceServer::new(
        &resource,
        &issuer.url,
        verifier.clone(),
    ));
    let server = Server::builder("who", "1").tool(WhoAmI).build().unwrap();
    tokio::spawn(server.serve_http(listener, options).into_future());
    (resource, verifier)
}

fn structured(result: &mcp_fusion::rmcp::model::CallToolResult) -> Value {
    let text = result.content[0].as_text().expect("a text block");
    serde_json::from_str(&text.text).expect("JSON")
}

#[tokio::test]
async fn client_credentials_get_a_token_the_typed_client_calls_with() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("svc", "s3cret", &[]);
    let resource = resource_server(&issuer).await;
    let mut session = OAuth::client_credentials("svc", "s3cret")
        .session(&resource)
        .unwrap();
    let (client, _connection) = Answers::new().connect_oauth(&mut session).await.unwrap();
    let me = client.call("who_am_i.whoami", json!({})).await.unwrap();
    assert_eq!(structured(&me)["subject"], "svc");

    // One token request: client credentials, the secret in the body (the metadata lists
    // `client_secret_post`), for this resource.
    let requests = issuer.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["grant_type"], "client_credentials");
    assert_eq!(requests[0]["auth"], "post");
    assert_eq!(requests[0]["resource"], resource);
    // The secret is never shown.
    assert!(!format!("{session:?}").contains("s3cret"), "{session:?}");
    assert_eq!(session.authorizations(), 1);
}

#[tokio::test]
async fn client_credentials_with_a_signed_assertion_get_a_token() {
    use mcp_fusion::client::oauth::Algorithm;
    use mcp_fusion_drivers::issuer::SigningKey;
    let issuer = Issuer::start().await.unwrap();
    let key = SigningKey::generate("svc-key");
    issuer.register_jwt_client("svc", &key.jwk);
    let resource = resource_server(&issuer).await;
    let oauth = OAuth::client_credentials_jwt("svc", key.private_pem(), Algorithm::EdDSA);
    assert!(!format!("{oauth:?}").contains("PRIVATE KEY"), "{oauth:?}");
    let mut session = oauth.session(&resource).unwrap();
    let (client, _connection) = Answers::new().connect_oauth(&mut session).await.unwrap();
    let me = client.call("who_am_i.whoami", json!({})).await.unwrap();
    assert_eq!(structured(&me)["subject"], "svc");
    let requests = issuer.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["auth"], "private_key_jwt");
    assert_eq!(requests[0]["resource"], resource);
    assert!(requests[0].get("client_secret").is_none());

    // Another key: refused by the issuer, told as such.
    let other = SigningKey::generate("other");
    let mut session = OAuth::client_credentials_jwt("svc", other.private_pem(), Algorithm::EdDSA)
        .session(&resource)
        .unwrap();
    let refused = session.authorize(None).await.unwrap_err();
    assert!(refused.to_string().contains("invalid_client"), "{refused}");
}

#[tokio::test]
async fn a_refused_secret_is_a_clear_error() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("svc", "s3cret", &[]);
    let resource = resource_server(&issuer).await;
    let mut session = OAuth::client_credentials("svc", "wrong")
        .session(&resource)
        .unwrap();
    let refused = session.authorize(None).await.unwrap_err();
    assert!(matches!(refused, OAuthError::Auth(_)), "{refused:?}");
    assert!(refused.to_string().contains("invalid_client"), "{refused}");
    assert!(!refused.to_string().contains("wrong"), "{refused}");
}

#[tokio::test]
async fn the_authorization_code_grant_registers_uses_pkce_and_steps_up() {
    let issuer = Issuer::start().await.unwrap();
    let resource = resource_server(&issuer).await;
    let mut session =
        OAuth::authorization_code("http://localhost:3000/callback", HeadlessUserAgent)
            .scopes(["notes:read"])
            .session(&resource)
            .unwrap();
    let (client, _connection) = Answers::new().connect_oauth(&mut session).await.unwrap();
    let me = client.call("who_am_i.whoami", json!({})).await.unwrap();
    assert_eq!(structured(&me)["scopes"], json!(["notes:read"]));
    assert_eq!(session.authorizations(), 1);

    // `admin` needs a scope the token lacks: 403 insufficient_scope, a step-up asking for the
    // scopes asked before and the challenged one, then the call again on the same connection.
    let done = session
        .retry(|| client.call("who_am_i.admin", json!({})))
        .await
        .unwrap();
    assert_eq!(done.content[0].as_text().unwrap().text, "done");
    assert_eq!(session.authorizations(), 2);
    assert_eq!(session.requested_scopes(), ["notes:read", "admin"]);

    // Each code was exchanged with its PKCE verifier and the resource, by a public client
    // registered dynamically.
    let requests = issuer.token_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for request in &requests {
        assert_eq!(request["grant_type"], "authorization_code");
        assert!(
            request["code_verifier"]
                .as_str()
                .is_some_and(|v| v.len() >= 43)
        );
        assert_eq!(request["resource"], resource);
        assert_eq!(request["auth"], "none");
    }
}

#[tokio::test]
async fn a_metadata_issuer_that_does_not_match_is_refused() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("svc", "s3cret", &[]);
    issuer.claim_issuer("http://127.0.0.1:9/elsewhere");
    let resource = resource_server(&issuer).await;
    let mut session = OAuth::client_credentials("svc", "s3cret")
        .session(&resource)
        .unwrap();
    let refused = session.authorize(None).await.unwrap_err();
    assert!(
        refused.to_string().contains("http://127.0.0.1:9/elsewhere"),
        "{refused}"
    );
    assert!(issuer.token_requests().is_empty(), "no token was asked for");
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused() {
    let issuer = Issuer::start().await.unwrap();
    let other = Issuer::start().await.unwrap();
    issuer.register_client("svc", "s3cret", &[]);
    other.register_client("svc", "s3cret", &[]);
    issuer.redirect_to(&other.url);
    let resource = resource_server(&issuer).await;
    let mut session = OAuth::client_credentials("svc", "s3cret")
        .session(&resource)
        .unwrap();
    let refused = session.authorize(None).await.unwrap_err();
    match &refused {
        OAuthError::Redirected { from, to } => {
            assert!(from.starts_with(&issuer.url), "{refused}");
            assert!(to.starts_with(&other.url), "{refused}");
        }
        other => panic!("not refused for the redirect: {other:?}"),
    }
    assert!(other.token_requests().is_empty() && issuer.token_requests().is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn a_token_endpoint_that_never_answers_is_given_up_at_the_timeout() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("svc", "s3cret", &[]);
    issuer.hang_token_endpoint();
    let resource = resource_server(&issuer).await;
    let mut session = OAuth::client_credentials("svc", "s3cret")
        .timeout(Duration::from_secs(30))
        .session(&resource)
        .unwrap();
    // The clock is paused: the 30 s pass as soon as nothing else can happen.
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let refused = session.authorize(None).await.unwrap_err();
    match &refused {
        OAuthError::TimedOut { url, after } => {
            assert_eq!(url, &format!("{}/token", issuer.url));
            assert_eq!(*after, Duration::from_secs(30));
        }
        other => panic!("not a timeout: {other:?}"),
    }
    assert!(started.elapsed() >= Duration::from_secs(30));
    assert_eq!(issuer.token_requests().len(), 1, "the request reached it");
}

/// A resource that always wants one more scope: every POST is answered 403
/// `insufficient_scope` with a new scope, its metadata naming `issuer`.
async fn greedy(issuer: &Issuer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let metadata =
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [issuer.url]});
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let challenge_base = base.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .route(
            "/mcp",
            axum::routing::post(move || {
                let n = asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"more:{n}\", resource_metadata=\"{challenge_base}/.well-known/oauth-protected-resource/mcp\""
                );
                async move {
                    (
                        axum::http::StatusCode::FORBIDDEN,
                        [(axum::http::header::WWW_AUTHENTICATE, challenge)],
                    )
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{base}/mcp")
}

#[tokio::test]
async fn an_endless_step_up_stops_at_the_limit() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("svc", "s3cret", &[]);
    let resource = greedy(&issuer).await;
    let mut session = OAuth::client_credentials("svc", "s3cret")
        .max_step_ups(3)
        .session(&resource)
        .unwrap();
    let failed = Answers::new()
        .connect_oauth(&mut session)
        .await
        .unwrap_err();
    let ClientError::Transport(error) = &failed else {
        panic!("{failed:?}")
    };
    let error = error.downcast_ref::<OAuthError>().expect("an OAuth error");
    match error {
        OAuthError::StepUpLimit {
            authorizations,
            scope,
        } => {
            assert_eq!(*authorizations, 4, "the first and 3 step-ups");
            assert!(
                scope.as_deref().is_some_and(|s| s.starts_with("more:")),
                "{error}"
            );
        }
        other => panic!("not the step-up limit: {other:?}"),
    }
    assert_eq!(issuer.token_requests().len(), 4);
}

/// The listed tools of `client`, waiting out the gateway's first connection.
async fn listed(client: &Client) -> Vec<String> {
    let tools = client.list_tools().await.unwrap();
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn a_gateway_reaches_an_upstream_with_its_own_client_credentials() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("front-desk", "s3cret", &[]);
    let resource = resource_server(&issuer).await;
    let gateway = Server::builder("front-desk", "1")
        .mount(
            "who",
            Upstream::http(&resource).oauth(OAuth::client_credentials("front-desk", "s3cret")),
        )
        .mount(
            "nope",
            Upstream::http(&resource)
                .oauth(OAuth::client_credentials("front-desk", "stale"))
                .backoff(Duration::from_secs(60), Duration::from_secs(60)),
        )
        .build()
        .unwrap();
    let (client, _connection) = Client::in_memory(gateway).await.unwrap();
    assert!(listed(&client).await.contains(&"who_who_am_i".to_owned()));
    let me = client.call("who_who_am_i.whoami", json!({})).await.unwrap();
    assert_eq!(
        structured(&me)["subject"],
        "front-desk",
        "the gateway's own token"
    );

    // Refused credentials: FORBIDDEN, critical, no retry offered.
    let refused = client
        .call("nope_who_am_i.whoami", json!({}))
        .await
        .unwrap_err();
    let error = &refused.tool_error().expect("an envelope").error;
    assert_eq!(error.code, "FORBIDDEN", "{error:?}");
    assert_eq!(
        error.message,
        "The upstream \"nope\" refused the gateway's credentials."
    );
    assert_eq!(error.retry_after, None);
    let text = refused.tool_error().unwrap().raw.content[0]
        .as_text()
        .unwrap()
        .text
        .clone();
    assert!(text.contains("severity=\"critical\""), "{text}");
    assert!(!text.contains("stale"), "{text}");
}

#[tokio::test]
async fn a_gateway_gets_a_new_token_when_the_upstream_stops_taking_its_own() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("front-desk", "s3cret", &[]);
    let (resource, verifier) = revocable_server(&issuer).await;
    let gateway = Server::builder("front-desk", "1")
        .mount(
            "who",
            Upstream::http(&resource)
                .oauth(OAuth::client_credentials("front-desk", "s3cret"))
                .header("x-tenant", "acme"),
        )
        .build()
        .unwrap();
    let (client, _connection) = Client::in_memory(gateway).await.unwrap();
    assert!(listed(&client).await.contains(&"who_who_am_i".to_owned()));
    client.call("who_who_am_i.whoami", json!({})).await.unwrap();
    assert_eq!(issuer.token_requests().len(), 1);

    // The upstream stops taking the token (revoked): 401 to the forwarded call, a new token
    // (client credentials again), the call once more, answered.
    verifier.revoke_all();
    let me = client.call("who_who_am_i.whoami", json!({})).await.unwrap();
    assert_eq!(structured(&me)["subject"], "front-desk");
    assert_eq!(issuer.token_requests().len(), 2, "one new token");
}

#[tokio::test]
async fn the_refresh_token_renews_an_expired_access_token() {
    let issuer = Issuer::start().await.unwrap();
    let resource = resource_server(&issuer).await;
    // Tokens that expire at once: the next use refreshes.
    issuer.token_lifetime(0);
    let mut session =
        OAuth::authorization_code("http://localhost:3000/callback", HeadlessUserAgent)
            .session(&resource)
            .unwrap();
    session.authorize(None).await.unwrap();
    let first = session.access_token().await.unwrap();
    let requests = issuer.token_requests();
    let grants: Vec<&str> = requests
        .iter()
        .map(|r| r["grant_type"].as_str().unwrap())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert!(first.split('.').count() == 3, "a JWT");
    assert_eq!(
        session.authorizations(),
        1,
        "refreshed, not authorized again"
    );
}

/// An upstream that takes no token: every POST is answered 401 `invalid_token`, its headers
/// recorded (`x-tenant`, `authorization`).
async fn unwelcoming(
    issuer: &Issuer,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>,
) {
    use axum::http::HeaderMap;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let metadata =
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [issuer.url]});
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorded = seen.clone();
    let challenge = format!(
        "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
    );
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .route(
            "/mcp",
            axum::routing::post(move |headers: HeaderMap| {
                let header = |name: &str| {
                    let value = headers.get(name).and_then(|v| v.to_str().ok());
                    value.unwrap_or_default().to_owned()
                };
                recorded
                    .lock()
                    .unwrap()
                    .push((header("x-tenant"), header("authorization")));
                let challenge = challenge.clone();
                async move {
                    (
                        axum::http::StatusCode::UNAUTHORIZED,
                        [(axum::http::header::WWW_AUTHENTICATE, challenge)],
                    )
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("{base}/mcp"), seen)
}

#[tokio::test]
async fn a_gateway_sends_its_headers_and_its_own_token_and_a_refusal_is_final() {
    let issuer = Issuer::start().await.unwrap();
    issuer.register_client("front-desk", "s3cret", &[]);
    let (url, seen) = unwelcoming(&issuer).await;
    let gateway = Server::builder("front-desk", "1")
        .mount(
            "crm",
            Upstream::http(&url)
                .oauth(OAuth::client_credentials("front-desk", "s3cret"))
                .header("x-tenant", "acme")
                .backoff(Duration::from_secs(60), Duration::from_secs(60)),
        )
        .build()
        .unwrap();
    assert_eq!(gateway.reach_upstreams().await, ["crm"]);
    // A token, refused (401); a new token for the challenge, refused again: the gateway stops.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for (tenant, authorization) in &seen {
        assert_eq!(tenant, "acme");
        assert!(authorization.starts_with("Bearer ey"), "{authorization}");
    }
    assert_ne!(seen[0].1, seen[1].1, "a new token for the challenge");
    assert_eq!(issuer.token_requests().len(), 2);

    let (client, _connection) = Client::in_memory(gateway).await.unwrap();
    let refused = client.call("crm_anything", json!({})).await.unwrap_err();
    let error = &refused.tool_error().expect("an envelope").error;
    assert_eq!(error.code, "FORBIDDEN", "{error:?}");
    assert_eq!(error.retry_after, None);
}
