//! What checking a token means to the server: a verifier turns a token into a caller or says
//! why it is refused. `OAuth` asks one; `jwt.rs` holds the one that ships.

use crate::tool::BoxFuture;
use crate::tool::Caller;

/// Checks an access token and says who presented it.
/// [`JwtVerifier`](crate::server::oauth::JwtVerifier) ships; implement it for other kinds of
/// tokens (token introspection, RFC 7662, say).
///
/// ```
/// use mcp_fusion::server::oauth::{TokenError, TokenVerifier};
/// use mcp_fusion::tools::{BoxFuture, Caller};
///
/// /// One fixed token, for a development server.
/// struct Fixed;
///
/// impl TokenVerifier for Fixed {
///     fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>> {
///         Box::pin(async move {
///             match token {
///                 "dev-token" => Ok(Caller::new("developer", ["invoices:read", "invoices:write"])),
///                 _ => Err(TokenError::Invalid("unknown token".into())),
///             }
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// The caller `token` identifies, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Caller, TokenError>>;
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not valid for this server (expired, for another audience, wrongly
    /// signed, malformed): `401` with `error="invalid_token"` and this description.
    Invalid(String),
    /// The token could not be checked now (the authorization server's keys cannot be
    /// fetched): `503` with `Retry-After`, so the client keeps its token.
    Unavailable(String),
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::Invalid(why) => write!(f, "invalid token: {why}"),
            TokenError::Unavailable(why) => write!(f, "the token cannot be checked now: {why}"),
        }
    }
}

impl std::error::Error for TokenError {}
