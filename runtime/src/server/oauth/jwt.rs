//! JWT access tokens checked against the authorization server's published keys (JWKS),
//! fetched when first needed and again when they age or a token names a key not seen yet (a
//! rotation). The cryptography is `jsonwebtoken`'s.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::verifier::{TokenError, TokenVerifier};
use super::well_known::split_url;
use crate::tool::BoxFuture;
use crate::tool::Caller;

/// Checks JWT access tokens (RFC 9068): typed as one (`typ` `at+jwt`, unless
/// [`require_at_jwt(false)`](Self::require_at_jwt)), signed by one of the issuer's keys with an
/// allowed algorithm, issued by `issuer` for `audience`, unexpired (within the leeway), naming
/// a subject. The keys are the issuer's JWKS, at the URL given or at the `jwks_uri` of the
/// issuer's metadata (RFC 8414, then OpenID Connect discovery), cached, fetched again after
/// `max_key_age` and when a token names an unknown key id (at most once per
/// `unknown_key_cooldown`).
///
/// The metadata and the keys are fetched from where they were asked, following a redirect only
/// to https on the same origin (at most 3): a redirect to another host or to plain http is not
/// followed, and the token cannot be checked meanwhile (`503`).
///
/// Its scopes are the token's `scope` claim (space-separated), or `scp` (a list or a string).
/// A token once accepted is taken again without a second check until it expires, for at most
/// 5 minutes (4,096 tokens kept): a client sends the same token with each call.
/// Over HTTPS, enable a TLS backend of `reqwest` in the application
/// (`reqwest = { version = "0.13", features = ["rustls"] }`): this crate chooses none.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::oauth::{Algorithm, JwtVerifier};
///
/// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
///     .jwks_url("https://auth.example.com/jwks")
///     .algorithms([Algorithm::RS256, Algorithm::ES256])
///     .leeway(Duration::from_secs(30));
/// assert_eq!(verifier.issuer(), "https://auth.example.com");
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    jwks_url: Option<String>,
    algorithms: Vec<Algorithm>,
    at_jwt: bool,
    leeway: Duration,
    max_key_age: Duration,
    unknown_key_cooldown: Duration,
    keys: Arc<Keys>,
    checked: Arc<Checked>,
}

/// Tokens already checked, with their callers, until they expire (at most [`CHECKED_FOR`]): a
/// client sends the same token with each call, so its signature is checked once.
#[derive(Default)]
struct Checked(std::sync::Mutex<std::collections::HashMap<Box<str>, (Caller, Instant)>>);

/// How long a checked token is taken without checking it again (its own expiry first).
const CHECKED_FOR: Duration = Duration::from_secs(300);

/// How many checked tokens are kept at most.
const CHECKED_MAX: usize = 4096;

impl Checked {
    fn get(&self, token: &str) -> Option<Caller> {
        let checked = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (caller, until) = checked.get(token)?;
        (Instant::now() < *until).then(|| caller.clone())
    }

    fn put(&self, token: &str, caller: &Caller, expires: u64) {
        let left = Duration::from_secs(expires.saturating_sub(unix_now()));
        let until = Instant::now() + left.min(CHECKED_FOR);
        let mut checked = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if checked.len() >= CHECKED_MAX {
            let now = Instant::now();
            checked.retain(|_, (_, until)| *until > now);
            if checked.len() >= CHECKED_MAX {
                checked.clear();
            }
        }
        checked.insert(token.into(), (caller.clone(), until));
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("jwks_url", &self.jwks_url)
            .field("algorithms", &self.algorithms)
            .field("at_jwt", &self.at_jwt)
            .finish_non_exhaustive()
    }
}

/// The keys last fetched, and the one fetch at a time.
#[derive(Default)]
struct Keys {
    set: RwLock<Option<Arc<KeySet>>>,
    fetching: tokio::sync::Mutex<Fetches>,
}

/// When keys were last fetched because a token named an unknown one, and when a fetch last
/// failed: neither is tried again within the cooldown.
#[derive(Default)]
struct Fetches {
    for_unknown: Option<Instant>,
    failed: Option<Instant>,
}

struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
}

struct Key {
    id: Option<String>,
    algorithm: Option<Algorithm>,
    key: DecodingKey,
}

impl JwtVerifier {
    /// Tokens issued by `issuer` (its `iss`) for `audience` (their `aud`: this server's
    /// resource URI), typed `at+jwt`. Allowed algorithms: the asymmetric ones (RS*, PS*,
    /// ES256, ES384, EdDSA); 60 s of leeway on `exp` and `nbf`; keys kept 10 minutes, an
    /// unknown key id fetched again at most every 10 s.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtVerifier {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_url: None,
            algorithms: vec![
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::EdDSA,
            ],
            at_jwt: true,
            leeway: Duration::from_secs(60),
            max_key_age: Duration::from_secs(600),
            unknown_key_cooldown: Duration::from_secs(10),
            keys: Arc::default(),
            checked: Arc::default(),
        }
    }

    /// Where the issuer's keys are (a JWKS document), instead of the `jwks_uri` its metadata
    /// names.
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.checked = Arc::default();
        self.jwks_url = Some(url.into());
        self.keys = Arc::default();
        self
    }

    /// The signature algorithms accepted; any other is refused, `none` always.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.checked = Arc::default();
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Whether a token's header must say it is an access token: `typ` `at+jwt` (or
    /// `application/at+jwt`, in any case), as RFC 9068 §4 asks of a resource server. `true` by
    /// default, so that another JWT the issuer signs for the same audience (an ID token, say)
    /// is not taken for an access token. `false` for an issuer that does not type its access
    /// tokens so (many write `JWT`, or no `typ`): the issuer, audience, signature and expiry
    /// are checked all the same.
    ///
    /// ```
    /// use mcp_fusion::server::oauth::JwtVerifier;
    ///
    /// // An issuer whose access tokens say `"typ": "JWT"`.
    /// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
    ///     .require_at_jwt(false);
    /// # let _ = verifier;
    /// ```
    pub fn require_at_jwt(mut self, required: bool) -> Self {
        self.checked = Arc::default();
        self.at_jwt = required;
        self
    }

    /// How far `exp` and `nbf` may be off (clock skew).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.checked = Arc::default();
        self.leeway = leeway;
        self
    }

    /// How long fetched keys are used before they are fetched again.
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// The least time between two fetches made because a token named a key id not among the
    /// keys (a rotation, or a forged token), and after a fetch that failed (the keys at hand are
    /// used meanwhile): bounds what made-up key ids and an unreachable issuer cost.
    pub fn unknown_key_cooldown(mut self, cooldown: Duration) -> Self {
        self.unknown_key_cooldown = cooldown;
        self
    }

    /// The issuer tokens must name.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audience tokens must name.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    async fn check(&self, token: &str) -> Result<Caller, TokenError> {
        if let Some(caller) = self.checked.get(token) {
            return Ok(caller);
        }
        let invalid = |why: &str| TokenError::Invalid(why.to_owned());
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("the token is not a JWT signed with a known algorithm"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid("the token's signing algorithm is not accepted"));
        }
        if self.at_jwt && !is_access_token(header.typ.as_deref()) {
            return Err(invalid(
                "the token is not typed as an access token (its header's typ is not at+jwt)",
            ));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.leeway.as_secs();
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| TokenError::Invalid(refusal(e.kind()).to_owned()))?;
        let claims = data.claims;
        let subject = match claims.get("sub") {
            Some(Value::String(sub)) if !sub.is_empty() => sub.clone(),
            _ => return Err(invalid("the token names no subject")),
        };
        let scopes: Vec<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(scopes)) => scopes.split(' ').map(str::to_owned).collect(),
            Some(Value::Array(scopes)) => scopes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let scopes = scopes.into_iter().filter(|s| !s.is_empty());
        let expires = claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        let caller = Caller::with_claims(subject, scopes, claims);
        self.checked.put(token, &caller, expires);
        Ok(caller)
    }

    /// The key of id `kid` (or the only key for `alg` when the token names none), fetching the
    /// keys when they are missing, old, or lack it.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, TokenError> {
        let current = self.current();
        let fresh = |set: &KeySet| set.fetched.elapsed() < self.max_key_age;
        if let Some(set) = current.as_deref().filter(|set| fresh(set))
            && let Some(key) = set.find(kid, alg)
        {
            return Ok(key);
        }
        let mut fetches = self.keys.fetching.lock().await;
        // Someone else may have fetched them while this call waited.
        let current = self.current();
        if let Some(set) = current.as_deref().filter(|set| fresh(set)) {
            if let Some(key) = set.find(kid, alg) {
                return Ok(key);
            }
            let cooling = fetches
                .for_unknown
                .is_some_and(|at| at.elapsed() < self.unknown_key_cooldown);
            if cooling {
                return Err(unknown_key());
            }
            fetches.for_unknown = Some(Instant::now());
        }
        // Old keys still check the tokens they signed until new ones arrive.
        let stale = || current.as_deref().and_then(|set| set.find(kid, alg));
        let failing = fetches
            .failed
            .is_some_and(|at| at.elapsed() < self.unknown_key_cooldown);
        if failing {
            return stale().ok_or_else(|| {
                TokenError::Unavailable("the issuer's keys could not be fetched lately".into())
            });
        }
        match self.fetch().await {
            Ok(set) => {
                fetches.failed = None;
                let set = Arc::new(set);
                *self.keys.set.write().unwrap_or_else(|p| p.into_inner()) = Some(set.clone());
                set.find(kid, alg).ok_or_else(unknown_key)
            }
            Err(why) => {
                fetches.failed = Some(Instant::now());
                tracing::warn!(issuer = %self.issuer, "oauth: the issuer's keys could not be fetched: {why}");
                stale().ok_or(TokenError::Unavailable(why))
            }
        }
    }

    fn current(&self) -> Option<Arc<KeySet>> {
        self.keys
            .set
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn fetch(&self) -> Result<KeySet, String> {
        let url = match &self.jwks_url {
            Some(url) => url.clone(),
            None => self.discover().await?,
        };
        let set: JwkSet = get_json(&url).await?;
        let keys: Vec<Key> = set.keys.iter().filter_map(Key::of).collect();
        if keys.is_empty() {
            return Err(format!("{url} holds no usable key"));
        }
        Ok(KeySet {
            keys,
            fetched: Instant::now(),
        })
    }

    /// The `jwks_uri` of the issuer's metadata: OAuth (RFC 8414 §3, the well-known path before
    /// the issuer's path), then OpenID Connect discovery.
    async fn discover(&self) -> Result<String, String> {
        let issuer = self.issuer.trim_end_matches('/');
        let (origin, path) = split_url(issuer)
            .ok_or_else(|| format!("the issuer {issuer:?} is not an http(s) URL"))?;
        let path = path.trim_end_matches('/');
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut failures = Vec::new();
        for url in candidates {
            match get_json::<Map<String, Value>>(&url).await {
                Ok(metadata) => match metadata.get("jwks_uri").and_then(Value::as_str) {
                    Some(jwks) => return Ok(jwks.to_owned()),
                    None => failures.push(format!("{url} names no jwks_uri")),
                },
                Err(why) => failures.push(why),
            }
        }
        Err(failures.join("; "))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>> {
        Box::pin(self.check(token))
    }
}

impl KeySet {
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let fits = |key: &&Key| key.algorithm.is_none_or(|a| a == alg);
        let found = match kid {
            Some(kid) => self
                .keys
                .iter()
                .filter(fits)
                .find(|key| key.id.as_deref() == Some(kid)),
            // Without a key id, only a single candidate is taken.
            None => {
                let mut candidates = self.keys.iter().filter(fits);
                candidates.next().filter(|_| candidates.next().is_none())
            }
        };
        found.map(|key| key.key.clone())
    }
}

impl Key {
    /// A key of the set, unless it is for encryption or of a kind not checked here.
    fn of(jwk: &Jwk) -> Option<Key> {
        use jsonwebtoken::jwk::{AlgorithmParameters, PublicKeyUse};
        if matches!(
            jwk.common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) || matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
        {
            return None;
        }
        let algorithm = match jwk.common.key_algorithm {
            Some(alg) => Some(alg.to_string().parse::<Algorithm>().ok()?),
            None => None,
        };
        Some(Key {
            id: jwk.common.key_id.clone(),
            algorithm,
            key: DecodingKey::from_jwk(jwk).ok()?,
        })
    }
}

/// Whether a JWT header's `typ` says an access token (RFC 9068 §4): `at+jwt`, or with its
/// media type's `application/` (RFC 7515 §4.1.9), in any case.
fn is_access_token(typ: Option<&str>) -> bool {
    let Some(typ) = typ else { return false };
    let typ = match typ.get(..12) {
        Some(prefix) if prefix.eq_ignore_ascii_case("application/") => &typ[12..],
        _ => typ,
    };
    typ.eq_ignore_ascii_case("at+jwt")
}

fn unknown_key() -> TokenError {
    TokenError::Invalid("the token was not signed by a key of its issuer".into())
}

/// What a `401` says of a refused token: what is wrong, never the key or the claims.
fn refusal(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token was issued for another resource",
        ErrorKind::InvalidIssuer => "the token was issued by another authorization server",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => {
            "the token lacks a required claim (exp, iss, aud, sub)"
        }
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => {
            "the token's signing algorithm is not accepted"
        }
        _ => "the token is malformed",
    }
}

/// The most redirects followed to fetch one document.
const MAX_REDIRECTS: usize = 3;

/// Whether a redirect from `first` (the URL asked) to `to` is followed: only to https on the
/// same origin (a path moved), so the keys that check tokens come from where the operator
/// said, never from another host or over plain http.
fn follows_redirect(first: &reqwest::Url, to: &reqwest::Url) -> bool {
    first.scheme() == "https" && to.scheme() == "https" && first.origin() == to.origin()
}

/// GETs a JSON document within 10 s, at most 1 MiB, following at most [`MAX_REDIRECTS`]
/// redirects, each to https on the origin asked ([`follows_redirect`]).
async fn get_json<T: serde::de::DeserializeOwned>(url: &str) -> Result<T, String> {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    let client = CLIENT.get_or_init(|| {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let previous = attempt.previous();
            let follows = previous.len() <= MAX_REDIRECTS
                && previous
                    .first()
                    .is_some_and(|first| follows_redirect(first, attempt.url()));
            match follows {
                true => attempt.follow(),
                false => attempt.stop(),
            }
        });
        reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(policy)
            .build()
            .unwrap_or_default()
    });
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    if response.status().is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|to| to.to_str().ok())
            .unwrap_or("elsewhere");
        return Err(format!(
            "GET {url}: redirected to {to}, which is not followed (only a redirect to https on the same origin is, at most {MAX_REDIRECTS})"
        ));
    }
    if !response.status().is_success() {
        return Err(format!("GET {url}: {}", response.status()));
    }
    let mut response = response;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?
    {
        if body.len() + chunk.len() > 1 << 20 {
            return Err(format!("GET {url}: the document is over 1 MiB"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not the JSON expected: {e}"))
}

#[cfg(test)]
mod tests {
    use super::follows_redirect;

    #[test]
    fn only_redirects_to_https_on_the_same_origin_are_followed() {
        let url = |u: &str| reqwest::Url::parse(u).expect("a URL");
        let first = url("https://auth.example.com/.well-known/jwks.json");
        for (to, follows) in [
            ("https://auth.example.com/keys", true),
            ("https://auth.example.com:443/keys", true),
            ("http://auth.example.com/keys", false),
            ("https://evil.example.com/keys", false),
            ("https://auth.example.com:8443/keys", false),
            ("https://sub.auth.example.com/keys", false),
        ] {
            assert_eq!(follows_redirect(&first, &url(to)), follows, "{to}");
        }
        // From plain http, nothing is followed: not even to https.
        let plain = url("http://auth.example.com/jwks");
        assert!(!follows_redirect(
            &plain,
            &url("https://auth.example.com/jwks")
        ));
        assert!(!follows_redirect(
            &plain,
            &url("http://auth.example.com/keys")
        ));
    }
}
