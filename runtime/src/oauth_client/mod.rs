//! OAuth as a client (feature `oauth-client`, re-exported as `client::oauth`), on rmcp's
//! authorization support: [`OAuth`] says how to get tokens, [`OAuthSession`] gets and keeps
//! them for one MCP server, and
//! [`Answers::connect_oauth`](crate::client::Answers::connect_oauth) connects the typed client
//! with them.
//!
//! rmcp does the protocol: protected-resource metadata (RFC 9728, from the `WWW-Authenticate`
//! challenge or the well-known paths) and authorization-server metadata (RFC 8414, OpenID
//! discovery), its issuer checked; registration by client ID metadata document, dynamic
//! registration or a pre-registered client; PKCE S256; the `resource` parameter; scopes from
//! the challenge, else the resource's `scopes_supported` (none sent when neither has any);
//! the `iss` of the authorization response (RFC 9207); the token endpoint's auth method
//! (`client_secret_basic`, `client_secret_post`, `none`); refresh; client credentials.
//! What is ours: every OAuth request bounded by [`OAuth::timeout`] and never following a
//! redirect to another origin; step-up on a 401/403 challenge, asking for the scopes asked
//! before and the challenged ones (SEP-2350), at most [`OAuth::max_step_ups`] in a row; a
//! gateway's upstream with the gateway's own client (`Upstream::oauth`); where
//! tokens are kept ([`OAuth::credential_store`], in memory by default); errors that say
//! which of these refused; no secret in `Debug` or in a log line.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_fusion::client::Answers;
//! use mcp_fusion::client::oauth::OAuth;
//!
//! let mut session = OAuth::client_credentials("billing-agent", "s3cret")
//!     .session("https://billing.example.com/mcp")?;
//! let (client, _connection) = Answers::new().connect_oauth(&mut session).await?;
//! let tools = session.retry(|| client.list_tools()).await?;
//! # let _ = tools; Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    ClientCredentialsConfig, CredentialStore, InMemoryCredentialStore, StoredCredentials,
    WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use requests::{Http, Refusal};

#[cfg(feature = "oauth-client-jwt")]
mod assertion;
mod requests;

/// The signing algorithms of [`OAuth::client_credentials_jwt`].
#[cfg(feature = "oauth-client-jwt")]
pub use jsonwebtoken::Algorithm;

/// The browser, or whatever stands for the user: it is given the authorization URL and gives
/// back the URL the authorization server redirected to (with `code`, `state` and maybe `iss`).
///
/// ```
/// use mcp_fusion::client::oauth::UserAgent;
///
/// struct Asks;
/// impl UserAgent for Asks {
///     fn authorize(&self, url: String) -> mcp_fusion::client::oauth::UserAgentFuture {
///         Box::pin(async move { Err(format!("open {url} and paste the address you land on")) })
///     }
/// }
/// ```
pub trait UserAgent: Send + Sync + 'static {
    /// Has the user authorize at `url`; the redirect URL, or why there is none.
    fn authorize(&self, url: String) -> UserAgentFuture;
}

/// What [`UserAgent::authorize`] returns.
pub type UserAgentFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// A user agent with no user: it fetches the authorization URL (within 30 s) without
/// following the redirect and gives back where it points. For authorization servers that grant without a
/// login (tests, the conformance suite's).
///
/// ```
/// use mcp_fusion::client::oauth::{HeadlessUserAgent, OAuth, Registration};
///
/// let oauth = OAuth::authorization_code("http://localhost:3000/callback", HeadlessUserAgent)
///     .registration(Registration::Dynamic { client_name: "billing-agent".into() });
/// # let _ = oauth;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadlessUserAgent;

impl UserAgent for HeadlessUserAgent {
    fn authorize(&self, url: String) -> UserAgentFuture {
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let asked = tokio::time::timeout(Duration::from_secs(30), client.get(&url).send());
            let answer = asked
                .await
                .map_err(|_| format!("{url} did not answer within 30 s"))?;
            let answer = answer.map_err(|e| e.to_string())?;
            let location = answer.headers().get(http::header::LOCATION);
            let location = location.and_then(|l| l.to_str().ok()).ok_or_else(|| {
                format!(
                    "the authorization endpoint answered {} without a redirect",
                    answer.status()
                )
            })?;
            let base = url::Url::parse(&url).map_err(|e| e.to_string())?;
            Ok(base.join(location).map_err(|e| e.to_string())?.to_string())
        })
    }
}

/// How the client is known to the authorization server (authorization code grant). The MCP
/// order: a pre-registered client first, then a client ID metadata document where the server
/// supports one, then dynamic registration.
#[derive(Clone)]
#[non_exhaustive]
pub enum Registration {
    /// The `https` URL of the client's metadata document (SEP-991), used as its client ID;
    /// dynamic registration as `client_name` where the server does not take one.
    MetadataDocument {
        /// The document's URL.
        url: String,
        /// The name registered where dynamic registration is used instead.
        client_name: String,
    },
    /// Dynamic client registration (RFC 7591) as `client_name`.
    Dynamic {
        /// The name registered.
        client_name: String,
    },
    /// A client registered beforehand, with its secret if it has one.
    Preregistered {
        /// Its client ID.
        client_id: String,
        /// Its secret: never shown by `Debug`.
        client_secret: Option<String>,
    },
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Registration::MetadataDocument { url, client_name } => f
                .debug_struct("MetadataDocument")
                .field("url", url)
                .field("client_name", client_name)
                .finish(),
            Registration::Dynamic { client_name } => f
                .debug_struct("Dynamic")
                .field("client_name", client_name)
                .finish(),
            Registration::Preregistered {
                client_id,
                client_secret,
            } => f
                .debug_struct("Preregistered")
                .field("client_id", client_id)
                .field(
                    "client_secret",
                    &client_secret.as_ref().map(|_| "<redacted>"),
                )
                .finish(),
        }
    }
}

#[derive(Clone)]
enum Grant {
    Code {
        redirect_uri: String,
        user_agent: Arc<dyn UserAgent>,
        registration: Registration,
    },
    ClientCredentials {
        client_id: String,
        client_secret: String,
    },
    #[cfg(feature = "oauth-client-jwt")]
    ClientCredentialsJwt {
        client_id: String,
        key_pem: String,
        algorithm: jsonwebtoken::Algorithm,
    },
}

/// Saves credentials in the store a manager was given.
type Save = Box<
    dyn Fn(StoredCredentials) -> Pin<Box<dyn Future<Output = Result<(), AuthError>> + Send>>
        + Send
        + Sync,
>;

/// Sets a credential store on a manager, and saves in it.
type SetStore = Arc<dyn Fn(&mut AuthorizationManager) -> Save + Send + Sync>;

/// `store` as a [`SetStore`].
fn keep<S: CredentialStore + Clone + 'static>(store: S) -> SetStore {
    Arc::new(move |manager: &mut AuthorizationManager| {
        manager.set_credential_store(store.clone());
        let store = store.clone();
        Box::new(move |credentials| {
            let store = store.clone();
            Box::pin(async move { store.save(credentials).await })
        })
    })
}

/// How a client gets its tokens for an MCP server: the grant, the scopes, the limits.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::client::oauth::OAuth;
///
/// let oauth = OAuth::client_credentials("billing-agent", "s3cret")
///     .scopes(["invoices:read"])
///     .timeout(Duration::from_secs(5));
/// assert!(!format!("{oauth:?}").contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct OAuth {
    grant: Grant,
    scopes: Vec<String>,
    timeout: Duration,
    max_step_ups: u32,
    store: Option<SetStore>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("OAuth");
        match &self.grant {
            Grant::Code {
                redirect_uri,
                registration,
                ..
            } => out
                .field("grant", &"authorization_code")
                .field("redirect_uri", redirect_uri)
                .field("registration", registration),
            Grant::ClientCredentials { client_id, .. } => out
                .field("grant", &"client_credentials")
                .field("client_id", client_id)
                .field("client_secret", &"<redacted>"),
            #[cfg(feature = "oauth-client-jwt")]
            Grant::ClientCredentialsJwt {
                client_id,
                algorithm,
                ..
            } => out
                .field("grant", &"client_credentials (private_key_jwt)")
                .field("client_id", client_id)
                .field("algorithm", algorithm)
                .field("key", &"<redacted>"),
        };
        out.field("scopes", &self.scopes)
            .field("timeout", &self.timeout)
            .field("max_step_ups", &self.max_step_ups)
            .field(
                "credential_store",
                &self.store.as_ref().map_or("in memory", |_| "the caller's"),
            )
            .finish()
    }
}

impl OAuth {
    /// The authorization code grant with PKCE: `user_agent` has the user authorize and comes
    /// back from `redirect_uri`. Registers dynamically (as `mcp-fusion`) unless told otherwise
    /// ([`registration`](Self::registration)).
    pub fn authorization_code(redirect_uri: impl Into<String>, user_agent: impl UserAgent) -> Self {
        Self::with_grant(Grant::Code {
            redirect_uri: redirect_uri.into(),
            user_agent: Arc::new(user_agent),
            registration: Registration::Dynamic {
                client_name: "mcp-fusion".into(),
            },
        })
    }

    /// The client credentials grant (no user): a service's own client ID and secret, sent
    /// as the authorization server's metadata asks (`client_secret_basic` when it takes only
    /// that, `client_secret_post` otherwise).
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Self::with_grant(Grant::ClientCredentials {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        })
    }

    /// The client credentials grant, the client proving itself with a JWT it signs with
    /// `private_key_pem` (`private_key_jwt`, RFC 7523; feature `oauth-client-jwt`): an EC
    /// (`ES256`, `ES384`), Ed25519 (`EdDSA`) or RSA key in PEM.
    ///
    /// ```
    /// use mcp_fusion::client::oauth::{Algorithm, OAuth};
    ///
    /// let pem = "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n";
    /// let oauth = OAuth::client_credentials_jwt("billing-agent", pem, Algorithm::ES256);
    /// assert!(!format!("{oauth:?}").contains("PRIVATE KEY"));
    /// ```
    #[cfg(feature = "oauth-client-jwt")]
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        private_key_pem: impl Into<String>,
        algorithm: jsonwebtoken::Algorithm,
    ) -> Self {
        Self::with_grant(Grant::ClientCredentialsJwt {
            client_id: client_id.into(),
            key_pem: private_key_pem.into(),
            algorithm,
        })
    }

    fn with_grant(grant: Grant) -> Self {
        OAuth {
            grant,
            scopes: Vec::new(),
            timeout: Duration::from_secs(10),
            max_step_ups: 2,
            store: None,
        }
    }

    /// How the client is registered (authorization code grant only).
    pub fn registration(mut self, registration: Registration) -> Self {
        if let Grant::Code {
            registration: r, ..
        } = &mut self.grant
        {
            *r = registration;
        }
        self
    }

    /// The scopes asked for first. Without them: the challenge's, else those the resource's
    /// metadata lists, else none.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long each OAuth request (discovery, registration, token) may take (10 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many times challenges in a row (a 401, or a 403 `insufficient_scope`, with no
    /// answer in between) may send the client to authorize again after the first (2 by
    /// default): an endless step-up ends with [`OAuthError::StepUpLimit`].
    pub fn max_step_ups(mut self, max: u32) -> Self {
        self.max_step_ups = max;
        self
    }

    /// Where tokens are kept: rmcp's [`CredentialStore`] (a handle that clones cheaply). In
    /// memory, for the session alone, by default.
    pub fn credential_store<S: CredentialStore + Clone + 'static>(mut self, store: S) -> Self {
        self.store = Some(keep(store));
        self
    }

    /// A session for the MCP server at `url`: nothing is sent before it is used.
    pub fn session(self, url: &str) -> Result<OAuthSession, OAuthError> {
        let url = url::Url::parse(url).map_err(|e| OAuthError::Url(e.to_string()))?;
        Ok(OAuthSession {
            url,
            manager: None,
            oauth: self,
            authorizations: 0,
            challenged: 0,
            requested: Vec::new(),
        })
    }
}

/// Why a client got no token.
#[derive(Debug)]
#[non_exhaustive]
pub enum OAuthError {
    /// The server's URL is not one.
    Url(String),
    /// The authorization server's metadata names another issuer than the one it was found
    /// as, or the authorization response's `iss` is not the issuer's.
    IssuerMismatch {
        /// The issuer expected.
        expected: String,
        /// The issuer received (empty when none was).
        received: String,
    },
    /// An OAuth endpoint did not answer within [`OAuth::timeout`].
    TimedOut {
        /// The endpoint.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// An OAuth endpoint redirected to another origin.
    Redirected {
        /// The URL asked.
        from: String,
        /// Where it redirected.
        to: String,
    },
    /// The server kept challenging (a 401, or a 403 `insufficient_scope`) after the first
    /// authorization and [`OAuth::max_step_ups`] more, with no answer in between.
    StepUpLimit {
        /// The authorizations made for those challenges.
        authorizations: u32,
        /// The scope the last challenge asked for.
        scope: Option<String>,
    },
    /// The user agent came back without a redirect.
    UserAgent(String),
    /// Anything else rmcp's authorization refused.
    Auth(AuthError),
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OAuthError::Url(e) => write!(f, "the server's URL is not valid: {e}"),
            OAuthError::IssuerMismatch { expected, received } => write!(
                f,
                "the authorization server's issuer is \"{received}\", not \"{expected}\": refused"
            ),
            OAuthError::TimedOut { url, after } => {
                write!(f, "{url} did not answer within {} ms", after.as_millis())
            }
            OAuthError::Redirected { from, to } => {
                write!(f, "{from} redirected to another origin ({to}): refused")
            }
            OAuthError::StepUpLimit {
                authorizations,
                scope,
            } => write!(
                f,
                "the server still challenged after {authorizations} authorizations (last scope asked: {}): stopped",
                scope.as_deref().unwrap_or("none")
            ),
            OAuthError::UserAgent(e) => write!(f, "the user did not authorize: {e}"),
            OAuthError::Auth(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OAuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OAuthError::Auth(e) => Some(e),
            _ => None,
        }
    }
}

/// The transport a session's connections use: rmcp's streamable HTTP client, each request
/// with the session's current token.
pub type OAuthTransport = StreamableHttpClientTransport<AuthClient<reqwest::Client>>;

/// One MCP server's tokens: authorizes when first asked or challenged, and again (up to
/// [`OAuth::max_step_ups`] times) when a challenge asks for more; every connection made with
/// [`transport`](Self::transport) uses the newest token, refreshed when it expires.
pub struct OAuthSession {
    url: url::Url,
    oauth: OAuth,
    /// Shared with every transport made; `None` until the first authorization.
    manager: Option<Arc<tokio::sync::Mutex<AuthorizationManager>>>,
    authorizations: u32,
    /// The challenges met since the server last answered (`answered`).
    challenged: u32,
    /// The scopes asked for so far.
    requested: Vec<String>,
}

impl std::fmt::Debug for OAuthSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSession")
            .field("url", &self.url.as_str())
            .field("oauth", &self.oauth)
            .field("authorizations", &self.authorizations)
            .field("requested", &self.requested)
            .finish_non_exhaustive()
    }
}

impl OAuthSession {
    /// How many times it authorized.
    pub fn authorizations(&self) -> u32 {
        self.authorizations
    }

    /// The server answered a request: the challenges counted toward the step-up limit start
    /// over (an expired token later is not one more step-up).
    pub fn answered(&mut self) {
        self.challenged = 0;
    }

    /// The scopes asked for so far (the union over every authorization).
    pub fn requested_scopes(&self) -> &[String] {
        &self.requested
    }

    /// Authorizes: discovery (from `challenge`, the `WWW-Authenticate` of a 401 or 403, when
    /// there is one), registration, the grant. A challenge after the first authorization is a
    /// step-up, refused past [`OAuth::max_step_ups`].
    pub async fn authorize(&mut self, challenge: Option<&str>) -> Result<(), OAuthError> {
        let challenged = challenge
            .map(|c| WWWAuthenticateParams::parse(c, &self.url).scope)
            .unwrap_or_default();
        if challenge.is_some() {
            // Challenges with no answer in between: past the limit, the server wants more
            // than any authorization gives.
            if self.challenged > self.oauth.max_step_ups {
                return Err(OAuthError::StepUpLimit {
                    authorizations: self.challenged,
                    scope: challenged,
                });
            }
            self.challenged += 1;
        }
        let http = Arc::new(Http::new(self.oauth.timeout).map_err(|e| OAuthError::Auth(e.into()))?);
        let refused = Arc::clone(&http.refused);
        let told = |e: AuthError| told(e, &refused);
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(self.url.clone(), http.clone())
                .await
                .map_err(told)?;
        let set = self.oauth.store.clone();
        // What the session stores itself (a grant rmcp does not make) goes where rmcp's does.
        let save = set.unwrap_or_else(|| keep(InMemoryCredentialStore::new()))(&mut manager);
        #[cfg(not(feature = "oauth-client-jwt"))]
        drop(save);
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(told)?;
        #[cfg(feature = "oauth-client-jwt")]
        let metadata = resolution.metadata.clone();
        manager.set_metadata(resolution.metadata);
        // A step-up asks for what was asked before and what the challenge asks (SEP-2350).
        let mut scopes = self.requested.clone();
        if scopes.is_empty() {
            scopes.clone_from(&self.oauth.scopes);
        }
        if self.authorizations > 0 {
            scopes.extend(
                challenged
                    .iter()
                    .flat_map(|s| s.split_whitespace().map(str::to_owned)),
            );
        }
        let mut seen = std::collections::HashSet::new();
        scopes.retain(|s| seen.insert(s.clone()));
        let manager = match &self.oauth.grant {
            Grant::ClientCredentials {
                client_id,
                client_secret,
            } => {
                if scopes.is_empty() {
                    scopes = manager.select_initial_scopes(&[]).await;
                }
                let config = ClientCredentialsConfig::ClientSecret {
                    client_id: client_id.clone(),
                    client_secret: client_secret.clone(),
                    scopes: scopes.clone(),
                    resource: Some(self.url.to_string()),
                };
                manager
                    .validate_client_credentials_metadata(&config)
                    .map_err(told)?;
                manager
                    .configure_client_credentials(&config)
                    .map_err(told)?;
                manager
                    .exchange_client_credentials(&config)
                    .await
                    .map_err(told)?;
                manager
            }
            #[cfg(feature = "oauth-client-jwt")]
            Grant::ClientCredentialsJwt {
                client_id,
                key_pem,
                algorithm,
            } => {
                if scopes.is_empty() {
                    scopes = manager.select_initial_scopes(&[]).await;
                }
                let asked = assertion::Assertion {
                    client_id,
                    key_pem,
                    algorithm: *algorithm,
                    scopes: &scopes,
                    resource: self.url.as_str(),
                };
                let token = assertion::exchange(&http, &metadata, asked)
                    .await
                    .map_err(told)?;
                let granted = scopes.clone();
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                let received = now.map_or(0, |d| d.as_secs());
                let stored =
                    StoredCredentials::new(client_id.clone(), Some(token), granted, Some(received));
                save(stored.with_issuer(metadata.issuer.clone()))
                    .await
                    .map_err(told)?;
                manager
            }
            Grant::Code {
                redirect_uri,
                user_agent,
                registration,
            } => {
                let mut request = AuthorizationRequest::new(redirect_uri.clone());
                request = match scopes.is_empty() {
                    true => request.with_initial_scope_selection(),
                    false => request.with_scopes(scopes.iter()),
                };
                request = match registration {
                    Registration::MetadataDocument { url, client_name } => request
                        .with_client_metadata_url(url.clone())
                        .with_client_name(client_name.clone()),
                    Registration::Dynamic { client_name } => {
                        request.with_client_name(client_name.clone())
                    }
                    Registration::Preregistered {
                        client_id,
                        client_secret,
                    } => {
                        let request = request.with_preregistered_client(client_id.clone());
                        match client_secret {
                            Some(secret) => request.with_client_secret(secret.clone()),
                            None => request,
                        }
                    }
                };
                let session = AuthorizationSession::new(manager, request)
                    .await
                    .map_err(|(_, e)| told(e))?;
                let url = session.get_authorization_url().to_owned();
                scopes = asked_scopes(&url);
                let redirected = user_agent
                    .authorize(url)
                    .await
                    .map_err(OAuthError::UserAgent)?;
                session
                    .handle_callback_url(&redirected)
                    .await
                    .map_err(told)?;
                session.auth_manager
            }
        };
        self.authorizations += 1;
        for scope in scopes {
            if !self.requested.contains(&scope) {
                self.requested.push(scope);
            }
        }
        match &self.manager {
            // Every transport made so far uses the new token from its next request.
            Some(shared) => *shared.lock().await = manager,
            None => self.manager = Some(Arc::new(tokio::sync::Mutex::new(manager))),
        }
        Ok(())
    }

    /// The access token, refreshed when it expired (authorizing first when there is none).
    pub async fn access_token(&mut self) -> Result<String, OAuthError> {
        if self.manager.is_none() {
            self.authorize(None).await?;
        }
        let manager = self.manager.as_ref().expect("authorized above");
        let token = manager.lock().await.get_access_token().await;
        token.map_err(OAuthError::Auth)
    }

    /// A transport to the server whose requests carry the session's newest token. Before the
    /// first authorization, requests go without one (the server's 401 says how to authorize).
    pub async fn transport(&mut self) -> Result<OAuthTransport, OAuthError> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        self.transport_with(config).await
    }

    /// A transport as [`transport`](Self::transport) makes, with `config` (custom headers,
    /// limits); its URI should be the session's.
    pub async fn transport_with(
        &mut self,
        config: StreamableHttpClientTransportConfig,
    ) -> Result<OAuthTransport, OAuthError> {
        let manager = self.shared().await?;
        let mut client = AuthClient::new(reqwest::Client::new(), placeholder(&self.url).await?);
        client.auth_manager = manager;
        Ok(StreamableHttpClientTransport::with_client(client, config))
    }

    /// The manager every transport shares (one without tokens before the first authorization).
    async fn shared(
        &mut self,
    ) -> Result<Arc<tokio::sync::Mutex<AuthorizationManager>>, OAuthError> {
        if let Some(manager) = &self.manager {
            return Ok(Arc::clone(manager));
        }
        let http = Http::new(self.oauth.timeout).map_err(|e| OAuthError::Auth(e.into()))?;
        let manager =
            AuthorizationManager::new_with_oauth_http_client(self.url.clone(), Arc::new(http))
                .await
                .map_err(OAuthError::Auth)?;
        let manager = Arc::new(tokio::sync::Mutex::new(manager));
        self.manager = Some(Arc::clone(&manager));
        Ok(manager)
    }
}

/// A manager that is replaced at once (rmcp's `AuthClient` makes its own).
async fn placeholder(url: &url::Url) -> Result<AuthorizationManager, OAuthError> {
    let http = Http::new(Duration::from_secs(1)).map_err(|e| OAuthError::Auth(e.into()))?;
    AuthorizationManager::new_with_oauth_http_client(url.clone(), Arc::new(http))
        .await
        .map_err(OAuthError::Auth)
}

/// The scopes an authorization URL asks for.
fn asked_scopes(url: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(url) else {
        return Vec::new();
    };
    let scope = url.query_pairs().find(|(k, _)| k == "scope");
    scope.map_or_else(Vec::new, |(_, s)| {
        s.split_whitespace().map(str::to_owned).collect()
    })
}

/// rmcp's error, or the precise refusal of the OAuth HTTP client behind it.
fn told(error: AuthError, refused: &std::sync::Mutex<Option<Refusal>>) -> OAuthError {
    if let Some(refusal) = refused
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        return match refusal {
            Refusal::TimedOut { url, after } => OAuthError::TimedOut { url, after },
            Refusal::Redirected { from, to } => OAuthError::Redirected { from, to },
        };
    }
    match error {
        AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => OAuthError::IssuerMismatch {
            expected: expected_issuer,
            received: received_issuer,
        },
        AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
            OAuthError::IssuerMismatch {
                expected: expected_issuer,
                received: String::new(),
            }
        }
        other => OAuthError::Auth(other),
    }
}
