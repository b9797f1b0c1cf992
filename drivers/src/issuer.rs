//! An authorization server of one's own on a free loopback port, as far as a resource server
//! sees one: its metadata (RFC 8414, naming its `jwks_uri`) and its keys (a JWKS document),
//! with Ed25519 signing keys generated here and JWT access tokens signed with them. Keys can be
//! rotated, every fetch of the keys is counted, and both documents can be moved elsewhere (a
//! redirect, as a compromised or misconfigured host would answer). For OAuth clients it has
//! the endpoints of the grants (`grants`): token (client credentials, authorization code with
//! PKCE, refresh), authorization (granting at once) and dynamic registration; its metadata can
//! be made to name another issuer, and its token endpoint to never answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::grants::{Grants, Registered};

/// Any error of the issuer.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// An Ed25519 signing key and its public JWK.
#[derive(Clone)]
pub struct SigningKey {
    /// Its key id (`kid`).
    pub kid: String,
    encoding: EncodingKey,
    /// The private key as PKCS#8 DER.
    der: Vec<u8>,
    /// The public half, as published.
    pub jwk: Jwk,
}

// The private key is never shown.
impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .field("encoding", &"<redacted>")
            .field("der", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh key, named `kid`.
    pub fn generate(kid: &str) -> SigningKey {
        // PKCS#8 v1 of an Ed25519 private key: this fixed prefix (RFC 8410 §7), then the seed.
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend(random_bytes::<32>());
        let encoding = EncodingKey::from_ed_der(&der);
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::EdDSA)
            .expect("an Ed25519 key has a public JWK");
        jwk.common.key_id = Some(kid.to_owned());
        SigningKey {
            kid: kid.to_owned(),
            encoding,
            der,
            jwk,
        }
    }

    /// The private key in PEM (PKCS#8), as a client holds its `private_key_jwt` key.
    pub fn private_pem(&self) -> String {
        let lines = crate::grants::base64(&self.der);
        format!("-----BEGIN PRIVATE KEY-----\n{lines}\n-----END PRIVATE KEY-----\n")
    }

    /// `claims` signed as a JWT access token (EdDSA, this key's id and the type `at+jwt` in
    /// the header, as RFC 9068 asks).
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_typed(claims, Some("at+jwt"))
    }

    /// `claims` signed with `typ` in the header (`JWT`, as many issuers write; none at all).
    pub fn sign_typed(&self, claims: &Value, typ: Option<&str>) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("claims sign")
    }
}

/// `N` bytes no other run sees: std's per-process random hash keys, drawn again per word.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; N];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(i);
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        chunk.copy_from_slice(&hasher.finish().to_le_bytes()[..chunk.len()]);
    }
    out
}

/// The authorization server: where it listens, its published keys, the key it signs with.
pub struct Issuer {
    /// `http://127.0.0.1:PORT`: its issuer identifier.
    pub url: String,
    published: Arc<Mutex<Vec<Jwk>>>,
    fetches: Arc<AtomicUsize>,
    /// Where its metadata and keys are redirected to, when they are.
    moved: Arc<Mutex<Option<String>>>,
    signing: Arc<Mutex<SigningKey>>,
    grants: Arc<Grants>,
    /// The issuer its metadata names, when it lies.
    claimed: Arc<Mutex<Option<String>>>,
    server: tokio::task::JoinHandle<()>,
}

// Its signing key is not shown.
impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Issuer {
    /// Starts one on a free loopback port, publishing one fresh key (`key-1`).
    pub async fn start() -> Result<Issuer, Error> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let key = SigningKey::generate("key-1");
        let published = Arc::new(Mutex::new(vec![key.jwk.clone()]));
        let fetches = Arc::new(AtomicUsize::new(0));
        let metadata = json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"),
            "token_endpoint": format!("{url}/token"),
            "registration_endpoint": format!("{url}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
        });
        let keys = published.clone();
        let counted = fetches.clone();
        let moved = Arc::new(Mutex::new(None::<String>));
        let claimed = Arc::new(Mutex::new(None::<String>));
        let (metadata_moved, keys_moved, lie) = (moved.clone(), moved.clone(), claimed.clone());
        let signing = Arc::new(Mutex::new(key));
        let grants = Arc::new(Grants::new(url.clone(), signing.clone()));
        let (token, authorize, register) = (grants.clone(), grants.clone(), grants.clone());
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || {
                    let mut metadata = metadata.clone();
                    if let Some(other) = lie.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                        metadata["issuer"] = json!(other);
                    }
                    let moved =
                        redirect(&metadata_moved, "/.well-known/oauth-authorization-server");
                    async move { moved.ok_or(axum::Json(metadata)) }
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let keys = keys.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    let moved = redirect(&keys_moved, "/jwks");
                    async move { moved.ok_or(axum::Json(JwkSet { keys })) }
                }),
            )
            .route(
                "/token",
                axum::routing::post(
                    move |headers: axum::http::HeaderMap,
                          axum::Form(form): axum::Form<HashMap<String, String>>| {
                        token.clone().token(headers, form)
                    },
                ),
            )
            .route(
                "/authorize",
                axum::routing::get(
                    move |axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>| {
                        let answer = authorize.authorize(query);
                        async move { answer }
                    },
                ),
            )
            .route(
                "/register",
                axum::routing::post(move |axum::Json(asked): axum::Json<Value>| {
                    let answer = register.register(asked);
                    async move { answer }
                }),
            );
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Issuer {
            url,
            published,
            fetches,
            moved,
            signing,
            grants,
            claimed,
            server,
        })
    }

    /// A token of this issuer for `audience`, for `subject`, granting `scope` (space-separated,
    /// none when empty), valid for an hour.
    pub fn token(&self, audience: &str, subject: &str, scope: &str) -> String {
        self.sign(&self.claims(audience, subject, scope))
    }

    /// The claims [`token`](Self::token) signs, to alter before [`sign`](Self::sign).
    pub fn claims(&self, audience: &str, subject: &str, scope: &str) -> Value {
        let now = now();
        let mut claims = json!({
            "iss": self.url, "aud": audience, "sub": subject,
            "iat": now, "exp": now + 3600, "client_id": "test-client",
        });
        if !scope.is_empty() {
            claims["scope"] = json!(scope);
        }
        claims
    }

    /// `claims` signed with the current signing key.
    pub fn sign(&self, claims: &Value) -> String {
        self.signing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .sign(claims)
    }

    /// The current signing key.
    pub fn signing_key(&self) -> SigningKey {
        self.signing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A key rotation: a new key `kid` is published beside the old one and signs from now on.
    pub fn rotate(&self, kid: &str) {
        let key = SigningKey::generate(kid);
        self.published
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(key.jwk.clone());
        *self.signing.lock().unwrap_or_else(|p| p.into_inner()) = key;
    }

    /// From now on, its metadata and its keys are answered `307 Temporary Redirect` to the
    /// same path at `origin` (`http://127.0.0.1:PORT`, another issuer's, say).
    pub fn redirect_to(&self, origin: &str) {
        *self.moved.lock().unwrap_or_else(|p| p.into_inner()) = Some(origin.to_owned());
    }

    /// Registers a confidential client (`client_id`, `secret`) that may be given `scopes` (any
    /// when empty), for the client credentials grant or a pre-registered client.
    pub fn register_client(&self, client_id: &str, secret: &str, scopes: &[&str]) {
        let client = Registered {
            secret: Some(secret.to_owned()),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
            jwk: None,
        };
        let mut clients = self
            .grants
            .clients
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        clients.insert(client_id.to_owned(), client);
    }

    /// Registers a client that authenticates with a JWT signed by `key` (`private_key_jwt`,
    /// RFC 7523), for the client credentials grant.
    pub fn register_jwt_client(&self, client_id: &str, key: &Jwk) {
        let client = Registered {
            secret: None,
            scopes: Vec::new(),
            jwk: Some(key.clone()),
        };
        let mut clients = self
            .grants
            .clients
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        clients.insert(client_id.to_owned(), client);
    }

    /// Every token request so far: its form fields, and `auth`, how the client authenticated
    /// (`basic`, `post`, `private_key_jwt`, `none`; `refused` when it did not).
    pub fn token_requests(&self) -> Vec<Value> {
        let requests = self
            .grants
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        requests.clone()
    }

    /// From now on, its token endpoint takes requests and never answers.
    pub fn hang_token_endpoint(&self) {
        self.grants.hang.store(true, Ordering::SeqCst);
    }

    /// The lifetime of the tokens its token endpoint issues from now on (an hour by default).
    pub fn token_lifetime(&self, seconds: u64) {
        self.grants.lifetime.store(seconds, Ordering::SeqCst);
    }

    /// From now on, its metadata names `issuer` as its issuer (a host that lies, or another
    /// server's metadata served here).
    pub fn claim_issuer(&self, issuer: &str) {
        *self.claimed.lock().unwrap_or_else(|p| p.into_inner()) = Some(issuer.to_owned());
    }

    /// How many times its keys were fetched.
    pub fn key_fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

/// The redirect of `path` to where `moved` says, if it says.
fn redirect(moved: &Mutex<Option<String>>, path: &str) -> Option<axum::response::Redirect> {
    let origin = moved.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
    Some(axum::response::Redirect::temporary(&format!(
        "{origin}{path}"
    )))
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
