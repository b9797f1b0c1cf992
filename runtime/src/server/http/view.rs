//! A lean look at a body rmcp will parse anyway: for a `subscriptions/listen`, the body layer
//! needs only the request's id and the certainty that rmcp reads the message, not rmcp's whole
//! `ClientJsonRpcMessage` (which buffers the message several times over as it tries each kind
//! of message and each request), nor a failed attempt at the plain form first.
//!
//! The look is taken in one pass over the text, so serde_json's limits (depth, numbers,
//! strings) fall where they fall in rmcp's own parse, and it is stricter than rmcp: a member
//! it does not know, at the top or in `params`, one given twice, or anything else it does not
//! read as rmcp would, and the body goes the whole way as before (`incoming::read`), so every
//! answer the layer gives is the one it gave. It accepts exactly what rmcp reads as a
//! `SubscriptionsListenRequest`: `"jsonrpc": "2.0"`, an id rmcp reads, the method, and params
//! of a `_meta` object (checked as serde_json's `Value` reads it, without building it) and a
//! `notifications` filter (rmcp's own type).

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use rmcp::model::{JsonRpcVersion2_0, RequestId, SubscriptionFilter};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

const LISTEN: &str = "subscriptions/listen";

/// The id of a `subscriptions/listen` request rmcp reads, when `body` is one in the form read
/// here; `None` for anything else (then the body takes the whole way).
pub(super) fn listen(body: &[u8]) -> Option<RequestId> {
    // A quick look first: most bodies are not a listen (the searcher is built once).
    static FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(LISTEN));
    FINDER.find(body)?;
    let message: Message<'_> = serde_json::from_slice(body).ok()?;
    let params = message.params?;
    (message.method == LISTEN && params.notifications.is_some()).then_some(message.id)
}

/// A request's members (rmcp's `JsonRpcRequest` with `Request`'s `method` and `params`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: Option<ListenParams>,
}

/// A listen's params: rmcp's `WithMeta` (`_meta` an object or null) over
/// `SubscriptionsListenRequestParams` (`notifications`, required).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListenParams {
    #[serde(rename = "_meta")]
    _meta: Option<Object>,
    notifications: Option<SubscriptionFilter>,
}

/// A JSON object, read as serde_json reads a `Map<String, Value>`, kept as nothing.
struct Object;

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Check).map(|()| Object)
    }
}

/// Any JSON value, read as serde_json reads a `Value`, kept as nothing.
struct Any;

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Check).map(|()| Any)
    }
}

/// Accepts what `Value`'s visitor accepts, building nothing.
struct Check;

impl<'de> Visitor<'de> for Check {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        Any::deserialize(deserializer).map(drop)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Any>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Keys read as strings (UTF-8 and escapes checked), borrowed when they can be.
        while map.next_key::<Cow<'de, str>>()?.is_some() {
            map.next_value::<Any>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::incoming::{Read, read};
    use rmcp::model::{ClientRequest, JsonRpcMessage};

    /// What the whole way reads `body` as: the id of a listen, or nothing.
    fn whole(body: &str) -> Option<RequestId> {
        match read(body.as_bytes()) {
            Read::Message(JsonRpcMessage::Request(request)) => match request.request {
                ClientRequest::SubscriptionsListenRequest(_) => Some(request.id),
                _ => None,
            },
            _ => None,
        }
    }

    /// The lean look takes a listen only when rmcp reads it as one, with the same id; what it
    /// leaves goes the whole way.
    #[test]
    fn a_listen_is_taken_only_as_rmcp_reads_it() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"x":[1,2.5,-3,null,true,{"k":"\u00e9"}]}"#;
        let taken = [
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":"s","method":"subscriptions/listen","params":{{{meta},"notifications":{{}}}}}}"#),
            r#"{"params":{"_meta":null,"notifications":{"resourceSubscriptions":["a"],"other":1}},"method":"subscriptions/listen","id":2.0,"jsonrpc":"2.0"}"#.to_owned(),
        ];
        for body in &taken {
            let lean = listen(body.as_bytes());
            assert!(lean.is_some(), "{body}");
            assert_eq!(lean, whole(body), "{body}");
        }
        let deep = format!("{}{}", "[".repeat(126), "]".repeat(126));
        let left = [
            // Not read by rmcp: no params, no filter, a filter or a _meta of the wrong type,
            // an id it refuses, another version, a number beyond f64, too deep.
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":null}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":1}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":[],"notifications":{}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1.5,"method":"subscriptions/listen","params":{"notifications":{}}}"#.to_owned(),
            r#"{"jsonrpc":"1.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"n":1e400},"notifications":{}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"_meta":{{"d":{deep}}},"notifications":{{}}}}}}"#),
            // Read by rmcp, but not in the form read here: the whole way answers them.
            r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}},"extra":1}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"subscriptions/listen","params":{"notifications":{}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"subscriptions/listen"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"subscriptions/listen","params":{"notifications":{}}}"#.to_owned(),
        ];
        for body in &left[..9] {
            assert_eq!(
                (listen(body.as_bytes()), whole(body)),
                (None, None),
                "{body}"
            );
        }
        for body in &left[9..] {
            assert_eq!(listen(body.as_bytes()), None, "{body}");
        }
    }
}
