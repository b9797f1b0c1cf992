//! What every request meets before rmcp's streamable HTTP service: the path, the body read
//! within its limit and its time, checked and repaired as on stdio (malformed bodies answered
//! 400 with a JSON-RPC error, never serde's positions), parsed only `max_parsing` at a time,
//! and the cap on live sessions.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, timeout_at};
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::accept::Guarded;
use super::hot::Plain;
use crate::server::Server;
use crate::server::fast;
use crate::server::guard::{Read, Unread, read, without_lone_surrogates};
use crate::server::handler::cut;

pub(super) type ReplyBody = BoxBody<Bytes, Infallible>;
pub(super) type Reply = Response<ReplyBody>;

/// The front of one server.
pub(super) struct Front {
    rmcp: StreamableHttpService<Server, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    parsing: Arc<Semaphore>,
    /// The path served, when the front owns the whole HTTP server (a mounted service is
    /// routed to by its application).
    path: Option<String>,
    /// Shutting down: new requests are refused.
    draining: AtomicBool,
    /// Requests whose answers are not yet written, and a wake-up when there are none.
    calls: Arc<Calls>,
    /// Ends every session and stream of rmcp's service.
    closing: CancellationToken,
    stateless: bool,
    /// The server, and what a request must show for the front to answer it itself (stateless
    /// with `fast_path`; see `hot`).
    hot: Option<(Server, Plain)>,
    max_body_bytes: usize,
    body_read_timeout: Duration,
    max_sessions: usize,
    /// Requests of each session whose answers are not yet written, by session and id.
    in_flight: Arc<Mutex<HashSet<SessionId>>>,
    /// The resource server every request passes first.
    #[cfg(feature = "oauth")]
    oauth: Option<Guard>,
}

/// The OAuth resource server of a front, with what it serves.
#[cfg(feature = "oauth")]
struct Guard {
    oauth: crate::server::auth::OAuth,
    server: Server,
    /// The Protected Resource Metadata, and the paths it is served at.
    metadata: Bytes,
    paths: [String; 2],
    /// Whose each session is: a session is used only with its own subject's tokens (MCP
    /// security best practices, "Session Hijacking").
    owners: Mutex<std::collections::HashMap<Arc<str>, Arc<str>>>,
}

/// A request of a session: the session's id and the request's.
type SessionId = (Arc<str>, RequestId);

/// The requests being answered.
#[derive(Default)]
pub(super) struct Calls {
    count: AtomicUsize,
    none: Notify,
}

/// A request being answered, until its answer is written or dropped.
struct Call(Arc<Calls>);

impl Call {
    fn new(calls: &Arc<Calls>) -> Self {
        calls.count.fetch_add(1, Ordering::AcqRel);
        Call(calls.clone())
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.none.notify_waiters();
        }
    }
}

/// A request's entry among those in flight, removed when its answer is written or dropped.
struct InFlight {
    set: Arc<Mutex<HashSet<SessionId>>>,
    key: Option<SessionId>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.set
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
        }
    }
}

/// A body's place among those being parsed, in the request's extensions: rmcp parses the body
/// with it held, and the handler of `tools/call` gives it back as soon as it starts (the
/// parse is over by then), so a long call does not hold it.
#[derive(Clone, Debug)]
pub(crate) struct ParsePlace(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl ParsePlace {
    /// Gives the place back, if the request `parts` hold one.
    pub(crate) fn release(parts: &http::request::Parts) {
        if let Some(place) = parts.extensions.get::<ParsePlace>() {
            place
                .0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
        }
    }
}

impl Front {
    pub(super) fn new(
        rmcp: StreamableHttpService<Server, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
        options: &HttpOptions,
        path: Option<String>,
        closing: CancellationToken,
        server: Server,
    ) -> Self {
        #[cfg(feature = "oauth")]
        let oauth = options.oauth.clone().map(|oauth| Guard {
            metadata: Bytes::from(oauth.metadata(&server.scopes())),
            paths: oauth.metadata_paths(),
            oauth,
            server: server.clone(),
            owners: Mutex::default(),
        });
        let hot = (options.stateless && options.fast_path).then(|| {
            let plain = Plain::new(&options.allowed_hosts, server.without_param_headers());
            (server, plain)
        });
        Front {
            hot,
            rmcp,
            sessions,
            parsing: Arc::new(Semaphore::new(options.max_parsing.max(1))),
            path,
            draining: AtomicBool::new(false),
            calls: Arc::default(),
            closing,
            stateless: options.stateless,
            max_body_bytes: options.max_body_bytes,
            body_read_timeout: options.body_read_timeout,
            max_sessions: options.max_sessions,
            in_flight: Arc::default(),
            #[cfg(feature = "oauth")]
            oauth,
        }
    }

    /// Takes the place of a request of a session among those in flight; the refusal when a
    /// request of that session with that id is in flight already (its answer could not be told
    /// from the first's, which would be lost: rmcp routes answers by id).
    fn enter(
        &self,
        parts: &http::request::Parts,
        id: &RequestId,
    ) -> Result<Option<InFlight>, Box<Reply>> {
        let session = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok());
        let (false, Some(session)) = (self.stateless, session) else {
            return Ok(None);
        };
        let key = (Arc::<str>::from(session), id.clone());
        let mut set = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !set.insert(key.clone()) {
            let error = ErrorData::invalid_request(
                format!(
                    "Invalid request: id {} is already used by a request in flight in this session",
                    cut(&id.to_string())
                ),
                None,
            );
            let message = JsonRpcMessage::error(error, Some(id.clone()));
            return Err(Box::new(json_rpc(StatusCode::BAD_REQUEST, &message)));
        }
        Ok(Some(InFlight {
            set: self.in_flight.clone(),
            key: Some(key),
        }))
    }

    /// Refuses new requests, waits for those in flight (at most `drain`), then ends every
    /// session and stream.
    pub(super) async fn drain(&self, drain: Duration) {
        self.draining.store(true, Ordering::Release);
        let none_left = async {
            loop {
                let notified = self.calls.none.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.calls.count.load(Ordering::Acquire) == 0 {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(drain, none_left).await.is_err() {
            let left = self.calls.count.load(Ordering::Acquire);
            tracing::warn!(
                left,
                ?drain,
                "http: calls still running after the drain period are stopped"
            );
        }
        self.closing.cancel();
    }

    pub(super) async fn handle<B>(&self, request: Request<B>) -> Reply
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        #[cfg(feature = "oauth")]
        if let Some(reply) = self.oauth.as_ref().and_then(|g| g.metadata(&request)) {
            return reply;
        }
        if self
            .path
            .as_deref()
            .is_some_and(|p| request.uri().path() != p)
        {
            return plain(StatusCode::NOT_FOUND, "Not Found");
        }
        if self.draining.load(Ordering::Acquire) {
            return shutting_down();
        }
        // Who calls, before anything else is read: a refusal costs no parse, budget or slot.
        #[cfg(feature = "oauth")]
        let (caller, request) = match &self.oauth {
            None => (None, request),
            Some(guard) => match guard.authenticate(request.headers()).await {
                Ok(caller) => {
                    if !guard.owns(request.headers(), &caller) {
                        return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
                    }
                    let mut request = request;
                    request.extensions_mut().insert(caller.clone());
                    (Some(caller), request)
                }
                Err(refused) => return refused,
            },
        };
        if request.method() != Method::POST {
            // GET (a stream of events) and DELETE (the end of a session) carry no body.
            let request = request.map(|body| body.map_err(|e| Shown(e.into())));
            return self.rmcp.handle(request).await;
        }
        let call = Call::new(&self.calls);
        let (mut parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > self.max_body_bytes as u64) {
            return self.too_large();
        }
        let body = match self.read_body(body).await {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let place = self.parsing.clone().acquire_owned().await.ok();
        let body = match without_lone_surrogates(&body) {
            Some(repaired) => Bytes::from(repaired),
            None => body,
        };
        let body = match body.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) => body.slice(body.len() - rest.len()..),
            None => body,
        };
        // A plain `tools/call`, `tools/list` or `ping` is read as rmcp will read it without
        // building its message here (rmcp parses the body itself): it opens no session.
        let (mut hot, inline) = match fast::parse_inline(&body) {
            Some((hot, inline)) => (Some(hot), inline),
            None => (None, None),
        };
        // Stateless, with plain headers: answered here, as rmcp would answer it.
        let shape = match (&self.hot, &hot) {
            (Some((_, plain)), Some(request)) => {
                plain.shape(request, inline.as_ref(), &parts.headers)
            }
            _ => None,
        };
        if shape.is_none() && inline.is_some() {
            // A request with a lifecycle of its own is rmcp's, unless answered here.
            hot = None;
        }
        #[cfg(feature = "oauth")]
        if let (Some(guard), Some(caller), Some(fast::Hot::Call(_, call))) =
            (&self.oauth, &caller, &hot)
            && let Some(refused) = guard.scopes(&call.name, call.arguments.as_ref(), caller)
        {
            return refused;
        }
        if let Some(shape) = shape
            && let (Some((server, _)), Some(request)) = (&self.hot, hot.take())
        {
            drop(place);
            #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
            let mut extensions = rmcp::model::Extensions::new();
            #[cfg(feature = "oauth")]
            if let Some(caller) = parts.extensions.remove::<crate::tools::Caller>() {
                extensions.insert(caller);
            }
            let answer = server
                .answer_hot(request, std::future::pending(), shape, None, extensions)
                .await
                .unwrap_or_default();
            // Counted among the calls in flight until its answer is written, as any other.
            return answered(answer).map(|body| Guarded(body, call).boxed());
        }
        let hot = hot.map(|hot| hot.id().clone());
        let in_flight = match hot {
            Some(id) => match self.enter(&parts, &id) {
                Ok(in_flight) => in_flight,
                Err(refused) => return *refused,
            },
            None => match self.read(&parts, &body).await {
                Ok(in_flight) => in_flight,
                Err(reply) => return *reply,
            },
        };
        // A request without a session may open one (`initialize`): its owner is recorded.
        #[cfg(feature = "oauth")]
        let opening = !parts.headers.contains_key("mcp-session-id");
        parts
            .extensions
            .insert(ParsePlace(Arc::new(Mutex::new(place))));
        let reply = self
            .rmcp
            .handle(Request::from_parts(parts, Full::new(body)))
            .await;
        #[cfg(feature = "oauth")]
        if let (Some(guard), Some(caller), true) = (&self.oauth, &caller, opening) {
            guard.opened(&reply, caller, &self.sessions).await;
        }
        // The call, and its id in its session, last until the answer is written (or the client
        // goes away).
        reply.map(|body| Guarded(body, (call, in_flight)).boxed())
    }

    /// Reads a body that is not a plain request: its place among the requests in flight of its
    /// session, or the answer rmcp would not give.
    async fn read(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
    ) -> Result<Option<InFlight>, Box<Reply>> {
        let refused = |reply: Reply| Err(Box::new(reply));
        match read(body) {
            Read::Message(message) => {
                #[cfg(feature = "oauth")]
                if let (Some(guard), Some(caller), JsonRpcMessage::Request(request)) = (
                    &self.oauth,
                    parts.extensions.get::<crate::tools::Caller>(),
                    &message,
                ) && let ClientRequest::CallToolRequest(call) = &request.request
                    && let Some(reply) =
                        guard.scopes(&call.params.name, call.params.arguments.as_ref(), caller)
                {
                    return refused(reply);
                }
                if let Some(reply) = self.over_session_cap(parts, &message).await {
                    return refused(reply);
                }
                match &message {
                    JsonRpcMessage::Request(request) => self.enter(parts, &request.id),
                    _ => Ok(None),
                }
            }
            Read::Answer(answer) => refused(json_rpc(StatusCode::BAD_REQUEST, &answer)),
            Read::Drop(Unread::Blank | Unread::NotJson) => {
                let error = ErrorData::new(
                    ErrorCode::PARSE_ERROR,
                    "Parse error: the body is not JSON",
                    None,
                );
                refused(json_rpc(
                    StatusCode::BAD_REQUEST,
                    &JsonRpcMessage::error(error, None),
                ))
            }
            Read::Drop(Unread::Notification) => {
                let error =
                    ErrorData::invalid_request("Invalid request: not a JSON-RPC message", None);
                refused(json_rpc(
                    StatusCode::BAD_REQUEST,
                    &JsonRpcMessage::error(error, None),
                ))
            }
        }
    }

    /// The whole body within the size limit and the time limit.
    async fn read_body<B>(&self, body: B) -> Result<Bytes, Reply>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut body = std::pin::pin!(body);
        let deadline = Instant::now() + self.body_read_timeout;
        let mut collected = Vec::new();
        loop {
            let frame = match timeout_at(deadline, body.frame()).await {
                Err(_) => return Err(self.too_slow()),
                Ok(None) => return Ok(Bytes::from(collected)),
                Ok(Some(Err(e))) => {
                    let e = e.into();
                    tracing::debug!("http: a request body could not be read: {e}");
                    return Err(closing(plain(StatusCode::BAD_REQUEST, "Bad Request")));
                }
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                if collected.len() + data.len() > self.max_body_bytes {
                    return Err(self.too_large());
                }
                collected.extend_from_slice(&data);
            }
        }
    }

    fn too_large(&self) -> Reply {
        let error = ErrorData::invalid_request(
            format!(
                "Invalid request: the body is over {} bytes, the most this server reads",
                self.max_body_bytes
            ),
            None,
        );
        let message = JsonRpcMessage::error(error, None);
        closing(json_rpc(StatusCode::PAYLOAD_TOO_LARGE, &message))
    }

    fn too_slow(&self) -> Reply {
        let error = ErrorData::invalid_request(
            format!(
                "Invalid request: the body did not arrive within {} s",
                self.body_read_timeout.as_secs_f64()
            ),
            None,
        );
        let message = JsonRpcMessage::error(error, None);
        closing(json_rpc(StatusCode::REQUEST_TIMEOUT, &message))
    }

    /// 503 for an `initialize` that would open a session past the cap.
    async fn over_session_cap(
        &self,
        parts: &http::request::Parts,
        message: &RxJsonRpcMessage<RoleServer>,
    ) -> Option<Reply> {
        let JsonRpcMessage::Request(request) = message else {
            return None;
        };
        let opens = !self.stateless
            && matches!(request.request, ClientRequest::InitializeRequest(_))
            && !parts.headers.contains_key("mcp-session-id");
        if !opens || self.sessions.sessions.read().await.len() < self.max_sessions {
            return None;
        }
        Some(self.busy(request.id.clone()))
    }

    fn busy(&self, id: RequestId) -> Reply {
        let error = ErrorData::new(
            ErrorCode(-32000),
            format!(
                "Server busy: this server holds at most {} sessions at once. Retry later, or end a session you no longer use (DELETE).",
                self.max_sessions
            ),
            None,
        );
        let mut reply = json_rpc(
            StatusCode::SERVICE_UNAVAILABLE,
            &JsonRpcMessage::error(error, Some(id)),
        );
        reply.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from_static(SESSION_RETRY_AFTER),
        );
        reply
    }
}

#[cfg(feature = "oauth")]
impl Guard {
    /// The Protected Resource Metadata, for a `GET` of one of its paths.
    fn metadata<B>(&self, request: &Request<B>) -> Option<Reply> {
        let path = request.uri().path();
        if !self.paths.iter().any(|p| p == path) {
            return None;
        }
        if request.method() != Method::GET && request.method() != Method::HEAD {
            let mut reply = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
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
    async fn authenticate(&self, headers: &http::HeaderMap) -> Result<crate::tools::Caller, Reply> {
        use crate::server::auth::Refusal;
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
    fn owns(&self, headers: &http::HeaderMap, caller: &crate::tools::Caller) -> bool {
        let Some(session) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return true;
        };
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners
            .get(session)
            .is_none_or(|owner| **owner == *caller.subject())
    }

    /// Records the owner of the session the reply to a request without one opened; forgets
    /// sessions that ended, once the record holds twice as many as the live sessions.
    async fn opened(
        &self,
        reply: &Reply,
        caller: &crate::tools::Caller,
        sessions: &LocalSessionManager,
    ) {
        let Some(session) = reply
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        else {
            return;
        };
        let live = sessions.sessions.read().await;
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
        caller: &crate::tools::Caller,
    ) -> Option<Reply> {
        let needed = self.server.refused_scopes(name, arguments, caller)?;
        let missing: Vec<&str> = caller.lacks(needed).collect();
        let description = format!(
            "This call needs the scope{} {}, which the access token does not grant.",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(" "),
        );
        tracing::info!(target: "mcp_fusion::audit", subject = caller.subject(), tool = name, missing = %missing.join(" "), "tool call refused: insufficient scope");
        let challenge = self
            .oauth
            .challenge(Some(("insufficient_scope", &description)), needed);
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

/// The answer to any request once the server is shutting down.
fn shutting_down() -> Reply {
    unavailable(
        "Server shutting down: retry in a moment (another replica may answer).",
        "1",
    )
}

/// `503` with a JSON-RPC error (-32000) saying `message`, `Retry-After` in seconds, and the
/// connection closed after it.
fn unavailable(message: &'static str, retry_after: &'static str) -> Reply {
    let error = ErrorData::new(ErrorCode(-32000), message, None);
    let mut reply = json_rpc(
        StatusCode::SERVICE_UNAVAILABLE,
        &JsonRpcMessage::error(error, None),
    );
    reply
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    closing(reply)
}

/// A body's error, shown as text (rmcp takes any body whose error displays).
struct Shown(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Seconds a client refused a session waits before it tries again.
const SESSION_RETRY_AFTER: &str = "10";

fn json_rpc(status: StatusCode, message: &TxJsonRpcMessage<RoleServer>) -> Reply {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut reply = Response::new(Full::new(Bytes::from(body)).boxed());
    *reply.status_mut() = status;
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

/// `200` with a JSON-RPC answer, as rmcp's stateless service sends it in JSON mode.
fn answered(body: Vec<u8>) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from(body)).boxed());
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut reply = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *reply.status_mut() = status;
    reply
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    reply
}

/// The reply, with the connection closed after it (the rest of the body is not read).
fn closing(mut reply: Reply) -> Reply {
    reply
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    reply
}
