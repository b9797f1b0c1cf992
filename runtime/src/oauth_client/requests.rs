//! The HTTP client every OAuth request of [`OAuth`](super::OAuth) goes through (discovery,
//! registration, the token endpoint, refresh): each request bounded by the configured timeout
//! (tokio's clock, so a paused clock drives it in tests), redirects followed only within the
//! origin that was asked (a few at most), bodies bounded. The last refusal is kept so that the
//! error rmcp reports (often only text) can be told precisely.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

/// At most this many redirects within one origin.
const MAX_REDIRECTS: usize = 5;
/// The largest OAuth response body read (metadata, registration, token).
const MAX_BODY: usize = 1 << 20;

/// Why the last OAuth request was refused by this client itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// No answer within the timeout.
    TimedOut { url: String, after: Duration },
    /// A redirect to another origin (scheme, host, port).
    Redirected { from: String, to: String },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::TimedOut { url, after } => {
                write!(f, "{url} did not answer within {} ms", after.as_millis())
            }
            Refusal::Redirected { from, to } => {
                write!(f, "{from} redirected to another origin ({to}): refused")
            }
        }
    }
}

impl std::error::Error for Refusal {}

/// reqwest, never following a redirect by itself.
pub(super) struct Http {
    client: reqwest::Client,
    timeout: Duration,
    /// The last refusal, for the error the caller sees.
    pub(super) refused: Arc<Mutex<Option<Refusal>>>,
}

impl Http {
    pub(super) fn new(timeout: Duration) -> Result<Http, reqwest::Error> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Http {
            client,
            timeout,
            refused: Arc::default(),
        })
    }

    fn refuse(&self, refusal: Refusal) -> OAuthHttpClientError {
        tracing::warn!(%refusal, "an OAuth request was refused");
        *self.refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(refusal.clone());
        Box::new(refusal)
    }

    /// Sends `request`, following redirects within its origin when `follow`.
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        follow: bool,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let mut request = reqwest::Request::try_from(request)?;
        let mut redirects = 0;
        loop {
            let retry = request.try_clone();
            let url = request.url().clone();
            let response = self.client.execute(request).await?;
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok());
            match (response.status().is_redirection(), location, retry) {
                (true, Some(to), Some(mut next)) if follow => {
                    if to.origin() != url.origin() {
                        return Err(self.refuse(Refusal::Redirected {
                            from: url.to_string(),
                            to: to.to_string(),
                        }));
                    }
                    redirects += 1;
                    if redirects > MAX_REDIRECTS {
                        return Err(format!("{url}: more than {MAX_REDIRECTS} redirects").into());
                    }
                    *next.url_mut() = to;
                    request = next;
                }
                (true, Some(to), _) if to.origin() != url.origin() => {
                    // rmcp follows this itself (or not); the refusal is kept for the error.
                    *self.refused.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(Refusal::Redirected {
                            from: url.to_string(),
                            to: to.to_string(),
                        });
                    return read(response).await;
                }
                _ => return read(response).await,
            }
        }
    }
}

/// The response as rmcp takes it, its body at most [`MAX_BODY`] bytes.
async fn read(
    mut response: reqwest::Response,
) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
    let mut builder = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        builder = builder.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("an OAuth response body over {MAX_BODY} bytes").into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(builder.body(body)?)
}

impl Http {
    /// Sends `request` within the timeout, following redirects within its origin when
    /// `follow`.
    pub(super) async fn timed(
        &self,
        request: http::Request<Vec<u8>>,
        follow: bool,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let url = request.uri().to_string();
        match tokio::time::timeout(self.timeout, self.send(request, follow)).await {
            Ok(answer) => answer,
            Err(_) => Err(self.refuse(Refusal::TimedOut {
                url,
                after: self.timeout,
            })),
        }
    }
}

impl OAuthHttpClient for Http {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let follow = request.redirect_policy == OAuthHttpRedirectPolicy::Follow;
        Box::pin(self.timed(request.request, follow))
    }
}
