//! OAuth as a client (feature `oauth-client`): the session and its settings
//! (`crate::oauth_client`, re-exported here), and what the typed client does with them:
//! [`Answers::connect_oauth`], [`OAuthSession::connect`] and [`OAuthSession::retry`] authorize
//! again when the server challenges.

use std::future::Future;

pub use crate::oauth_client::*;

use super::{Answers, Client, ClientError, Connection};

impl OAuthSession {
    /// Runs `op` (a call, a listing), and again after authorizing each time it fails on a
    /// challenge (a 401, or a 403 `insufficient_scope`), within [`OAuth::max_step_ups`].
    pub async fn retry<T, F, Fut>(&mut self, mut op: F) -> Result<T, ClientError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        loop {
            if let Some(done) = self.settle(op().await).await? {
                return Ok(done);
            }
        }
    }

    /// What one attempt came to: `Some` when done; `None` once authorized again after a
    /// challenge, for the next attempt; the error of a failure that was no challenge.
    async fn settle<T>(
        &mut self,
        attempt: Result<T, ClientError>,
    ) -> Result<Option<T>, ClientError> {
        let failed = match attempt {
            Ok(done) => {
                self.answered();
                return Ok(Some(done));
            }
            Err(failed) => failed,
        };
        let Some(challenge) = challenge_of(&failed) else {
            return Err(failed);
        };
        self.authorize(Some(&challenge))
            .await
            .map_err(ClientError::transport)?;
        Ok(None)
    }
}

/// The `WWW-Authenticate` challenge a failed request or connection met, if that is why it
/// failed.
pub fn challenge_of(error: &ClientError) -> Option<String> {
    let ClientError::Transport(error) = error else {
        return None;
    };
    if let Some(service) = error.downcast_ref::<rmcp::service::ServiceError>() {
        return service.auth_challenge().map(str::to_owned);
    }
    if let Some(init) = error.downcast_ref::<rmcp::service::ClientInitializeError>() {
        return init.auth_challenge().map(str::to_owned);
    }
    None
}

impl OAuthSession {
    /// Connects with `connect` (a lifecycle of the caller's choosing over the session's
    /// transport), authorizing each time the server challenges (its first 401, a step-up)
    /// within [`OAuth::max_step_ups`], then connecting again.
    pub async fn connect<T, F, Fut>(&mut self, mut connect: F) -> Result<T, ClientError>
    where
        F: FnMut(OAuthTransport) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        loop {
            let transport = self.transport().await.map_err(ClientError::transport)?;
            if let Some(connected) = self.settle(connect(transport).await).await? {
                return Ok(connected);
            }
        }
    }
}

impl Answers {
    /// Connects to the session's server as [`OAuthSession::connect`] does, answering what it
    /// asks.
    pub async fn connect_oauth(
        self,
        session: &mut OAuthSession,
    ) -> Result<(Client, Connection), ClientError> {
        session
            .connect(|transport| self.clone().connect(transport))
            .await
    }
}
