//! The grants of the tests' authorization server ([`Issuer`](crate::issuer::Issuer)): its token
//! endpoint (client credentials with `client_secret_basic` or `client_secret_post`, the
//! authorization code with PKCE S256, refresh), its authorization endpoint (which grants at
//! once, as a user who always consents would), and dynamic registration (RFC 7591). Each token
//! request is recorded for the tests to read; the token endpoint can be made to never answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::{Value, json};
use sha2::Digest;

use crate::issuer::{SigningKey, now};

/// A registered client: its secret (none for a public client) and the scopes it may be given
/// (any when empty).
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) secret: Option<String>,
    pub(crate) scopes: Vec<String>,
    /// The public key of a `private_key_jwt` client.
    pub(crate) jwk: Option<jsonwebtoken::jwk::Jwk>,
}

struct Code {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
    scope: String,
}

struct Refresh {
    client_id: String,
    resource: String,
    scope: String,
}

/// What the grant endpoints share with the issuer.
pub(crate) struct Grants {
    pub(crate) url: String,
    pub(crate) signing: Arc<Mutex<SigningKey>>,
    pub(crate) clients: Mutex<HashMap<String, Registered>>,
    codes: Mutex<HashMap<String, Code>>,
    refreshes: Mutex<HashMap<String, Refresh>>,
    /// Every token request: its form fields, and `auth` (`basic`, `post` or `none`).
    pub(crate) requests: Mutex<Vec<Value>>,
    /// The token endpoint never answers.
    pub(crate) hang: AtomicBool,
    /// The lifetime of the tokens issued, in seconds.
    pub(crate) lifetime: AtomicU64,
    counter: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Grants {
    pub(crate) fn new(url: String, signing: Arc<Mutex<SigningKey>>) -> Grants {
        Grants {
            url,
            signing,
            clients: Mutex::default(),
            codes: Mutex::default(),
            refreshes: Mutex::default(),
            requests: Mutex::default(),
            hang: AtomicBool::new(false),
            lifetime: AtomicU64::new(3600),
            counter: AtomicU64::new(0),
        }
    }

    /// A fresh opaque value (codes, refresh tokens, client IDs).
    fn fresh(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let salt = u64::from_le_bytes(crate::issuer::random_bytes::<8>());
        format!("{prefix}_{n}_{salt:016x}")
    }

    /// A signed access token and its response.
    fn issue(&self, client_id: &str, resource: &str, scope: &str, refresh: bool) -> Response {
        let lifetime = self.lifetime.load(Ordering::SeqCst);
        let now = now();
        // A `jti` of its own: two tokens issued in the same second differ.
        let mut claims = json!({"iss": self.url, "aud": resource, "sub": client_id,
            "client_id": client_id, "iat": now, "exp": now + lifetime, "jti": self.fresh("at")});
        if !scope.is_empty() {
            claims["scope"] = json!(scope);
        }
        let token = lock(&self.signing).sign(&claims);
        let mut body =
            json!({"access_token": token, "token_type": "Bearer", "expires_in": lifetime});
        if !scope.is_empty() {
            body["scope"] = json!(scope);
        }
        if refresh {
            let refresh_token = self.fresh("rt");
            let grant = Refresh {
                client_id: client_id.to_owned(),
                resource: resource.to_owned(),
                scope: scope.to_owned(),
            };
            lock(&self.refreshes).insert(refresh_token.clone(), grant);
            body["refresh_token"] = json!(refresh_token);
        }
        ([(header::CACHE_CONTROL, "no-store")], axum::Json(body)).into_response()
    }

    /// The client a token request authenticates as, and how (`basic`, `post`, `none`); `None`
    /// when it does not.
    fn client(
        &self,
        headers: &HeaderMap,
        form: &HashMap<String, String>,
    ) -> Option<(String, Registered, &'static str)> {
        let basic = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
            .and_then(base64_decode)
            .and_then(|raw| String::from_utf8(raw).ok());
        if form.get("client_assertion_type").map(String::as_str)
            == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        {
            return self.asserted(form.get("client_assertion")?);
        }
        let (id, secret, auth) = match &basic {
            Some(pair) => {
                let (id, secret) = pair.split_once(':').unwrap_or((pair, ""));
                (percent_decode(id), Some(percent_decode(secret)), "basic")
            }
            None => match (form.get("client_id"), form.get("client_secret")) {
                (Some(id), Some(secret)) => (id.clone(), Some(secret.clone()), "post"),
                (Some(id), None) => (id.clone(), None, "none"),
                (None, _) => return None,
            },
        };
        let registered = lock(&self.clients).get(&id).cloned();
        match registered {
            Some(client) if client.secret == secret => Some((id, client, auth)),
            _ => None,
        }
    }

    /// The `private_key_jwt` client whose key signed `assertion` (for this issuer, its `iss`
    /// and `sub` the client ID, unexpired).
    fn asserted(&self, assertion: &str) -> Option<(String, Registered, &'static str)> {
        let clients = lock(&self.clients).clone();
        clients.into_iter().find_map(|(id, client)| {
            let key = jsonwebtoken::DecodingKey::from_jwk(client.jwk.as_ref()?).ok()?;
            let header = jsonwebtoken::decode_header(assertion).ok()?;
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.set_audience(&[&self.url]);
            validation.set_issuer(&[&id]);
            validation.sub = Some(id.clone());
            jsonwebtoken::decode::<Value>(assertion, &key, &validation).ok()?;
            Some((id, client, "private_key_jwt"))
        })
    }

    /// `POST /token`.
    pub(crate) async fn token(
        self: Arc<Self>,
        headers: HeaderMap,
        form: HashMap<String, String>,
    ) -> Response {
        let mut seen: serde_json::Map<String, Value> =
            form.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let client = self.client(&headers, &form);
        seen.insert(
            "auth".into(),
            json!(client.as_ref().map_or("refused", |c| c.2)),
        );
        lock(&self.requests).push(Value::Object(seen));
        if self.hang.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        let Some((client_id, client, _)) = client else {
            return error(StatusCode::UNAUTHORIZED, "invalid_client");
        };
        let field = |name: &str| form.get(name).cloned().unwrap_or_default();
        match form.get("grant_type").map(String::as_str) {
            Some("client_credentials") => {
                let resource = field("resource");
                if resource.is_empty() {
                    return error(StatusCode::BAD_REQUEST, "invalid_target");
                }
                let asked: Vec<&str> = form
                    .get("scope")
                    .map_or(Vec::new(), |s| s.split(' ').collect());
                let allowed =
                    |s: &&str| client.scopes.is_empty() || client.scopes.iter().any(|c| c == s);
                if asked.iter().any(|s| !allowed(s)) {
                    return error(StatusCode::BAD_REQUEST, "invalid_scope");
                }
                let scope = match asked.is_empty() {
                    true => client.scopes.join(" "),
                    false => asked.join(" "),
                };
                self.issue(&client_id, &resource, &scope, false)
            }
            Some("authorization_code") => {
                let Some(code) = lock(&self.codes).remove(&field("code")) else {
                    return error(StatusCode::BAD_REQUEST, "invalid_grant");
                };
                let verifier = field("code_verifier");
                let challenge = base64url(&sha2::Sha256::digest(verifier.as_bytes()));
                if code.client_id != client_id
                    || code.redirect_uri != field("redirect_uri")
                    || code.challenge != challenge
                    || (form.contains_key("resource") && field("resource") != code.resource)
                {
                    return error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                self.issue(&client_id, &code.resource, &code.scope, true)
            }
            Some("refresh_token") => {
                let Some(grant) = lock(&self.refreshes).remove(&field("refresh_token")) else {
                    return error(StatusCode::BAD_REQUEST, "invalid_grant");
                };
                if grant.client_id != client_id {
                    return error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                self.issue(&client_id, &grant.resource, &grant.scope, true)
            }
            _ => error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
        }
    }

    /// `GET /authorize`: grants at once, redirecting with a code, the state and `iss`.
    pub(crate) fn authorize(&self, query: HashMap<String, String>) -> Response {
        let field = |name: &str| query.get(name).cloned().unwrap_or_default();
        let client_id = field("client_id");
        if !lock(&self.clients).contains_key(&client_id)
            || field("response_type") != "code"
            || field("code_challenge_method") != "S256"
            || field("code_challenge").is_empty()
            || field("redirect_uri").is_empty()
        {
            return error(StatusCode::BAD_REQUEST, "invalid_request");
        }
        let code = self.fresh("code");
        let grant = Code {
            client_id,
            redirect_uri: field("redirect_uri"),
            challenge: field("code_challenge"),
            resource: field("resource"),
            scope: field("scope"),
        };
        let mut to = match url::Url::parse(&grant.redirect_uri) {
            Ok(url) => url,
            Err(_) => return error(StatusCode::BAD_REQUEST, "invalid_request"),
        };
        lock(&self.codes).insert(code.clone(), grant);
        to.query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", &field("state"))
            .append_pair("iss", &self.url);
        Redirect::to(to.as_str()).into_response()
    }

    /// `POST /register`: a public client (no secret) unless it asks for a secret method.
    pub(crate) fn register(&self, asked: Value) -> Response {
        let method = asked["token_endpoint_auth_method"]
            .as_str()
            .unwrap_or("none")
            .to_owned();
        let client_id = self.fresh("client");
        let secret = (method.as_str() != "none").then(|| self.fresh("secret"));
        let registered = Registered {
            secret: secret.clone(),
            scopes: Vec::new(),
            jwk: None,
        };
        lock(&self.clients).insert(client_id.clone(), registered);
        let mut body = asked;
        body["client_id"] = json!(client_id);
        body["token_endpoint_auth_method"] = json!(method);
        if let Some(secret) = secret {
            body["client_secret"] = json!(secret);
        }
        (StatusCode::CREATED, axum::Json(body)).into_response()
    }
}

/// An OAuth error response.
fn error(status: StatusCode, code: &str) -> Response {
    (status, axum::Json(json!({"error": code}))).into_response()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64url without padding (PKCE's S256 challenge).
pub(crate) fn base64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            let c = ALPHABET[(n >> (18 - 6 * i) & 63) as usize];
            out.push(match c {
                b'+' => '-',
                b'/' => '_',
                c => char::from(c),
            });
        }
    }
    out
}

/// Standard base64 with padding, in lines of 64 (PEM).
pub(crate) fn base64(bytes: &[u8]) -> String {
    let mut out = base64url(bytes).replace('-', "+").replace('_', "/");
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    let lines: Vec<&str> = out
        .as_bytes()
        .chunks(64)
        .map(|l| std::str::from_utf8(l).unwrap_or(""))
        .collect();
    lines.join("\n")
}

/// Standard base64 (a Basic credential), padding allowed.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut n, mut bits) = (0u32, 0);
    for c in text.trim_end_matches('=').bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        n = n << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((n >> bits & 0xff) as u8);
        }
    }
    Some(out)
}

/// `application/x-www-form-urlencoded` decoding of a Basic credential's halves (RFC 6749
/// §2.3.1).
fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("v={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}
