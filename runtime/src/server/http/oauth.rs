//! MCP authorization over streamable HTTP (feature `oauth`): the server as an OAuth resource
//! server, in two steps of the endpoint. [`Guard::serve`], before the body is read: the
//! Protected Resource Metadata served at its well-known paths, a bearer token checked on every
//! request (`401`, or `503` when it cannot be checked now) so that a refusal costs no parse,
//! budget or slot, a session used only with its own subject's tokens, and the verified
//! [`Caller`] left in the request's extensions for the core. [`Guard::check_scopes`], once the
//! body is read: a `tools/call` whose action (or mounted tool) needs scopes the token lacks is
//! answered `403 insufficient_scope` (MCP authorization, "Scope Challenge Handling"), after
//! routing and validation pass.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::body::{Parsed, ReadBody};
use super::reply::{Reply, closing, text, unavailable};
use crate::server::core::Server;
use crate::server::oauth::OAuth;
use crate::tool::Caller;

/// The OAuth resource server of an endpoint, with what it serves.
pub(crate) struct Guard {
    oauth: OAuth,
    server: Server,
    /// The Protected Resource Metadata, and the paths it is served at.
    metadata: Bytes,
    paths: [String; 2],
    /// Whose each session is: a session is used only with its own subject's tokens (MCP
    /// security best practices, "Session Hijacking").
    owners: Mutex<HashMap<Arc<str>, Arc<str>>>,
    /// rmcp's sessions, to forget the owners of those that ended.
    sessions: Arc<LocalSessionManager>,
}

impl Guard {
    pub(crate) fn new(oauth: OAuth, server: Server, sessions: Arc<LocalSessionManager>) -> Self {
        Guard {
            metadata: Bytes::from(oauth.metadata(&server.scopes())),
            paths: oauth.metadata_paths(),
            oauth,
            server,
            owners: Mutex::default(),
            sessions,
        }
    }

    /// The paths the metadata is served at.
    pub(crate) fn metadata_paths(&self) -> &[String] {
        &self.paths
    }
}

impl Guard {
    /// Serves `request` as the resource server, before its body is read: the metadata at its
    /// paths; else the bearer token checked, the session the request names checked to be
    /// the caller's, and `next` with the verified caller in the request's extensions; the
    /// owner of a session the answer opened is recorded.
    pub(crate) async fn serve<B, N, F>(&self, mut request: Request<B>, next: N) -> Reply
    where
        N: FnOnce(Request<B>) -> F,
        F: Future<Output = Reply>,
    {
        if let Some(reply) = self.metadata(&request) {
            return reply;
        }
        // Who calls, before anything else is read.
        let caller = match self.authenticate(request.headers()).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        if !self.owns(request.headers(), &caller) {
            return text(StatusCode::NOT_FOUND, "Not Found: Session not found");
        }
        // A request without a session may open one (`initialize`): its owner is recorded.
        let opening = !request.headers().contains_key(&super::headers::SESSION_ID);
        request.extensions_mut().insert(caller.clone());
        let reply = next(request).await;
        if opening {
            self.opened(&reply, &caller).await;
        }
        reply
    }

    /// Once the body is read: `403 insufficient_scope` for a call the verified caller's token
    /// may not make; else `Ok`, the call's arguments (kept for this check only) taken from the
    /// message's facts.
    pub(crate) fn check_scopes(
        &self,
        request: &Request<ReadBody>,
        parsed: &mut Option<Parsed>,
    ) -> Result<(), Box<Reply>> {
        let caller = request.extensions().get::<Caller>();
        if let (Some(caller), Some(parsed)) = (caller, &*parsed)
            && let Some((name, arguments)) = parsed.call()
            && let Some(refused) = self.scopes(name, arguments, caller)
        {
            return Err(Box::new(refused));
        }
        if let Some(call) = parsed.as_mut().and_then(|parsed| parsed.call.as_mut()) {
            call.arguments.take();
        }
        Ok(())
    }
}

impl Guard {
    /// The Protected Resource Metadata, for a `GET` of one of its paths.
    fn metadata<B>(&self, request: &Request<B>) -> Option<Reply> {
        let path = request.uri().path();
        if !self.paths.iter().any(|p| p == path) {
            return None;
        }
        if request.method() != Method::GET && request.method() != Method::HEAD {
            let mut reply = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            reply
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Some(reply);
        }
        let mut reply = Response::new(Full::new(self.metadata.clone()).boxed());
        let headers = reply.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=3600"),
        );
        Some(reply)
    }

    /// The verified caller of a request, or its refusal: `401` with the challenge, `503`
    /// when the token cannot be checked now. The connection is closed after a refusal, the
    /// body unread.
    async fn authenticate(&self, headers: &http::HeaderMap) -> Result<Caller, Reply> {
        use crate::server::oauth::Refusal;
        let refused = match self
            .oauth
            .authenticate(headers.get_all(header::AUTHORIZATION))
            .await
        {
            Ok(caller) => return Ok(caller),
            Err(refused) => refused,
        };
        let (status, error, description) = match &refused {
            Refusal::Missing => (
                StatusCode::UNAUTHORIZED,
                None,
                "This server needs an access token (Authorization: Bearer).",
            ),
            Refusal::Invalid(why) => (StatusCode::UNAUTHORIZED, Some("invalid_token"), &**why),
            Refusal::Unavailable(why) => {
                tracing::warn!("oauth: a token could not be checked: {why}");
                return Err(unavailable(
                    "Server busy: the access token cannot be checked right now; retry in a moment.",
                    "5",
                ));
            }
        };
        let challenge = self.oauth.challenge(error.map(|e| (e, description)), &[]);
        let body = serde_json::json!({
            "error": error.unwrap_or("invalid_request"),
            "error_description": description,
        });
        Err(closing(self.refusal(status, &challenge, &body)))
    }

    /// Whether the session a request names, if any, is the caller's own. A session of another
    /// subject is answered as an unknown one.
    fn owns(&self, headers: &http::HeaderMap, caller: &Caller) -> bool {
        let Some(session) = headers
            .get(&super::headers::SESSION_ID)
            .and_then(|v| v.to_str().ok())
        else {
            return true;
        };
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners
            .get(session)
            .is_none_or(|owner| **owner == *caller.subject())
    }

    /// Records the owner of the session the reply to a request without one opened; forgets
    /// sessions that ended, once the record holds twice as many as the live sessions.
    async fn opened(&self, reply: &Reply, caller: &Caller) {
        let Some(session) = reply
            .headers()
            .get(&super::headers::SESSION_ID)
            .and_then(|v| v.to_str().ok())
        else {
            return;
        };
        let live = self.sessions.sessions.read().await;
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.insert(session.into(), caller.subject().into());
        if owners.len() > 2 * live.len() + 16 {
            owners.retain(|id, _| live.contains_key(id));
        }
    }

    /// `403 insufficient_scope` for a call of `name` whose action needs scopes the caller's
    /// token lacks (MCP authorization, "Scope Challenge Handling"; RFC 6750 §3.1): the scopes
    /// the action needs, for the host to ask the user for.
    fn scopes(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        caller: &Caller,
    ) -> Option<Reply> {
        let needed = self.server.refused_scopes(name, arguments, caller)?;
        let missing: Vec<&str> = caller.lacks(&needed).collect();
        let description = format!(
            "This call needs the scope{} {}, which the access token does not grant.",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(" "),
        );
        tracing::info!(target: "mcp_fusion::audit", subject = caller.subject(), tool = name, missing = %missing.join(" "), "tool call refused: insufficient scope");
        let challenge = self
            .oauth
            .challenge(Some(("insufficient_scope", &description)), &needed);
        let body = serde_json::json!({
            "error": "insufficient_scope",
            "error_description": description,
            "scope": needed.join(" "),
        });
        Some(self.refusal(StatusCode::FORBIDDEN, &challenge, &body))
    }

    fn refusal(&self, status: StatusCode, challenge: &str, body: &serde_json::Value) -> Reply {
        let mut reply = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
        *reply.status_mut() = status;
        let headers = reply.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Ok(challenge) = HeaderValue::from_str(challenge) {
            headers.insert(header::WWW_AUTHENTICATE, challenge);
        }
        reply
    }
}
