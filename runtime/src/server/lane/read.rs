//! The requests a transport answers itself, once the lifecycle has begun: `tools/call`,
//! `tools/list` and `ping`, in their plain form, read from the line's bytes into a few borrowed
//! fields and answered with one serialisation, instead of going through rmcp's message types
//! (which buffer each message several times before its arguments become values) and its
//! service loop.
//!
//! Only the plain form is taken: `"jsonrpc": "2.0"`, an id, the method, and params holding
//! nothing but what is read here (a `tools/call`'s `name`, `arguments` and a `_meta` with at
//! most `progressToken`, `traceparent` and `tracestate`; a retried 2026-07-28 call's
//! `inputResponses` and `requestState`, with its lifecycle). Anything else (a member given
//! twice, a value serde_json cannot hold, any other method) goes to rmcp as before, so every
//! answer is the one rmcp's path gives, only cheaper. A 2026-07-28 request's lifecycle in `_meta`
//! (protocol version, client capabilities and identity) is read apart: the stdio lane takes
//! such a request when the server supports its version (`stdio.rs`); the HTTP front, when its
//! standard headers agree with it too (`http/front.rs`, under the rules of `rules`). A call's
//! progress notifications are written as lines too, before its answer.
//!
//! Over streamable HTTP a plain request is known for what it is without building rmcp's
//! message a first time before rmcp builds it again; a stateless front answers it itself when
//! its headers are plain too (`http/front.rs`).
// Without the stdio transport, only the reading is used.
#![cfg_attr(not(feature = "stdio"), allow(dead_code))]

use std::borrow::Cow;

use rmcp::RoleServer;
use rmcp::model::{
    ErrorData, InputResponses, JsonRpcMessage, ProgressNotification, ProgressNotificationParam,
    ProgressToken, RequestId, ServerNotification, ServerResult,
};
use rmcp::service::TxJsonRpcMessage;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, de::value::MapAccessDeserializer};
use serde_json::{Map, Value};

use crate::envelope::Envelope;

use super::rules::Shape;

/// The lifecycle a 2026-07-28 request carries in its own `_meta`, when it does: its protocol
/// version, and whether its client capabilities are there and read as rmcp reads them.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) struct Inline<'a> {
    pub(crate) version: Cow<'a, str>,
    pub(crate) capabilities: Option<Box<rmcp::model::ClientCapabilities>>,
}

/// A request the transport answers itself.
pub(crate) enum PlainRequest<'a> {
    Call(RequestId, PlainCall<'a>),
    List(RequestId),
    Ping(RequestId),
}

/// A plain `tools/call`.
pub(crate) struct PlainCall<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) progress: Option<ProgressToken>,
    pub(crate) arguments: Option<Map<String, Value>>,
    pub(crate) traceparent: Option<Cow<'a, str>>,
    pub(crate) tracestate: Option<Cow<'a, str>>,
    /// A retried 2026-07-28 call's answers and state (boxed: most calls are not retried).
    pub(crate) retry: Option<Box<Retry<'a>>>,
}

/// What a retried 2026-07-28 call carries of its earlier round (SEP-2322): the answers to what
/// it asked, and the state it ended with.
pub(crate) struct Retry<'a> {
    pub(crate) answers: Option<InputResponses>,
    pub(crate) state: Option<Cow<'a, str>>,
}

impl PlainRequest<'_> {
    /// What the HTTP acceptance rules look at of it, with the lifecycle its `_meta` carries
    /// (its protocol version, and whether its client capabilities read as rmcp reads them).
    #[cfg(feature = "http")]
    pub(crate) fn asked_with<'b>(
        &'b self,
        lifecycle: Option<(&'b str, bool)>,
    ) -> super::rules::Asked<'b> {
        let (tool, progress) = match self {
            PlainRequest::Call(_, call) => (Some(&*call.name), call.progress.is_some()),
            _ => (None, false),
        };
        super::rules::Asked {
            method: self.method(),
            tool,
            progress,
            lifecycle,
        }
    }

    /// Its method.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn method(&self) -> &'static str {
        match self {
            PlainRequest::Call(..) => METHODS[0],
            PlainRequest::List(_) => METHODS[1],
            PlainRequest::Ping(_) => METHODS[2],
        }
    }

    /// Whether it is a retried 2026-07-28 call.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn retried(&self) -> bool {
        matches!(self, PlainRequest::Call(_, call) if call.retry.is_some())
    }

    /// Its id.
    pub(crate) fn id(&self) -> &RequestId {
        match self {
            PlainRequest::Call(id, _) | PlainRequest::List(id) | PlainRequest::Ping(id) => id,
        }
    }

    /// The same request, owning its strings (to be answered in a task of its own).
    pub(crate) fn into_owned(self) -> PlainRequest<'static> {
        let owned = |text: Cow<'_, str>| Cow::Owned(text.into_owned());
        match self {
            PlainRequest::Call(id, call) => PlainRequest::Call(
                id,
                PlainCall {
                    name: owned(call.name),
                    progress: call.progress,
                    arguments: call.arguments,
                    traceparent: call.traceparent.map(owned),
                    tracestate: call.tracestate.map(owned),
                    retry: call.retry.map(|retry| {
                        Box::new(Retry {
                            answers: retry.answers,
                            state: retry.state.map(owned),
                        })
                    }),
                },
            ),
            PlainRequest::List(id) => PlainRequest::List(id),
            PlainRequest::Ping(id) => PlainRequest::Ping(id),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "some_object")]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(rename = "_meta", default, borrow, deserialize_with = "some_object")]
    meta: Option<Meta<'a>>,
    /// A retried call's (2026-07-28), boxed: most calls are not.
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Box<InputResponses>>,
    #[serde(rename = "requestState", default, borrow)]
    request_state: Option<Cow<'a, str>>,
}

/// The `_meta` members read here; any other sends the request to rmcp. Those of the
/// 2026-07-28 lifecycle are read with rmcp's own types (a value rmcp would not read fails the
/// parse, and the request goes to rmcp), boxed: each level of the parse returns what it read
/// by value, a copy of its whole size, and unboxed the two would more than double every
/// request's (the message read ~600 bytes, not ~270).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta<'a> {
    #[serde(rename = "progressToken", default)]
    progress: Option<ProgressToken>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Option<Box<rmcp::model::ClientCapabilities>>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    client: Option<Box<rmcp::model::Implementation>>,
    #[serde(default, borrow)]
    traceparent: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tracestate: Option<Cow<'a, str>>,
}

/// A struct read from a JSON object only: serde's derive would also read it from an array,
/// position by position, which rmcp's types refuse.
fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<T, D::Error> {
    struct Object<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    deserializer.deserialize_map(Object(std::marker::PhantomData))
}

fn some_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    object(deserializer).map(Some)
}

/// The methods of plain requests: `tools/call`, `tools/list`, `ping`.
pub(crate) const METHODS: [&str; 3] = [
    <rmcp::model::CallToolRequestMethod as rmcp::model::ConstString>::VALUE,
    <rmcp::model::ListToolsRequestMethod as rmcp::model::ConstString>::VALUE,
    <rmcp::model::PingRequestMethod as rmcp::model::ConstString>::VALUE,
];

/// The method a body seems to name (the string after its first `"method":`, when it has no
/// escape): only a hint, to choose which reading to try first (a line or body
/// naming another method is not worth the lane's parse).
pub(crate) fn glance(body: &[u8]) -> Option<&[u8]> {
    let at = method_key(body)? + METHOD_KEY.len();
    let rest = body[at..].trim_ascii_start().strip_prefix(b":")?;
    let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest[end] == b'"').then(|| &rest[..end])
}

const METHOD_KEY: &[u8] = b"\"method\"";

/// Where the first `"method"` of `text` begins, if it has one.
fn method_key(text: &[u8]) -> Option<usize> {
    // Built once: building a searcher costs more than most searches.
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(METHOD_KEY));
    FINDER.find(text)
}

/// The request on `line`, when it is one the transport answers itself, with the lifecycle it
/// carries (2026-07-28: a stateless HTTP front answers those when its headers agree, the
/// stdio lane when the version is one the server supports).
pub(crate) fn parse_inline(line: &[u8]) -> Option<(PlainRequest<'_>, Option<Inline<'_>>)> {
    // A quick look first: most lines that are not requests are not worth a parse.
    method_key(line)?;
    let mut reader = serde_json::Deserializer::from_slice(line);
    let message: Message<'_> = object(&mut reader).ok()?;
    reader.end().ok()?;
    if message.jsonrpc != "2.0" {
        return None;
    }
    let mut params = message.params;
    let inline = match params.as_mut().and_then(|p| p.meta.as_mut()) {
        Some(meta)
            if meta.version.is_some() || meta.capabilities.is_some() || meta.client.is_some() =>
        {
            Some(Inline {
                capabilities: meta.capabilities.take(),
                // A lifecycle without a version is rmcp's to refuse.
                version: meta.version.take()?,
            })
        }
        _ => None,
    };
    let hot = match (message.method.as_ref(), params) {
        ("tools/call", Some(params)) => {
            let name = params.name?;
            let (progress, traceparent, tracestate) = params.meta.map_or((None, None, None), |m| {
                (m.progress, m.traceparent, m.tracestate)
            });
            let retried = params.input_responses.is_some() || params.request_state.is_some();
            // A retry is a 2026-07-28 call's, with its lifecycle: without, it is rmcp's.
            if retried && inline.is_none() {
                return None;
            }
            let retry = retried.then(|| {
                Box::new(Retry {
                    answers: params.input_responses.map(|answers| *answers),
                    state: params.request_state,
                })
            });
            PlainRequest::Call(
                message.id,
                PlainCall {
                    name,
                    progress,
                    arguments: params.arguments,
                    traceparent,
                    tracestate,
                    retry,
                },
            )
        }
        ("tools/list" | "ping", params) => {
            let plain = params.is_none_or(|p| {
                p.name.is_none()
                    && p.arguments.is_none()
                    && p.input_responses.is_none()
                    && p.request_state.is_none()
            });
            match (message.method.as_ref(), plain) {
                ("tools/list", true) => PlainRequest::List(message.id),
                ("ping", true) => PlainRequest::Ping(message.id),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some((hot, inline))
}

/// A `notifications/progress` line, as rmcp writes it.
pub(crate) fn progress_line(note: ProgressNotificationParam) -> Vec<u8> {
    let notification = ServerNotification::ProgressNotification(ProgressNotification::new(note));
    let message: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::notification(notification);
    let mut line = serde_json::to_vec(&message).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The JSON-RPC answer to request `id`, as rmcp writes it for a session of this shape.
pub(crate) fn answer(
    id: RequestId,
    mut outcome: Result<ServerResult, ErrorData>,
    shape: Shape,
) -> Vec<u8> {
    shape.apply(&mut outcome);
    let message: TxJsonRpcMessage<RoleServer> = match outcome {
        Ok(result) => JsonRpcMessage::response(result, id),
        Err(error) => JsonRpcMessage::error(error, Some(id)),
    };
    serde_json::to_vec(&message).unwrap_or_else(|e| {
        // Only a non-string map key could fail, and rmcp's types have none.
        tracing::error!("an answer could not be written as JSON: {e}");
        Vec::new()
    })
}

/// The JSON-RPC answer to request `id` carrying one envelope, written from its parts as rmcp
/// writes the `CallToolResult` it converts into (a test holds the two to the same bytes).
pub(crate) fn envelope_answer(id: &RequestId, envelope: &Envelope, shape: Shape) -> Vec<u8> {
    // What the envelope reserves for itself (`Envelope::write_json`), beyond the answer's head
    // (`{"jsonrpc":"2.0","id":…,"result":`, 32 bytes and the id): one allocation, no regrowth
    // but for an id of more than 32 bytes.
    let mut out = Vec::with_capacity(envelope.len() * 2 + 256 + 64);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    if let Err(e) = serde_json::to_writer(&mut out, id) {
        // An id is a number or a string: it cannot fail.
        tracing::error!("an answer could not be written as JSON: {e}");
        return Vec::new();
    }
    out.extend_from_slice(br#","result":"#);
    envelope.write_json(&mut out, shape == Shape::Current);
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request on `line` when it is a plain one carrying no lifecycle of its own.
    fn parse(line: &[u8]) -> Option<PlainRequest<'_>> {
        parse_inline(line).and_then(|(hot, inline)| inline.is_none().then_some(hot))
    }

    /// The glance finds the method a body names in its usual forms, and nothing else.
    #[test]
    fn a_glance_reads_the_first_method_named() {
        let at =
            |body: &str| glance(body.as_bytes()).map(|m| String::from_utf8_lossy(m).into_owned());
        assert_eq!(
            at(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#).as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            at(r#"{"method" :  "ping","id":1}"#).as_deref(),
            Some("ping")
        );
        assert_eq!(at(r#"{"method":"to\u006fls/call"}"#), None);
        assert_eq!(at(r#"{"method":5}"#), None);
        assert_eq!(at(r#"{"id":1}"#), None);
    }

    #[test]
    fn the_plain_forms_are_taken() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bench","arguments":{"action":"op07"},"_meta":{"traceparent":"00-x"}}}"#;
        let Some(PlainRequest::Call(id, call)) = parse(call) else {
            panic!("a call")
        };
        assert_eq!(id.to_string(), "7");
        assert_eq!(call.name, "bench");
        assert_eq!(call.arguments.unwrap()["action"], "op07");
        assert_eq!(call.traceparent.as_deref(), Some("00-x"));
        for (line, expected) in [
            (&br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#[..], "a"),
            (br#"{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{}}"#, "b"),
            (br#"{"method":"ping","id":3,"jsonrpc":"2.0","params":{"_meta":{}}}"#, "3"),
            (br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":null}}"#, "4"),
        ] {
            let id = parse(line).map(|hot| hot.id().to_string());
            assert_eq!(id.as_deref(), Some(expected));
        }
    }

    /// Everything else goes to rmcp, which answers it as it always has.
    #[test]
    fn anything_else_is_left_to_rmcp() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","id":2}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","name":"u"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":[]}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"traceparent":5}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":[]}}"#,
            br#"["2.0",1,"ping"]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} {}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"extra":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"n":1e400}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":"\ud800"}}}"#,
            b"not json",
            b"",
        ] {
            assert!(parse(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
    }

    /// A 2026-07-28 lifecycle in `_meta` is read with rmcp's types, for the HTTP front to check
    /// against the headers; a request carrying one is not a plain request.
    #[test]
    fn a_lifecycle_in_meta_is_read_apart() {
        let meta = |m: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{m}}}}}"#
            )
        };
        let full = meta(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}"#,
        );
        let Some((PlainRequest::Call(..), Some(inline))) = parse_inline(full.as_bytes()) else {
            panic!("a call with its lifecycle")
        };
        assert_eq!(
            (inline.version.as_ref(), inline.capabilities.is_some()),
            ("2026-07-28", true)
        );
        assert!(parse(full.as_bytes()).is_none());
        let bare = meta(r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#);
        let Some((_, Some(inline))) = parse_inline(bare.as_bytes()) else {
            panic!("a call with a version")
        };
        assert!(inline.capabilities.is_none());
        for refused in [
            // No version: rmcp's to refuse. Values rmcp's types do not read, or another key.
            r#"{"io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":5}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":5}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug"}"#,
        ] {
            assert!(
                parse_inline(meta(refused).as_bytes()).is_none(),
                "{refused}"
            );
        }
    }

    #[test]
    fn answers_are_rmcps() {
        let pong = answer(
            RequestId::Number(1),
            Ok(ServerResult::EmptyResult(rmcp::model::EmptyObject {})),
            Shape::Legacy,
        );
        assert_eq!(pong, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        let error = answer(
            RequestId::String("x".into()),
            Err(ErrorData::invalid_params("unknown tool: t", None)),
            Shape::Current,
        );
        assert_eq!(
            String::from_utf8(error).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"unknown tool: t"}}"#
        );
    }
}
