//! The gateway's own credentials for an HTTP upstream: its bearer token, or its OAuth client
//! ([`Upstream::oauth`](super::Upstream::oauth), feature `oauth-client`), whose session (and
//! so its tokens) outlives each connection. What tells that the upstream, or its authorization
//! server, refused them: the link is then `refused`, and its calls answer FORBIDDEN
//! ([`ToolError::upstream_credentials_refused`](crate::ToolError::upstream_credentials_refused))
//! instead of inviting a retry.

use std::sync::atomic::Ordering;

use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};

use super::link::Link;

impl Link {
    /// Whether the upstream refused the gateway's credentials when last tried.
    pub(crate) fn refused(&self) -> bool {
        self.refused.load(Ordering::Acquire)
    }

    /// Records whether the upstream refused the gateway's credentials.
    pub(super) fn set_refused(&self, refused: bool) {
        self.refused.store(refused, Ordering::Release);
    }
}

/// Connects `events` to the upstream at `config`'s URI with the gateway's credentials.
pub(super) async fn connect_http<H: ClientHandler + Clone>(
    link: &Link,
    mut config: StreamableHttpClientTransportConfig,
    events: H,
) -> Result<RunningService<RoleClient, H>, String> {
    use rmcp::ServiceExt;
    #[cfg(feature = "oauth-client")]
    if link.upstream.oauth.is_some() {
        return connect_oauth(link, config, events).await;
    }
    if let Some(token) = &link.upstream.bearer {
        config = config.auth_header(token.clone());
    }
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    events.serve(transport).await.map_err(|e| {
        link.set_refused(e.auth_challenge().is_some());
        e.to_string()
    })
}

/// Connects with the OAuth session of the link: a token first (the grant needs no user), then
/// the connection, authorizing again once when the upstream challenges (an expired or revoked
/// token, a step-up).
#[cfg(feature = "oauth-client")]
async fn connect_oauth<H: ClientHandler + Clone>(
    link: &Link,
    config: StreamableHttpClientTransportConfig,
    events: H,
) -> Result<RunningService<RoleClient, H>, String> {
    use crate::oauth_client::{OAuthError, OAuthSession};
    use rmcp::ServiceExt;
    use rmcp::transport::auth::AuthError;

    /// Whether the authorization server refused the gateway's client (not a network fault).
    fn refusal(error: &OAuthError) -> bool {
        matches!(
            error,
            OAuthError::Auth(
                AuthError::ClientCredentialsError(_)
                    | AuthError::TokenExchangeFailed(_)
                    | AuthError::AuthorizationFailed(_)
            ) | OAuthError::StepUpLimit { .. }
        )
    }
    let mut guard = link.oauth.lock().await;
    let session: &mut OAuthSession = match &mut *guard {
        Some(session) => session,
        None => {
            let oauth = link.upstream.oauth.clone().expect("checked by the caller");
            let session = oauth.session(&config.uri).map_err(|e| e.to_string())?;
            guard.insert(session)
        }
    };
    let failed = |error: OAuthError| {
        link.set_refused(refusal(&error));
        format!("the gateway's OAuth client got no token: {error}")
    };
    if session.authorizations() == 0 {
        session.authorize(None).await.map_err(failed)?;
    }
    let mut challenged = false;
    loop {
        let transport = session
            .transport_with(config.clone())
            .await
            .map_err(failed)?;
        match events.clone().serve(transport).await {
            Ok(service) => return Ok(service),
            Err(e) => match e.auth_challenge() {
                Some(challenge) if !challenged => {
                    challenged = true;
                    session.authorize(Some(challenge)).await.map_err(failed)?;
                }
                Some(_) => {
                    link.set_refused(true);
                    return Err(format!("the upstream refused the gateway's token: {e}"));
                }
                None => return Err(e.to_string()),
            },
        }
    }
}

impl Link {
    /// Gets the gateway a new token for the upstream after it refused the current one mid-
    /// connection (expired, revoked); whether it got one. An upstream reached with a bearer
    /// token (or none) has no other.
    pub(super) async fn renewed(&self) -> bool {
        #[cfg(feature = "oauth-client")]
        if let Some(session) = &mut *self.oauth.lock().await {
            return match session.authorize(None).await {
                Ok(()) => true,
                Err(error) => {
                    tracing::warn!(upstream = %self.namespace, %error, "the gateway's OAuth client got no new token for the upstream");
                    false
                }
            };
        }
        false
    }
}
