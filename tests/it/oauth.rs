//! MCP authorization over streamable HTTP, as a host meets it: the billing example as an OAuth
//! resource server (`--oauth-issuer`, `--oauth-audience`), an authorization server of the
//! test's own on loopback (its metadata, its keys, real Ed25519-signed JWTs), and raw HTTP
//! where the refusals are what is tested.

use std::time::Duration;

use mcp_fusion::server::HttpOptions;
use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
use mcp_fusion::{Context, Server, ToolError, tool};
use mcp_fusion_drivers::issuer::{Issuer, SigningKey, now};
use mcp_fusion_drivers::raw_http::{self, Billing, Reply};
use serde_json::{Value, json};

/// The resource URI the billing server is started as (its public URL, behind a proxy).
const AUDIENCE: &str = "https://billing.example/mcp";
const METADATA_URL: &str = "https://billing.example/.well-known/oauth-protected-resource/mcp";

async fn billing(issuer: &Issuer, extra: &[&str]) -> Billing {
    let mut args = vec![
        "--oauth-issuer",
        issuer.url.as_str(),
        "--oauth-audience",
        AUDIENCE,
    ];
    args.extend_from_slice(extra);
    Billing::start(&mcp_fusion_drivers::artifacts::billing(), &args)
        .await
        .expect("the billing server starts")
}

fn call(id: u64, action: &str, arguments: Value) -> Value {
    let mut arguments = arguments;
    arguments["action"] = json!(action);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "billing", "arguments": arguments}})
}

fn get_invoice() -> Value {
    call(1, "get_invoice", json!({"id": "inv_2026_0001"}))
}

fn create_invoice() -> Value {
    call(
        2,
        "create_invoice",
        json!({"customer_email": "a@example.com", "amount_cents": 1200, "currency": "EUR",
               "lines": [{"description": "Tea", "quantity": 1}]}),
    )
}

async fn post(billing: &Billing, token: Option<&str>, message: &Value) -> Reply {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("MCP-Protocol-Version", "2025-06-18")];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    billing.post_json(&headers, message).await
}

/// The `WWW-Authenticate` parameters of a refusal, by name.
fn challenge(reply: &Reply) -> Vec<(String, String)> {
    let value = reply
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("no WWW-Authenticate: {reply:?}"));
    let params = value
        .strip_prefix("Bearer ")
        .unwrap_or_else(|| panic!("not a Bearer challenge: {value}"));
    params
        .split("\", ")
        .map(|p| {
            let (name, value) = p.split_once("=\"").expect("name=\"value\"");
            (name.to_owned(), value.trim_end_matches('"').to_owned())
        })
        .collect()
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A refused request: 401, pointing at the metadata, `invalid_token` saying `why` when a token
/// was presented.
#[track_caller]
fn assert_unauthorized(reply: &Reply, why: Option<&str>) {
    assert_eq!(reply.status, 401, "{reply:?}");
    let params = challenge(reply);
    assert_eq!(param(&params, "resource_metadata"), Some(METADATA_URL));
    match why {
        None => assert_eq!(param(&params, "error"), None, "{params:?}"),
        Some(why) => {
            assert_eq!(param(&params, "error"), Some("invalid_token"));
            let description = param(&params, "error_description").unwrap();
            assert!(description.contains(why), "{description}");
        }
    }
}

#[tokio::test]
async fn a_request_without_a_valid_token_is_refused_401_with_the_metadata_url() {
    let issuer = Issuer::start().await.unwrap();
    let billing = billing(&issuer, &["--stateless"]).await;

    // No token: 401 before anything is read, pointing at the metadata.
    let refused = post(&billing, None, &get_invoice()).await;
    assert_unauthorized(&refused, None);
    assert_eq!(refused.header("connection"), Some("close"));

    // The metadata document, at the endpoint's well-known path and at the root.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = raw_http::get(&billing.addr, path).await;
        assert_eq!(metadata.status, 200, "{path}: {metadata:?}");
        assert_eq!(metadata.header("content-type"), Some("application/json"));
        let document: Value = serde_json::from_str(&metadata.body).unwrap();
        assert_eq!(
            document,
            json!({
                "resource": AUDIENCE,
                "authorization_servers": [issuer.url],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["invoices:write"],
            })
        );
    }

    let valid = issuer.claims(AUDIENCE, "alice", "");
    let mut other_audience = valid.clone();
    other_audience["aud"] = json!("https://other.example/mcp");
    let mut expired = valid.clone();
    expired["exp"] = json!(now() - 3600);
    let mut other_issuer = valid.clone();
    other_issuer["iss"] = json!("https://evil.example");
    let mut no_subject = valid.clone();
    no_subject.as_object_mut().unwrap().remove("sub");
    let cases = [
        (issuer.sign(&other_audience), "another resource"),
        (issuer.sign(&expired), "expired"),
        (issuer.sign(&other_issuer), "another authorization server"),
        (issuer.sign(&no_subject), "required claim"),
        // Signed with a key the issuer never published, under the published key's id.
        (
            SigningKey::generate(&issuer.signing_key().kid).sign(&valid),
            "signature",
        ),
        // `alg: none`, no signature.
        (unsigned(&valid), "algorithm"),
        ("not-a-jwt".to_owned(), "algorithm"),
    ];
    for (token, why) in &cases {
        let refused = post(&billing, Some(token), &get_invoice()).await;
        assert_unauthorized(&refused, Some(why));
    }
    // Not a bearer token at all.
    let basic = billing
        .post_json(
            &[("Authorization", "Basic YWxpY2U6c2VjcmV0")],
            &get_invoice(),
        )
        .await;
    assert_unauthorized(&basic, Some("Bearer"));

    // The valid token is served.
    let served = post(&billing, Some(&issuer.sign(&valid)), &get_invoice()).await;
    assert_eq!(served.status, 200, "{served:?}");
    assert_eq!(served.message()["result"]["isError"], false);
}

/// A JWT with `"alg": "none"` and no signature.
fn unsigned(claims: &Value) -> String {
    let encode = |value: &Value| base64url(value.to_string().as_bytes());
    format!(
        "{}.{}.",
        encode(&json!({"alg": "none", "typ": "JWT"})),
        encode(claims)
    )
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

#[tokio::test]
async fn an_action_whose_scope_the_token_lacks_is_refused_403_naming_it() {
    let issuer = Issuer::start().await.unwrap();
    // Stateless (the front answers plain calls itself) and with sessions (rmcp answers).
    for stateless in [true, false] {
        let billing = billing(&issuer, if stateless { &["--stateless"] } else { &[] }).await;
        let session = match stateless {
            true => None,
            false => Some(open_session(&billing, &issuer.token(AUDIENCE, "alice", "")).await),
        };
        let post = |token: String, message: Value| {
            let billing = &billing;
            let session = session.clone();
            async move {
                let bearer = format!("Bearer {token}");
                let mut headers = vec![
                    ("MCP-Protocol-Version", "2025-06-18"),
                    ("Authorization", bearer.as_str()),
                ];
                if let Some(session) = &session {
                    headers.push(("Mcp-Session-Id", session));
                }
                billing.post_json(&headers, &message).await
            }
        };
        // A session is its subject's: another subject's token cannot use it.
        if let Some(session) = &session {
            let bearer = format!("Bearer {}", issuer.token(AUDIENCE, "mallory", ""));
            let headers = [
                ("Authorization", bearer.as_str()),
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-06-18"),
            ];
            let hijack = billing.post_json(&headers, &get_invoice()).await;
            assert_eq!(hijack.status, 404, "{hijack:?}");
        }
        let reader = issuer.token(AUDIENCE, "alice", "invoices:read");
        let writer = issuer.token(AUDIENCE, "alice", "invoices:read invoices:write");

        let refused = post(reader.clone(), create_invoice()).await;
        assert_eq!(refused.status, 403, "{refused:?}");
        let params = challenge(&refused);
        assert_eq!(param(&params, "error"), Some("insufficient_scope"));
        assert_eq!(param(&params, "scope"), Some("invoices:write"));
        assert_eq!(param(&params, "resource_metadata"), Some(METADATA_URL));
        let body: Value = serde_json::from_str(&refused.body).unwrap();
        assert_eq!(body["error"], "insufficient_scope");
        assert_eq!(body["scope"], "invoices:write");

        // Routing and validation come first: a malformed call is told what is wrong with it.
        let invalid = post(reader.clone(), call(3, "create_invoice", json!({}))).await;
        assert_eq!(invalid.status, 200, "{invalid:?}");
        let text = invalid.message()["result"]["content"][0]["text"].clone();
        assert!(
            text.as_str().unwrap().starts_with("<validation_error"),
            "{text}"
        );

        // A read needs no scope; the write runs with its scope.
        let read = post(reader.clone(), get_invoice()).await;
        assert_eq!(read.message()["result"]["isError"], false, "{read:?}");
        let created = post(writer.clone(), create_invoice()).await;
        assert_eq!(created.status, 200, "{created:?}");
        let result = &created.message()["result"];
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(json_text(result)["status"], "draft");
    }
}

/// The JSON a grouped tool's result carries as its text.
fn json_text(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {result}"))
}

async fn open_session(billing: &Billing, token: &str) -> String {
    let bearer = format!("Bearer {token}");
    let reply = billing
        .post_json(&[("Authorization", &bearer)], &raw_http::initialize())
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let session = reply.header("mcp-session-id").unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    billing.post_json(&headers, &initialized).await;
    session
}

#[tokio::test]
async fn a_rotated_key_is_picked_up() {
    let issuer = Issuer::start().await.unwrap();
    let billing = billing(&issuer, &["--stateless"]).await;
    let before = issuer.token(AUDIENCE, "alice", "");
    assert_eq!(
        post(&billing, Some(&before), &get_invoice()).await.status,
        200
    );
    assert_eq!(
        post(&billing, Some(&before), &get_invoice()).await.status,
        200
    );
    assert_eq!(issuer.key_fetches(), 1, "the keys are cached");

    issuer.rotate("key-2");
    let after = issuer.token(AUDIENCE, "alice", "");
    assert_eq!(
        post(&billing, Some(&after), &get_invoice()).await.status,
        200
    );
    assert_eq!(
        issuer.key_fetches(),
        2,
        "an unknown key id fetches the keys again"
    );
    // Tokens of the old key stay valid while it is published.
    assert_eq!(
        post(&billing, Some(&before), &get_invoice()).await.status,
        200
    );

    // A made-up key id does not make the server fetch the keys on every request.
    let forged = SigningKey::generate("key-9").sign(&issuer.claims(AUDIENCE, "alice", ""));
    for _ in 0..3 {
        let refused = post(&billing, Some(&forged), &get_invoice()).await;
        assert_unauthorized(&refused, Some("key"));
    }
    assert!(issuer.key_fetches() <= 3, "{}", issuer.key_fetches());
}

#[tokio::test]
async fn subjects_share_no_rate_limit_budget_whatever_their_arguments_say() {
    let issuer = Issuer::start().await.unwrap();
    let billing = billing(&issuer, &["--stateless", "--rate-limit", "2/60"]).await;
    let alice = issuer.token(AUDIENCE, "alice", "");
    let bob = issuer.token(AUDIENCE, "bob", "");
    let list = |email: &str| call(4, "list_invoices", json!({"customer_email": email}));
    let code = |reply: Reply| -> String {
        let text = reply.message()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        if text.starts_with("<validation_error") {
            return "VALIDATION_ERROR".to_owned();
        }
        match text.split_once("code=\"") {
            Some((_, rest)) => rest.split('"').next().unwrap().to_owned(),
            None => "ok".to_owned(),
        }
    };
    // Alice spends her budget, whatever customer her arguments name.
    assert_eq!(
        code(post(&billing, Some(&alice), &list("a@x.com")).await),
        "ok"
    );
    assert_eq!(
        code(post(&billing, Some(&alice), &list("b@x.com")).await),
        "ok"
    );
    assert_eq!(
        code(post(&billing, Some(&alice), &list("c@x.com")).await),
        "RATE_LIMITED"
    );
    // Bob's budget is his own, even when his arguments name Alice's customers.
    assert_eq!(
        code(post(&billing, Some(&bob), &list("a@x.com")).await),
        "ok"
    );
    assert_eq!(
        code(post(&billing, Some(&bob), &list("c@x.com")).await),
        "ok"
    );
    // No argument names the budget: one that tries is not even a valid call.
    let spoof = call(5, "list_invoices", json!({"sub": "bob"}));
    assert_eq!(
        code(post(&billing, Some(&alice), &spoof).await),
        "VALIDATION_ERROR"
    );

    // Refusals cost nothing: a flood without a valid token leaves the budgets alone.
    let carol = issuer.token(AUDIENCE, "carol", "");
    for _ in 0..20 {
        assert_eq!(post(&billing, None, &list("a@x.com")).await.status, 401);
        assert_eq!(
            post(&billing, Some("forged"), &list("a@x.com"))
                .await
                .status,
            401
        );
    }
    assert_eq!(
        code(post(&billing, Some(&carol), &list("a@x.com")).await),
        "ok"
    );
}

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
        Ok(json!({
            "subject": caller.subject(),
            "scopes": caller.scopes(),
            "client_id": caller.claim("client_id"),
        }))
    }

    /// Only for admins.
    #[action(scopes("admin"))]
    async fn admin(&self) -> Result<&'static str, ToolError> {
        Ok("done")
    }
}

#[tokio::test]
async fn handlers_read_the_verified_caller_and_tools_list_shows_scopes() {
    let issuer = Issuer::start().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let verifier =
        JwtVerifier::new(&issuer.url, &resource).jwks_url(format!("{}/jwks", issuer.url));
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.oauth = Some(OAuth::jwt(verifier));
    let server = Server::builder("who", "1").tool(WhoAmI).build().unwrap();
    let serving = tokio::spawn(server.serve_http(listener, options).into_future());

    let token = issuer.token(&resource, "alice", "invoices:read");
    let bearer = format!("Bearer {token}");
    let headers = [("Authorization", bearer.as_str())];
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "who_am_i", "arguments": {"action": "whoami"}}});
    let reply = raw_http::post(&addr, &headers, message.to_string().as_bytes()).await;
    let result = &reply.message()["result"];
    assert_eq!(
        json_text(result),
        json!({"subject": "alice", "scopes": ["invoices:read"], "client_id": "test-client"}),
        "{result}"
    );

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let reply = raw_http::post(&addr, &headers, list.to_string().as_bytes()).await;
    let tool = &reply.message()["result"]["tools"][0];
    assert_eq!(
        tool["_meta"][mcp_fusion::tools::SCOPES_KEY],
        json!({"who_am_i.admin": ["admin"]})
    );

    // A 401 points at the metadata the resource URI names, served here.
    let refused = raw_http::post(&addr, &[], message.to_string().as_bytes()).await;
    let params = challenge(&refused);
    let url = param(&params, "resource_metadata").unwrap();
    assert_eq!(
        url,
        format!("http://{addr}/.well-known/oauth-protected-resource/mcp")
    );
    let metadata = raw_http::get(&addr, "/.well-known/oauth-protected-resource/mcp").await;
    let document: Value = serde_json::from_str(&metadata.body).unwrap();
    assert_eq!(document["resource"], resource);
    assert_eq!(document["scopes_supported"], json!(["admin"]));
    serving.abort();
}

#[tokio::test]
async fn the_official_typescript_sdk_client_lists_and_calls_with_a_bearer_token() {
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk-client");
    assert!(
        client
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "the official TypeScript SDK client is not installed: run `cargo xtask setup`"
    );
    let issuer = Issuer::start().await.unwrap();
    let billing = billing(&issuer, &[]).await;
    let url = format!("http://{}/mcp", billing.addr);
    let steps = json!([
        {"list": true},
        {"call": "billing", "arguments": {"action": "get_invoice", "id": "inv_2026_0001"}},
        {"call": "billing", "arguments": {"action": "create_invoice", "customer_email": "a@example.com",
            "amount_cents": 100, "currency": "EUR",
            "lines": [{"description": "Tea", "quantity": 1}]}},
    ]);
    let run = |token: Option<String>| {
        let mut command = tokio::process::Command::new("node");
        command
            .arg(client.join("client.mjs"))
            .arg(&url)
            .env("MCP_STEPS", steps.to_string())
            .env_remove("MCP_BEARER_TOKEN")
            .kill_on_drop(true);
        if let Some(token) = token {
            command.env("MCP_BEARER_TOKEN", token);
        }
        async move {
            let output = tokio::time::timeout(Duration::from_secs(60), command.output())
                .await
                .expect("the SDK client finishes within a minute")
                .expect("node runs");
            let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(|line| serde_json::from_str(line).expect("one JSON line per step"))
                .collect();
            (output.status.code(), lines, output.stderr)
        }
    };

    let (status, lines, stderr) =
        run(Some(issuer.token(AUDIENCE, "alice", "invoices:write"))).await;
    assert_eq!(
        status,
        Some(0),
        "{lines:?} {}",
        String::from_utf8_lossy(&stderr)
    );
    assert_eq!(lines[0]["tools"], json!(["billing"]), "{lines:?}");
    assert_eq!(lines[1]["result"]["isError"], false, "{lines:?}");
    assert_eq!(json_text(&lines[1]["result"])["id"], "inv_2026_0001");
    assert_eq!(lines[2]["result"]["isError"], false, "{lines:?}");

    // Without a token the SDK cannot even connect: the server answers 401.
    let (status, lines, _) = run(None).await;
    assert_eq!(status, Some(2), "{lines:?}");
    assert_eq!(lines[0]["step"], "connect");
    assert_eq!(lines[0]["code"], 401, "{lines:?}");
}

#[tokio::test]
async fn a_token_that_cannot_be_checked_now_is_503_not_401() {
    // The issuer's keys are where nothing listens: the client keeps its token and retries.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let nowhere = format!("http://{}/jwks", closed.local_addr().unwrap());
    drop(closed);
    let issuer = Issuer::start().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.oauth = Some(OAuth::jwt(
        JwtVerifier::new(&issuer.url, AUDIENCE).jwks_url(nowhere),
    ));
    let server = Server::builder("who", "1").tool(WhoAmI).build().unwrap();
    let serving = tokio::spawn(server.serve_http(listener, options).into_future());
    let bearer = format!("Bearer {}", issuer.token(AUDIENCE, "alice", ""));
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for _ in 0..2 {
        let reply = raw_http::post(
            &addr,
            &[("Authorization", &bearer)],
            message.to_string().as_bytes(),
        )
        .await;
        assert_eq!(reply.status, 503, "{reply:?}");
        assert_eq!(reply.header("retry-after"), Some("5"));
    }
    serving.abort();
}

/// A gateway verifying tokens holds its mounted tools to scopes as its own: those an
/// mcp-fusion upstream declares for each action in its tools' `_meta` (billing's writes need
/// `invoices:write`), and those configured for an upstream (`Upstream::scopes`). A call the
/// token may not make is refused `403 insufficient_scope` before anything is forwarded.
#[tokio::test]
async fn a_mounted_tool_whose_scope_the_token_lacks_is_refused_403_unforwarded() {
    use mcp_fusion::server::gateway::Upstream;
    use mcp_fusion_drivers::artifacts;

    let issuer = Issuer::start().await.unwrap();
    let log =
        std::env::temp_dir().join(format!("mcp-fusion-oauth-{}-calls.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let billing = artifacts::billing();
    let driver = artifacts::driver("upstream");
    let server = Server::builder("gateway", "1")
        .mount(
            "books",
            Upstream::command(billing.to_string_lossy(), Vec::<String>::new()),
        )
        .mount(
            "t",
            Upstream::command(driver.to_string_lossy(), ["--log", log.to_str().unwrap()])
                .scopes(["echo:use"]),
        )
        .build()
        .unwrap();
    assert_eq!(server.reach_upstreams().await, Vec::<String>::new());
    let mut options = HttpOptions::default();
    options.stateless = true;
    let verifier =
        JwtVerifier::new(&issuer.url, &resource).jwks_url(format!("{}/jwks", issuer.url));
    options.oauth = Some(OAuth::jwt(verifier));
    let serving = tokio::spawn(server.serve_http(listener, options).into_future());

    let metadata = raw_http::get(&addr, "/.well-known/oauth-protected-resource/mcp").await;
    let document: Value = serde_json::from_str(&metadata.body).unwrap();
    assert_eq!(
        document["scopes_supported"],
        json!(["echo:use", "invoices:write"]),
        "{document}"
    );
    let post = |token: String, name: &str, arguments: Value| {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let addr = addr.clone();
        async move {
            let bearer = format!("Bearer {token}");
            let headers = [("Authorization", bearer.as_str())];
            raw_http::post(&addr, &headers, message.to_string().as_bytes()).await
        }
    };
    let create = json!({"action": "create_invoice", "customer_email": "a@example.com",
        "amount_cents": 1200, "currency": "EUR", "lines": [{"description": "Tea", "quantity": 1}]});
    let echo = json!({"text": "hi"});
    let nobody = issuer.token(&resource, "alice", "");
    let writer = issuer.token(&resource, "alice", "invoices:write echo:use");

    // The scopes the upstream declares: a write needs its scope, a read needs none.
    let refused = post(nobody.clone(), "books_billing", create.clone()).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    let params = challenge(&refused);
    assert_eq!(param(&params, "error"), Some("insufficient_scope"));
    assert_eq!(param(&params, "scope"), Some("invoices:write"));
    let read = json!({"action": "get_invoice", "id": "inv_2026_0001"});
    let served = post(nobody.clone(), "books_billing", read).await;
    assert_eq!(served.message()["result"]["isError"], false, "{served:?}");
    // The action is the one the discriminator names, not any value that names a read.
    let disguised = json!({"customer_email": "get_invoice", "action": "create_invoice",
        "amount_cents": 1200, "currency": "EUR", "lines": [{"description": "Tea", "quantity": 1}]});
    let refused = post(nobody.clone(), "books_billing", disguised).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    // The scopes configured for an upstream whose tools declare none.
    let refused = post(nobody.clone(), "t_echo", echo.clone()).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(param(&challenge(&refused), "scope"), Some("echo:use"));

    // With the scopes, both are forwarded and answered.
    let created = post(writer.clone(), "books_billing", create).await;
    let result = &created.message()["result"];
    assert_eq!(result["isError"], false, "{created:?}");
    assert_eq!(json_text(result)["status"], "draft");
    let echoed = post(writer, "t_echo", echo).await;
    assert_eq!(echoed.message()["result"]["content"][0]["text"], "hi");
    // The refused call never reached the upstream: one call, the one with the scope.
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let forwarded: Vec<&str> = calls.lines().filter(|l| l.starts_with("call ")).collect();
    assert_eq!(forwarded, ["call echo traceparent=null"], "{calls}");
    let _ = std::fs::remove_file(&log);
    serving.abort();
}

/// The issuer's keys are fetched from where the verifier was told, never where a redirect
/// points: an issuer whose metadata or keys redirect to another host (here another issuer, whose
/// keys sign a token naming the first) cannot hand the verifier keys of someone else's, and a
/// redirect to plain http is not followed either. The token is refused as one that cannot be
/// checked now (503), never accepted.
#[tokio::test]
async fn the_issuer_keys_are_not_fetched_through_a_redirect() {
    use mcp_fusion::server::oauth::{TokenError, TokenVerifier};
    let trusted = Issuer::start().await.unwrap();
    let mallory = Issuer::start().await.unwrap();
    // Mallory's key signs a token that names the trusted issuer.
    let forged = mallory.sign(&trusted.claims(AUDIENCE, "mallory", "invoices:write"));
    let discovered = || JwtVerifier::new(&trusted.url, AUDIENCE);
    let given =
        || JwtVerifier::new(&trusted.url, AUDIENCE).jwks_url(format!("{}/jwks", trusted.url));
    // Where nothing redirects, the trusted issuer's own token is accepted, the forged one not.
    let own = trusted.token(AUDIENCE, "alice", "");
    for verifier in [discovered(), given()] {
        assert_eq!(verifier.verify(&own).await.unwrap().subject(), "alice");
        assert!(matches!(
            verifier.verify(&forged).await,
            Err(TokenError::Invalid(_))
        ));
    }
    // Its metadata and its keys now redirect to Mallory's.
    trusted.redirect_to(&mallory.url);
    for verifier in [discovered(), given()] {
        let refused = verifier.verify(&forged).await;
        assert!(
            matches!(&refused, Err(TokenError::Unavailable(why)) if why.contains("redirect")),
            "{refused:?}"
        );
    }
}

/// An access token says it is one (RFC 9068 §4: the header's `typ` is `at+jwt`, or
/// `application/at+jwt`, in any case): another JWT of the same issuer, for the same audience
/// (an ID token, a token of another kind), is refused by default.
#[tokio::test]
async fn a_jwt_that_is_not_typed_as_an_access_token_is_refused() {
    use mcp_fusion::server::oauth::{TokenError, TokenVerifier};
    let issuer = Issuer::start().await.unwrap();
    let verifier = JwtVerifier::new(&issuer.url, AUDIENCE).jwks_url(format!("{}/jwks", issuer.url));
    let claims = issuer.claims(AUDIENCE, "alice", "");
    let key = issuer.signing_key();
    for typ in [
        "at+jwt",
        "application/at+jwt",
        "AT+JWT",
        "Application/At+Jwt",
    ] {
        let token = key.sign_typed(&claims, Some(typ));
        assert!(verifier.verify(&token).await.is_ok(), "{typ}");
    }
    for typ in [
        Some("JWT"),
        None,
        Some("id_token+jwt"),
        Some("at+jwt+other"),
    ] {
        let token = key.sign_typed(&claims, typ);
        let refused = verifier.verify(&token).await;
        assert!(
            matches!(&refused, Err(TokenError::Invalid(why)) if why.contains("at+jwt")),
            "{typ:?}: {refused:?}"
        );
    }
}

/// An issuer that does not type its access tokens (`JWT`, or no `typ`) is served with
/// `require_at_jwt(false)`: its tokens are then checked as any other, and still refused when
/// anything else is wrong.
#[tokio::test]
async fn an_issuer_that_does_not_type_its_tokens_is_served_when_told() {
    use mcp_fusion::server::oauth::{TokenError, TokenVerifier};
    let issuer = Issuer::start().await.unwrap();
    let verifier = JwtVerifier::new(&issuer.url, AUDIENCE)
        .jwks_url(format!("{}/jwks", issuer.url))
        .require_at_jwt(false);
    let key = issuer.signing_key();
    for typ in [Some("JWT"), None, Some("at+jwt")] {
        let token = key.sign_typed(&issuer.claims(AUDIENCE, "alice", ""), typ);
        let caller = verifier.verify(&token).await;
        assert_eq!(
            caller.map(|c| c.subject().to_owned()),
            Ok("alice".to_owned()),
            "{typ:?}"
        );
        let elsewhere = key.sign_typed(
            &issuer.claims("https://other.example/mcp", "alice", ""),
            typ,
        );
        assert!(
            matches!(
                verifier.verify(&elsewhere).await,
                Err(TokenError::Invalid(_))
            ),
            "{typ:?}: for another audience"
        );
    }
}
