//! The body step: a POST's body read within its size and its time, checked and repaired as on
//! stdio (malformed bodies answered `400` with a JSON-RPC error, never serde's positions),
//! parsed within a budget by size (`max_parsing` bodies of the largest size at a time, or more
//! smaller ones: [`Parsing`]; a body waits `parse_wait` at most for its share, then is refused
//! `503`), and what it is (a plain request, or the few facts of a message: [`Parsed`]) handed
//! to the steps after it that read it (nothing for a request none of them reads anything
//! of). The place goes on in the request's extensions ([`ParsePlace`]) until rmcp hands the request over to the server
//! (`handler`): it covers both parses and what rmcp builds of the message, and nothing of the
//! request's own time (a call, a stream held open for hours).
//!
//! A request of the table that no later step reads anything of (every one but
//! `initialize`, and a `tools/call` whose arguments OAuth's scope check reads) is left to
//! rmcp's parse, known here by its method only (a glance, or its top level read exactly with
//! OAuth and outside any session: `Limits::read_top`, `Limits::sessions`), and read whole here
//! only when rmcp refuses it, so that a body rmcp cannot read is answered as it always was.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use rmcp::model::{
    CallToolRequestMethod, ClientNotification, ClientRequest, ConstString, ErrorCode, ErrorData,
    InitializeResultMethod, JsonRpcMessage, RequestId,
};
use serde_json::{Map, Value};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, timeout_at};

use super::parsing::{ParsePlace, Parsing};
use super::reply::{Reply, closing, json_rpc, json_rpc_error, unavailable};
use crate::server::incoming::{self, Read, Unread, read, without_lone_surrogates};
use crate::server::lane::{self, PlainRequest};
use crate::server::methods::MCP_REQUESTS;
use crate::server::request::boxed;
use crate::tool::BoxFuture;

/// A `tools/call` rmcp will read, as a later step reads it.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))] // only OAuth's scope check reads it
pub(crate) struct KeptCall {
    pub(crate) name: String,
    /// Kept when a later step needs them (the OAuth scope check).
    pub(crate) arguments: Option<Map<String, Value>>,
}

/// The facts of one message.
#[derive(Default)]
pub(crate) struct Parsed {
    /// The request's id, when the message is a request.
    pub(crate) id: Option<RequestId>,
    /// Whether it is `initialize` (which may open a session).
    pub(crate) initialize: bool,
    /// A `tools/call` rmcp will read. (Boxed, as `plain` is.)
    pub(crate) call: Option<Box<KeptCall>>,
    /// A plain request, and the lifecycle its `_meta` carries (2026-07-28: its protocol version
    /// and its client capabilities, when they read as rmcp reads them).
    /// (Boxed: the facts of every other message stay small, made and moved once each.)
    pub(crate) plain: Option<Box<(PlainRequest<'static>, Option<Lifecycle>)>>,
    /// The request a `notifications/cancelled` cancels.
    pub(crate) cancels: Option<RequestId>,
    /// Not read whole here: left to rmcp's parse, and read whole when rmcp refuses it.
    pub(crate) unread: bool,
}

impl Parsed {
    /// Whether a step after the body's reads these facts: the session cap an `initialize`,
    /// the scope check a call, the lane a plain request or a cancellation. Any other message
    /// goes on without them.
    fn read_after(&self) -> bool {
        self.initialize || self.call.is_some() || self.plain.is_some() || self.cancels.is_some()
    }

    /// A `tools/call`'s name and arguments, whichever way it was read.
    #[cfg(feature = "oauth")]
    pub(crate) fn call(&self) -> Option<(&str, Option<&Map<String, Value>>)> {
        match (&self.plain, &self.call) {
            (Some(plain), _) if let (PlainRequest::Call(_, call), _) = &**plain => {
                Some((&call.name, call.arguments.as_ref()))
            }
            (_, Some(call)) => Some((&call.name, call.arguments.as_ref())),
            _ => None,
        }
    }
}

/// The lifecycle a 2026-07-28 plain request carries in its `_meta`.
pub(crate) struct Lifecycle {
    pub(crate) version: String,
    pub(crate) capabilities: Option<Box<rmcp::model::ClientCapabilities>>,
}

/// A body read whole.
pub(crate) struct ReadBody {
    data: Option<Bytes>,
}

impl ReadBody {
    /// A body of `data`.
    pub(crate) fn new(data: Bytes) -> Self {
        ReadBody {
            data: (!data.is_empty()).then_some(data),
        }
    }

    /// No body (GET, DELETE).
    pub(crate) fn empty() -> Self {
        ReadBody::new(Bytes::new())
    }

    /// Its bytes, shared.
    fn bytes(&self) -> Bytes {
        self.data.clone().unwrap_or_default()
    }
}

impl Body for ReadBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.data.take().map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

/// The request a read body goes on in, the facts of its message when a later step reads them,
/// and, for a body left to rmcp's parse, the body and its parse place, kept to read it whole
/// if rmcp refuses it (its words for a body it cannot read are serde's) under the place the
/// request still holds when rmcp never handed it over. (Out of the reading's future: a value
/// borrowed there keeps its room for as long as the future runs.)
fn handed_on(
    mut parts: http::request::Parts,
    body: ReadBody,
    parsed: Parsed,
    place: ParsePlace,
) -> (
    Request<ReadBody>,
    Option<Parsed>,
    Option<(Bytes, ParsePlace)>,
) {
    let unread = (parsed.unread).then(|| (body.bytes(), place.clone()));
    let parsed = Some(parsed).filter(Parsed::read_after);
    parts.extensions.insert(place);
    (Request::from_parts(parts, body), parsed, unread)
}

/// The limits of the body step.
pub(crate) struct Limits {
    pub(crate) max_body_bytes: usize,
    pub(crate) body_read_timeout: Duration,
    /// The bodies being parsed, by size ([`Parsing`]).
    pub(crate) parsing: Parsing,
    /// How long a body waits for a place before it is refused `503`.
    pub(crate) parse_wait: Duration,
    /// Whether a `tools/call`'s arguments are kept for a later step (the OAuth scope check).
    pub(crate) keep_call_arguments: bool,
    /// Whether the fast lane answers plain requests (`HttpOptions::fast_path`): then they are
    /// read as the lane reads them.
    pub(crate) lane: bool,
    /// How a request left to rmcp's parse is known here. With OAuth (whose scope check reads a
    /// call), by its top level, read exactly (`incoming::top`); without it (and within a
    /// session: `sessions`), by a glance at its method (`lane::glance`), which a crafted body
    /// can mislead only into leaving rmcp a request nothing here needs (a session's rule on
    /// ids reads the message rmcp parsed: `http::sessions`). When rmcp refuses a request left
    /// to it, the whole reading gives its answer, as it would have before rmcp
    /// (`ReadBodies::call`).
    pub(crate) read_top: bool,
    /// Whether the server keeps sessions: then a POST outside any session (no session header),
    /// which may be an `initialize` that opens one, is known by its top level read exactly too,
    /// so that the session cap counts every `initialize` rmcp would read, whatever a body puts
    /// before its method (a glance takes the first `"method"`, a nested one included).
    pub(crate) sessions: bool,
}

impl Limits {
    /// Reads `request`'s body (a POST's; any other carries none) and hands it on to `next`,
    /// with the facts of its message when a later step reads them; answers itself a body it
    /// refuses, and a body left to rmcp's parse that rmcp refused, as the whole reading
    /// answers it.
    pub(crate) fn read_request<B, N, F>(
        &self,
        request: Request<B>,
        next: N,
    ) -> impl Future<Output = Reply>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        N: FnOnce(Request<ReadBody>, Option<Parsed>) -> F,
        F: Future<Output = Reply>,
    {
        // Taken apart before the future is made, which then holds each part once.
        let (parts, body) = request.into_parts();
        async move {
            if parts.method != Method::POST {
                // GET (a stream of events) and DELETE (the end of a session) carry no body.
                return next(Request::from_parts(parts, ReadBody::empty()), None).await;
            }
            // Exactly read: with OAuth, and outside any session of a server that keeps them.
            let exact = self.read_top
                || (self.sessions && !parts.headers.contains_key(&super::headers::SESSION_ID));
            let (body, parsed, place) = match self.read(body, exact).await {
                Ok(read) => read,
                Err(refused) => return *refused,
            };
            let (request, parsed, unread) = handed_on(parts, body, parsed, place);
            let reply = next(request, parsed).await;
            if let Some((unread, _place)) = unread
                && !reply.status().is_success()
                && let Err(refused) = self.whole(&unread)
            {
                return *refused;
            }
            reply
        }
    }

    /// Reads, repairs and parses a POST's body: the body to hand on, with what it is; or the
    /// answer that refuses it.
    async fn read<B>(
        &self,
        body: B,
        exact: bool,
    ) -> Result<(ReadBody, Parsed, ParsePlace), Box<Reply>>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // A body declared larger than the limit (its `Content-Length`, which hyper's body
        // gives as its size) is refused before it is read.
        if body.size_hint().lower() > self.max_body_bytes as u64 {
            return Err(Box::new(self.too_large()));
        }
        let body = self.read_body(body).await?;
        // A free place is taken at once; only a body that must wait has its wait timed.
        let place = match self.parsing.try_take(body.len()) {
            Some(place) => place,
            None => self.wait_for_place(body.len()).await?,
        };
        let body = match without_lone_surrogates(&body) {
            Some(repaired) => Bytes::from(repaired),
            None => body,
        };
        let body = match body.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) => body.slice(body.len() - rest.len()..),
            None => body,
        };
        let parsed = self.parse(&body, exact)?;
        Ok((ReadBody::new(body), parsed, ParsePlace::new(place)))
    }

    /// A place to parse in, once one is free within `parse_wait`; else the refusal. (Boxed and
    /// out of line: the usual request takes a free place at once.)
    #[cold]
    fn wait_for_place(
        &self,
        len: usize,
    ) -> BoxFuture<'_, Result<OwnedSemaphorePermit, Box<Reply>>> {
        Box::pin(async move {
            let parsing = tokio::time::timeout(self.parse_wait, self.parsing.take(len));
            let Ok(Some(place)) = parsing.await else {
                tracing::warn!(wait = ?self.parse_wait, "http: a body waited too long to be parsed; refused");
                return Err(Box::new(unavailable(
                    "Server busy: too many requests are being read; retry in a moment.",
                    "1",
                )));
            };
            Ok(place)
        })
    }

    /// What a body is: a plain request read as rmcp will read it (without building its message
    /// here), or the facts of a message rmcp can read; or the answer rmcp would not give.
    /// `exact`: a request left to rmcp's parse is known by its top level, not a glance.
    fn parse(&self, body: &[u8], exact: bool) -> Result<Parsed, Box<Reply>> {
        // The fast lane's reading (`server::lane`) of a plain request, which the lane answers
        // and whose call OAuth's scope check reads, is tried first when the body seems to be
        // one; any other request of the table is left to rmcp's parse when no later step
        // reads anything of it.
        let method = lane::glance(body);
        let lane_reads = self.lane || self.keep_call_arguments;
        let plain_first = lane_reads
            && method
                .is_some_and(|method| lane::PLAIN_METHODS.iter().any(|m| m.as_bytes() == method));
        let lean = || {
            let top = match exact {
                true => Some(incoming::top(body)?),
                false => None,
            };
            let method = match &top {
                Some((method, _)) => method.as_bytes(),
                None => method?,
            };
            self.left_to_rmcp(method).then(|| Parsed {
                unread: true,
                ..Parsed::default()
            })
        };
        if !plain_first && let Some(parsed) = lean() {
            return Ok(parsed);
        }
        if lane_reads && let Some((request, inline)) = lane::parse_inline(body) {
            let lifecycle = inline.map(|i| Lifecycle {
                version: i.version.into_owned(),
                capabilities: i.capabilities,
            });
            let request = request.into_owned();
            return Ok(Parsed {
                id: Some(request.id().clone()),
                plain: Some(Box::new((request, lifecycle))),
                ..Parsed::default()
            });
        }
        if plain_first && let Some(parsed) = lean() {
            return Ok(parsed);
        }
        self.whole(body)
    }

    /// Whether a request of `method` is left to rmcp's parse: one of the table, other than
    /// `initialize` (which may open a session) and a call whose arguments OAuth's scope check
    /// reads.
    fn left_to_rmcp(&self, method: &[u8]) -> bool {
        let initialize = <InitializeResultMethod as ConstString>::VALUE;
        let call = <CallToolRequestMethod as ConstString>::VALUE;
        method != initialize.as_bytes()
            && !(self.keep_call_arguments && method == call.as_bytes())
            && MCP_REQUESTS.iter().any(|m| m.as_bytes() == method)
    }

    /// A body read whole (`incoming::read`): the facts of the message rmcp reads, or the
    /// answer rmcp would not give.
    #[inline(never)]
    fn whole(&self, body: &[u8]) -> Result<Parsed, Box<Reply>> {
        let refused = |status, error| Err(Box::new(json_rpc_error(status, error)));
        match read(body) {
            Read::Message(JsonRpcMessage::Request(request)) => {
                let mut parsed = Parsed {
                    id: Some(request.id),
                    ..Parsed::default()
                };
                match request.request {
                    ClientRequest::InitializeRequest(_) => parsed.initialize = true,
                    ClientRequest::CallToolRequest(call) => {
                        let arguments = match self.keep_call_arguments {
                            true => call.params.arguments,
                            false => None,
                        };
                        parsed.call = Some(Box::new(KeptCall {
                            name: call.params.name.into_owned(),
                            arguments,
                        }));
                    }
                    _ => {}
                }
                Ok(parsed)
            }
            Read::Message(JsonRpcMessage::Notification(notification)) => Ok(Parsed {
                cancels: match notification.notification {
                    ClientNotification::CancelledNotification(cancelled) => {
                        cancelled.params.request_id
                    }
                    _ => None,
                },
                ..Parsed::default()
            }),
            Read::Message(_) => Ok(Parsed::default()),
            Read::Answer(answer) => Err(Box::new(json_rpc(StatusCode::BAD_REQUEST, &answer))),
            Read::Drop(Unread::Blank | Unread::NotJson) => refused(
                StatusCode::BAD_REQUEST,
                ErrorData::new(
                    ErrorCode::PARSE_ERROR,
                    "Parse error: the body is not JSON",
                    None,
                ),
            ),
            Read::Drop(Unread::Notification) => refused(
                StatusCode::BAD_REQUEST,
                ErrorData::invalid_request("Invalid request: not a JSON-RPC message", None),
            ),
        }
    }

    /// The whole body within the size limit and the time limit.
    async fn read_body<B>(&self, body: B) -> Result<Bytes, Box<Reply>>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut body = std::pin::pin!(body);
        // The usual body is there whole once its head is read: kept as it came (not copied),
        // without a timer, and without the general reading's code on the way.
        let first = match std::future::poll_fn(|cx| Poll::Ready(body.as_mut().poll_frame(cx))).await
        {
            Poll::Ready(None) => return Ok(Bytes::new()),
            Poll::Ready(Some(Err(e))) => return Err(unreadable(e.into())),
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) if body.is_end_stream() && data.len() <= self.max_body_bytes => {
                    return Ok(data);
                }
                Ok(data) => Some(data),
                Err(_) => None,
            },
            Poll::Pending => None,
        };
        let rest: BoxFuture<'_, Result<Bytes, Box<Reply>>> =
            boxed(|| self.read_rest(body.as_mut(), first));
        rest.await
    }

    /// The rest of a body that did not come whole at once (`first`: what came), within the size
    /// limit and the time limit.
    async fn read_rest<B>(
        &self,
        mut body: Pin<&mut B>,
        mut first: Option<Bytes>,
    ) -> Result<Bytes, Box<Reply>>
    where
        B: Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if first
            .as_ref()
            .is_some_and(|data| data.len() > self.max_body_bytes)
        {
            return Err(Box::new(self.too_large()));
        }
        let deadline = Instant::now() + self.body_read_timeout;
        let mut collected = Vec::new();
        loop {
            let frame = match timeout_at(deadline, body.frame()).await {
                Err(_) => return Err(Box::new(self.too_slow())),
                Ok(None) if collected.is_empty() => return Ok(first.unwrap_or_default()),
                Ok(None) => return Ok(Bytes::from(collected)),
                Ok(Some(Err(e))) => return Err(unreadable(e.into())),
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                let held = first.as_ref().map_or(0, Bytes::len) + collected.len();
                if held + data.len() > self.max_body_bytes {
                    return Err(Box::new(self.too_large()));
                }
                match first.take() {
                    None if collected.is_empty() => first = Some(data),
                    earlier => {
                        collected.extend_from_slice(&earlier.unwrap_or_default());
                        collected.extend_from_slice(&data);
                    }
                }
            }
        }
    }

    #[cold]
    fn too_large(&self) -> Reply {
        let error = ErrorData::invalid_request(
            format!(
                "Invalid request: the body is over {} bytes, the most this server reads",
                self.max_body_bytes
            ),
            None,
        );
        closing(json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, error))
    }

    #[cold]
    fn too_slow(&self) -> Reply {
        let error = ErrorData::invalid_request(
            format!(
                "Invalid request: the body did not arrive within {} s",
                self.body_read_timeout.as_secs_f64()
            ),
            None,
        );
        closing(json_rpc_error(StatusCode::REQUEST_TIMEOUT, error))
    }
}

/// The answer to a body that could not be read (the connection failed under it).
#[cold]
fn unreadable(e: Box<dyn std::error::Error + Send + Sync>) -> Box<Reply> {
    tracing::debug!("http: a request body could not be read: {e}");
    let refused = super::reply::text(StatusCode::BAD_REQUEST, "Bad Request");
    Box::new(closing(refused))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;
    use std::sync::{Arc, Mutex};

    fn limits(max_parsing: usize) -> Limits {
        Limits {
            max_body_bytes: 64,
            body_read_timeout: Duration::from_secs(30),
            parsing: Parsing::new(max_parsing, 64),
            parse_wait: Duration::from_secs(5),
            keep_call_arguments: false,
            lane: true,
            read_top: true,
            sessions: false,
        }
    }

    /// What reaches the next step: the body's bytes and the message's id.
    async fn next(request: Request<ReadBody>, parsed: Option<Parsed>) -> Reply {
        let id = (parsed.and_then(|p| p.id))
            .map(|id| id.to_string())
            .unwrap_or_default();
        let body = request.into_body().collect().await.unwrap().to_bytes();
        let text = format!("{id}|{}", String::from_utf8_lossy(&body));
        Reply::new(Full::new(Bytes::from(text)).boxed())
    }

    /// What the body step answers a POST of `body`, handing it on to `next`.
    async fn post<N, F>(limits: &Limits, body: &str, next: N) -> (StatusCode, String)
    where
        N: FnOnce(Request<ReadBody>, Option<Parsed>) -> F,
        F: Future<Output = Reply>,
    {
        let request = Request::post("/mcp")
            .body(Full::new(Bytes::copy_from_slice(body.as_bytes())))
            .unwrap();
        let reply = limits.read_request(request, next).await;
        let status = reply.status();
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn bodies_are_read_repaired_and_refused_as_on_stdio() {
        let limits = limits(1);
        let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        assert_eq!(
            post(&limits, ping, next).await,
            (StatusCode::OK, format!("7|{ping}"))
        );
        let bom = "\u{FEFF}{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}";
        assert_eq!(post(&limits, bom, next).await.1, format!("8|{}", &bom[3..]));
        let (status, body) = post(&limits, "not json", next).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.contains("-32700"), "{body}");
        let big = r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"0123456789012345678901234567890"}}"#;
        assert_eq!(
            post(&limits, big, next).await.0,
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }

    /// A request of the table is left to rmcp's parse, known by a glance at its method or by
    /// its top level (`read_top`, which takes its id): a body rmcp reads goes on unread, and
    /// one rmcp refuses is answered as the whole reading answers it, never in rmcp's (serde's)
    /// words; rmcp's other refusals of a readable body stand.
    #[tokio::test]
    async fn a_body_left_to_rmcp_is_answered_by_the_whole_reading_when_rmcp_refuses_it() {
        // Read exactly with OAuth, and outside a session on a server that keeps them.
        for (read_top, sessions) in [(false, false), (true, false), (false, true)] {
            left_to_rmcp(read_top, sessions).await;
        }
    }

    async fn left_to_rmcp(read_top: bool, sessions: bool) {
        // As rmcp's service answers: a body it cannot read is 415 with serde's words, a
        // request without the headers it wants 406.
        let rmcp = |request: Request<ReadBody>, parsed: Option<Parsed>| async move {
            // The facts the later steps are told: none for a request left to rmcp.
            let facts = match parsed {
                Some(parsed) => format!(
                    "{} {}",
                    if parsed.initialize {
                        "initialize"
                    } else {
                        "other"
                    },
                    (parsed.id.as_ref()).map_or(String::new(), |id| id.to_string())
                ),
                None => "none".to_owned(),
            };
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let (status, text) = match serde_json::from_slice::<Value>(&body) {
                Err(e) => (
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("fail to deserialize request body {e}"),
                ),
                Ok(v) if v["id"] == 2 => (StatusCode::NOT_ACCEPTABLE, "Not Acceptable".to_owned()),
                Ok(_) => (StatusCode::OK, format!("facts: {facts}")),
            };
            let mut reply = Reply::new(Full::new(Bytes::from(text)).boxed());
            *reply.status_mut() = status;
            reply
        };
        let mut limits = limits(1);
        limits.max_body_bytes = 1024;
        limits.read_top = read_top;
        limits.sessions = sessions;
        let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}"#;
        assert_eq!(
            post(&limits, prompt, rmcp).await,
            (StatusCode::OK, "facts: none".to_owned())
        );
        let refused = r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p"}}"#;
        assert_eq!(
            post(&limits, refused, rmcp).await.0,
            StatusCode::NOT_ACCEPTABLE
        );
        // Cut short: not JSON. A number beyond a double: a request serde_json cannot hold.
        let cut = r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"#;
        let (status, body) = post(&limits, cut, rmcp).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            body.contains("-32700") && !body.contains("column"),
            "{body}"
        );
        let huge = r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p","arguments":{"n":1e400}}}"#;
        let (status, body) = post(&limits, huge, rmcp).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            body.contains(r#""id":4"#) && body.contains("double"),
            "{body}"
        );
        // Nested deeper than serde_json reads, with the method and id of a request outside.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{{"d":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let (status, body) = post(&limits, &deep, rmcp).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            body.contains(r#""id":6"#) && body.contains("-32600"),
            "{body}"
        );
        // `initialize` is read here, as before; with its top level read, also when a method
        // named inside its params comes first.
        let params = r#""params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#;
        let initialize = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"initialize",{params}}}"#);
        assert_eq!(
            post(&limits, &initialize, rmcp).await.1,
            "facts: initialize 5"
        );
        let hidden = format!(r#"{{{params},"jsonrpc":"2.0","id":5,"method":"initialize"}}"#)
            .replace(
                r#""capabilities":{}"#,
                r#""capabilities":{},"method":"ping""#,
            );
        let exact = read_top || sessions;
        let expected = if exact { "initialize 5" } else { "none" };
        assert_eq!(
            post(&limits, &hidden, rmcp).await.1,
            format!("facts: {expected}")
        );
        // Every parse place is back.
        assert_eq!(limits.parsing.free(), 1);
    }

    /// A request holds its parse place until it is handed over (or dropped): while one holds
    /// it, the next waits, and after the wait is refused `503`; once it is handed over, the
    /// next is read, however long the first request lasts.
    #[tokio::test(start_paused = true)]
    async fn the_parse_place_is_held_until_the_request_is_handed_over() {
        let limits = limits(1);
        let (held_tx, held_rx) = tokio::sync::oneshot::channel::<ParsePlace>();
        let held_tx = Arc::new(Mutex::new(Some(held_tx)));
        let holding = move |request: Request<ReadBody>, _: Option<Parsed>| {
            let held_tx = Arc::clone(&held_tx);
            async move {
                let taken = held_tx.lock().unwrap().take();
                if let (Some(tx), Some(place)) = (taken, request.extensions().get::<ParsePlace>()) {
                    let _ = tx.send(place.clone());
                }
                Reply::new(Full::default().boxed())
            }
        };
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(post(&limits, ping, holding.clone()).await.0, StatusCode::OK);
        let held = held_rx.await.unwrap();
        assert_eq!(limits.parsing.free(), 0);
        let refused = post(&limits, ping, holding.clone()).await;
        assert_eq!(refused.0, StatusCode::SERVICE_UNAVAILABLE, "{refused:?}");
        held.release();
        assert_eq!(limits.parsing.free(), 1);
        assert_eq!(post(&limits, ping, holding).await.0, StatusCode::OK);
    }
}
