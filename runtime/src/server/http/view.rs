//! A lean look at a body rmcp will parse anyway: for most requests the body layer needs only
//! the request's id and the certainty that rmcp reads the message, not rmcp's whole
//! `ClientJsonRpcMessage` (which buffers the message several times over as it tries each kind
//! of message and each request) built once here and again by rmcp.
//!
//! The look is taken in one pass over the text, so serde_json's limits (depth, numbers,
//! strings) fall where they fall in rmcp's own parse, and it is stricter than rmcp: a member
//! it does not know, one given twice, params that are not an object, a method outside the
//! table of requests (`server::methods`), and the body goes the whole way as before
//! (`incoming::read`), so every answer the layer gives is the one it gave. What it takes rmcp
//! reads as a request with the same id: the request the method names, or, when the params do
//! not decode as that request's, a custom request of that method (which the server answers
//! Invalid params); held by `a_look_takes_only_requests_rmcp_reads`.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use rmcp::model::{JsonRpcMessage, JsonRpcVersion2_0, RequestId};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

use crate::server::incoming::{Read, read};
use crate::server::methods::MCP_REQUESTS;

/// A request rmcp reads, as the look saw it.
pub(super) struct Look {
    pub(super) id: RequestId,
    /// The method, one of the table's.
    pub(super) method: &'static str,
}

/// What `body` is, when it is a request of the table in the form read here; `None` for
/// anything else (then the body takes the whole way).
pub(super) fn look(body: &[u8]) -> Option<Look> {
    let message: Message<'_> = serde_json::from_slice(body).ok()?;
    let method = MCP_REQUESTS.iter().find(|m| **m == message.method)?;
    match message._params {
        Some(Some(Params)) => {}
        None if BARE.contains(method) => {}
        _ => return None,
    }
    Some(Look {
        id: message.id,
        method,
    })
}

/// The methods of the table rmcp reads without params, found by asking rmcp's own parse
/// (`incoming::read`) once: a request of another method without params is not read by rmcp,
/// and goes the whole way to be answered.
static BARE: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let bare = |method: &str| {
        let body = format!(r#"{{"jsonrpc":"2.0","id":0,"method":"{method}"}}"#);
        matches!(
            read(body.as_bytes()),
            Read::Message(JsonRpcMessage::Request(_))
        )
    };
    MCP_REQUESTS.iter().copied().filter(|m| bare(m)).collect()
});

/// A request's members (rmcp's `JsonRpcRequest` with `Request`'s `method` and `params`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    /// Absent (`None`), null (`Some(None)`) or given.
    #[serde(rename = "params", default, deserialize_with = "given")]
    _params: Option<Option<Params>>,
}

/// A member that is there, null or not.
fn given<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<Params>>, D::Error> {
    Option::<Params>::deserialize(deserializer).map(Some)
}

/// A request's params: an object whose `_meta`, when given, is an object or null (as rmcp's
/// `Meta` reads it); its other members any JSON.
struct Params;

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ParamsCheck).map(|()| Params)
    }
}

/// Accepts what [`Params`] is, building nothing.
struct ParamsCheck;

impl<'de> Visitor<'de> for ParamsCheck {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the params of a request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "_meta" => map.next_value::<Option<Object>>().map(drop)?,
                _ => map.next_value::<Any>().map(drop)?,
            }
        }
        Ok(())
    }
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

    /// What the whole way reads `body` as: the id and method of a request, or nothing.
    fn whole(body: &str) -> Option<(RequestId, String)> {
        match read(body.as_bytes()) {
            Read::Message(JsonRpcMessage::Request(request)) => {
                Some((request.id, request.request.method().to_owned()))
            }
            _ => None,
        }
    }

    /// The look takes a request only when rmcp reads it as one, with the same id and method,
    /// whatever its params (each method of the table, with params of its own form, of no
    /// form, of the wrong types); what it leaves goes the whole way.
    #[test]
    fn a_look_takes_only_requests_rmcp_reads() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"x":[1,2.5,-3,null,true,{"k":"\u00e9"}]}"#;
        let params = [
            "{}".to_owned(),
            format!("{{{meta}}}"),
            r#"{"_meta":null}"#.to_owned(),
            r#"{"_meta":5}"#.to_owned(),
            r#"{"name":"n","arguments":{"a":"b"}}"#.to_owned(),
            r#"{"name":7,"arguments":[1]}"#.to_owned(),
            r#"{"uri":"file:///a","cursor":"c","level":"info","taskId":"t"}"#.to_owned(),
            r#"{"uri":null,"cursor":{},"level":"loud","taskId":1,"status":"working"}"#.to_owned(),
            r#"{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}"#.to_owned(),
            r#"{"notifications":{"toolsListChanged":true},"resourceSubscriptions":["a"]}"#.to_owned(),
            r#"{"notifications":null,"x":{"y":[{"z":1e300}]}}"#.to_owned(),
            r#"{"name":"n","name":"m"}"#.to_owned(),
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#.to_owned(),
        ];
        let mut taken = 0;
        for method in MCP_REQUESTS {
            for params in &params {
                for id in ["1", "\"s\"", "-3", "2.0"] {
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
                    );
                    if let Some(look) = look(body.as_bytes()) {
                        assert_eq!(
                            Some((look.id, look.method.to_owned())),
                            whole(&body),
                            "{body}"
                        );
                        taken += 1;
                    }
                }
            }
        }
        assert!(taken > MCP_REQUESTS.len() * params.len() * 3, "{taken}");
        // Without params: taken where rmcp reads it (ping, the listings), else left.
        for method in MCP_REQUESTS {
            let body = format!(r#"{{"id":"b","method":"{method}","jsonrpc":"2.0"}}"#);
            let whole = whole(&body);
            let look = look(body.as_bytes()).map(|l| (l.id, l.method.to_owned()));
            assert!(look.is_none() || look == whole, "{body}");
            assert_eq!(look.is_some(), whole.is_some(), "{body}");
        }
        assert!(
            BARE.contains(&"ping") && BARE.contains(&"tools/list"),
            "{:?}",
            *BARE
        );
        let deep = format!("{}{}", "[".repeat(126), "]".repeat(126));
        let left = [
            // Not read by rmcp: an id it refuses, another version, a number beyond f64, too
            // deep, no method.
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":null,"method":"ping","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"1.0","id":1,"method":"ping","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"n":1e400}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"d":{deep}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"params":{}}"#.to_owned(),
            // Read by rmcp or answered on the whole way, but not in the form read here: null
            // or array params, a member unknown or given twice, a method of no
            // table, a notification.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"extra":1}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x/custom","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#.to_owned(),
        ];
        for body in &left {
            assert!(look(body.as_bytes()).is_none(), "{body}");
        }
    }
}
