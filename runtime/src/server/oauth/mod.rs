//! MCP authorization over streamable HTTP: the server as an OAuth 2.1 resource server
//! (feature `oauth`).
//!
//! What the MCP specification asks of an HTTP server that requires authorization (revision
//! 2026-07-28, "Authorization"), and what this module does:
//! - it publishes its Protected Resource Metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource` and at the same path with the endpoint's path
//!   appended (`/.well-known/oauth-protected-resource/mcp`), naming its authorization server;
//! - a request without a valid access token is answered `401` with
//!   `WWW-Authenticate: Bearer resource_metadata="…"` (and `error="invalid_token"` when a token
//!   was presented), before its body is read, so it costs no parse, no rate budget, no slot;
//! - it accepts only tokens issued for itself: the audience must be its resource URI (RFC 8707),
//!   the issuer its authorization server, the signature one of the issuer's keys, the
//!   algorithm an allowed one, the token unexpired;
//! - a call of an action whose scopes the token lacks is answered `403` with
//!   `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` naming the scopes the
//!   action needs (RFC 6750 §3.1), for the host to step up; the token is never passed on.
//!
//! ```
//! use mcp_fusion::server::HttpOptions;
//! use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
//!
//! let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
//!     .jwks_url("https://auth.example.com/.well-known/jwks.json");
//! let mut options = HttpOptions::default();
//! options.oauth = Some(OAuth::jwt(verifier));
//! # let _ = options;
//! ```
//!
//! Each verified caller reaches handlers as [`Context::caller`](crate::Context::caller), rate
//! limits are kept per subject ([`ServerBuilder::rate_limit_key`]), audit lines and spans carry
//! the subject. On stdio there is no token: scopes do not apply.
//!
//! [`ServerBuilder::rate_limit_key`]: crate::server::ServerBuilder::rate_limit_key

mod jwt;
mod verifier;
mod well_known;

use std::sync::Arc;

pub use jsonwebtoken::Algorithm;
pub use jwt::JwtVerifier;
pub use verifier::{TokenError, TokenVerifier};
use well_known::{WELL_KNOWN, split_url};

use crate::tool::Caller;

/// The server as an OAuth resource server: which resource it is, which authorization server
/// issues its tokens, and how a token is checked. Set it in
/// [`HttpOptions::oauth`](crate::server::HttpOptions); cheap to clone.
#[derive(Clone)]
pub struct OAuth {
    inner: Arc<Inner>,
}

struct Inner {
    resource: String,
    authorization_servers: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    metadata_url: Option<String>,
    documentation: Option<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("resource", &self.inner.resource)
            .field("authorization_servers", &self.inner.authorization_servers)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// A resource server for JWT access tokens, its resource and authorization server those
    /// the verifier checks (audience and issuer).
    pub fn jwt(verifier: JwtVerifier) -> Self {
        let resource = verifier.audience().to_owned();
        let issuer = verifier.issuer().to_owned();
        Self::new(resource, issuer, verifier)
    }

    /// A resource server for `resource` (its canonical URI, the audience its tokens must
    /// name), whose tokens `authorization_server` issues and `verifier` checks.
    ///
    /// ```
    /// use mcp_fusion::server::oauth::{JwtVerifier, OAuth};
    /// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp");
    /// let oauth = OAuth::new("https://mcp.example.com/mcp", "https://auth.example.com", verifier);
    /// assert_eq!(oauth.metadata_url().as_deref(), Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp"));
    /// ```
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Self {
        OAuth {
            inner: Arc::new(Inner {
                resource: resource.into(),
                authorization_servers: vec![authorization_server.into()],
                verifier: Arc::new(verifier),
                metadata_url: None,
                documentation: None,
            }),
        }
    }

    /// Where clients fetch the Protected Resource Metadata, when it is not where the resource
    /// URI says (`{origin}/.well-known/oauth-protected-resource{path}`): a server behind a
    /// proxy that rewrites paths, say.
    pub fn with_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.inner_mut().metadata_url = Some(url.into());
        self
    }

    /// A page about the server for people (the metadata's `resource_documentation`).
    pub fn with_documentation(mut self, url: impl Into<String>) -> Self {
        self.inner_mut().documentation = Some(url.into());
        self
    }

    fn inner_mut(&mut self) -> &mut Inner {
        if Arc::get_mut(&mut self.inner).is_none() {
            let inner = &*self.inner;
            self.inner = Arc::new(Inner {
                resource: inner.resource.clone(),
                authorization_servers: inner.authorization_servers.clone(),
                verifier: inner.verifier.clone(),
                metadata_url: inner.metadata_url.clone(),
                documentation: inner.documentation.clone(),
            });
        }
        Arc::get_mut(&mut self.inner).expect("the only reference")
    }

    /// The resource URI: the audience its tokens must name.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The URL of the Protected Resource Metadata that `401` answers point to: the one set, or
    /// the well-known URL of an `http`/`https` resource URI (RFC 9728 §3.1); `None` when the
    /// resource URI is not such a URL and none was set.
    pub fn metadata_url(&self) -> Option<String> {
        if let Some(url) = &self.inner.metadata_url {
            return Some(url.clone());
        }
        let (origin, path) = split_url(&self.inner.resource)?;
        Some(format!(
            "{origin}{WELL_KNOWN}{}",
            path.trim_end_matches('/')
        ))
    }

    /// The paths the metadata is served at by [`Server::serve_http`](crate::Server::serve_http):
    /// the well-known path with the resource's path appended, and the well-known path itself.
    pub(crate) fn metadata_paths(&self) -> [String; 2] {
        let path = self
            .metadata_url()
            .as_deref()
            .and_then(split_url)
            .map(|(_, path)| path.to_owned())
            .unwrap_or_else(|| WELL_KNOWN.to_owned());
        [path, WELL_KNOWN.to_owned()]
    }

    /// The Protected Resource Metadata document (RFC 9728 §2) of a server whose actions need
    /// `scopes`.
    pub(crate) fn metadata(&self, scopes: &[String]) -> String {
        let mut document = serde_json::json!({
            "resource": self.inner.resource,
            "authorization_servers": self.inner.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !scopes.is_empty() {
            document["scopes_supported"] = serde_json::json!(scopes);
        }
        if let Some(documentation) = &self.inner.documentation {
            document["resource_documentation"] = serde_json::json!(documentation);
        }
        document.to_string()
    }

    /// The caller of a request with these `Authorization` header values.
    pub(crate) async fn authenticate(
        &self,
        authorization: http::header::GetAll<'_, http::HeaderValue>,
    ) -> Result<Caller, Refusal> {
        let first = authorization.iter().next();
        if authorization.iter().nth(1).is_some() {
            return Err(Refusal::Invalid(
                "more than one Authorization header".into(),
            ));
        }
        let Some(value) = first else {
            return Err(Refusal::Missing);
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            return Err(Refusal::Invalid(
                "the Authorization header is not a Bearer token".into(),
            ));
        };
        match self.inner.verifier.verify(token).await {
            Ok(caller) => Ok(caller),
            Err(TokenError::Invalid(why)) => Err(Refusal::Invalid(why)),
            Err(TokenError::Unavailable(why)) => Err(Refusal::Unavailable(why)),
        }
    }

    /// The `WWW-Authenticate` value of a `401` (`error` set when a token was refused) or of a
    /// `403` for `scopes`.
    pub(crate) fn challenge(&self, error: Option<(&str, &str)>, scopes: &[String]) -> String {
        let mut value = String::from("Bearer");
        let mut param = |name: &str, text: &str| {
            let sep = if value.len() == "Bearer".len() {
                " "
            } else {
                ", "
            };
            value.push_str(sep);
            value.push_str(name);
            value.push_str("=\"");
            // RFC 6750 §3: no `"` or `\` inside, printable ASCII only.
            value.extend(text.chars().map(|c| match c {
                '"' | '\\' => '\'',
                c if c == ' ' || c.is_ascii_graphic() => c,
                _ => '?',
            }));
            value.push('"');
        };
        if let Some(url) = self.metadata_url() {
            param("resource_metadata", &url);
        }
        if let Some((error, description)) = error {
            param("error", error);
            param("error_description", description);
        }
        if !scopes.is_empty() {
            param("scope", &scopes.join(" "));
        }
        value
    }
}

/// Why a request was refused before it reached the server.
pub(crate) enum Refusal {
    /// No `Authorization` header.
    Missing,
    /// A token that is not valid here, and why.
    Invalid(String),
    /// The token cannot be checked now.
    Unavailable(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::BoxFuture;

    struct Never;

    impl TokenVerifier for Never {
        fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>> {
            Box::pin(async { Err(TokenError::Invalid("never".into())) })
        }
    }

    #[test]
    fn the_metadata_url_follows_the_resource() {
        let oauth = |resource: &str| OAuth::new(resource, "https://as.example", Never);
        let url = |resource: &str| oauth(resource).metadata_url();
        assert_eq!(
            url("https://mcp.example.com/mcp").as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            url("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080/.well-known/oauth-protected-resource")
        );
        assert_eq!(url("urn:billing"), None);
        assert_eq!(
            oauth("https://mcp.example.com/mcp").metadata_paths(),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
    }

    #[test]
    fn challenges_are_rfc_6750_parameters() {
        let oauth = OAuth::new("https://mcp.example.com/mcp", "https://as.example", Never);
        assert_eq!(
            oauth.challenge(None, &[]),
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#
        );
        assert_eq!(
            oauth.challenge(
                Some(("insufficient_scope", "needs \"more\"\n")),
                &["a:b".into(), "c".into()]
            ),
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="needs 'more'?", scope="a:b c""#
        );
    }
}
