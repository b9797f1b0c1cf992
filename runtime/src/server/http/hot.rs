//! Plain requests answered by the front itself on a stateless server (`server::fast`): a
//! `tools/call` without a progress token, `tools/list` or `ping`, whose headers are the plain
//! ones rmcp's stateless service would accept as they are, get the answer rmcp would give
//! (`200`, `application/json`, the same bytes), without rmcp building its message, a one-shot
//! service and its task for the request.
//!
//! Only requests whose acceptance is certain are taken; anything rmcp might treat otherwise
//! goes to it: an `Origin` header (checked by rmcp against the allowed origins), any other
//! `Mcp-*` header (session ids, `Mcp-Param-*`), media types with parameters, no protocol
//! version (rmcp assumes 2025-03-26).
//!
//! A request of 2026-07-28 carries its lifecycle in its own `_meta` and names itself in the
//! standard headers of SEP-2243; rmcp refuses it (HTTP 400) when they disagree with the body
//! (`transport/common/mcp_headers.rs`, `validate_request_headers`), when `_meta`'s protocol
//! version is not the header's (`streamable_http_server/tower.rs`), or when its required
//! `_meta` keys are missing or malformed (`handler/server.rs`). So one is taken only when it
//! shows all of it, as rmcp reads it: `Mcp-Protocol-Version` and `_meta`'s version the same
//! known version, client capabilities that rmcp's type reads, `Mcp-Method` the body's method,
//! for a call `Mcp-Name` its tool's name as it is (not Base64-wrapped), each header once; and
//! for a call, no tool of the server asks for an `Mcp-Param-*` header. `ping`, gone from
//! 2026-07-28, and anything else are rmcp's, to answer or refuse as it does.

use http::{HeaderMap, header};
use rmcp::model::ProtocolVersion;

use crate::server::fast::{Hot, Inline, Shape};

/// What a request must show to be answered by the front.
pub(super) struct Plain {
    /// `HttpOptions::allowed_hosts`, parsed as rmcp parses them.
    allowed_hosts: Vec<(String, Option<u16>)>,
    /// Whether any host passes (no list).
    any_host: bool,
    /// Whether a 2026-07-28 call may be taken: no tool asks for `Mcp-Param-*` headers.
    without_param_headers: bool,
}

impl Plain {
    pub(super) fn new(allowed_hosts: &[String], without_param_headers: bool) -> Self {
        Plain {
            allowed_hosts: allowed_hosts
                .iter()
                .filter_map(|allowed| {
                    let allowed = allowed.trim();
                    if allowed.is_empty() {
                        return None;
                    }
                    Some(match http::uri::Authority::try_from(allowed) {
                        Ok(authority) => (normalize(authority.host()), authority.port_u16()),
                        Err(_) => (normalize(allowed), None),
                    })
                })
                .collect(),
            any_host: allowed_hosts.is_empty(),
            without_param_headers,
        }
    }

    /// The shape of the answer when the front may answer `hot` itself, sent with `headers` and
    /// the lifecycle of its `_meta`, if any.
    pub(super) fn shape(
        &self,
        hot: &Hot<'_>,
        inline: Option<&Inline<'_>>,
        headers: &HeaderMap,
    ) -> Option<Shape> {
        if let Hot::Call(_, call) = hot
            && call.progress.is_some()
        {
            // Its notifications would make the answer a stream of events.
            return None;
        }
        let (mut version, mut method, mut named) = (None, None, None);
        for name in headers.keys() {
            let name = name.as_str();
            let slot = match name {
                "origin" => return None,
                "mcp-protocol-version" => &mut version,
                "mcp-method" => &mut method,
                "mcp-name" => &mut named,
                _ if name.starts_with("mcp-") => return None,
                _ => continue,
            };
            *slot = Some(single(headers, name)?);
        }
        let version = version?;
        let known = ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .find(|known| known.as_str() == version)?;
        if known.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str() {
            let inline = inline?;
            let name_matches = match hot {
                Hot::Call(_, call) => {
                    self.without_param_headers
                        && named.is_some_and(|n| !n.starts_with("=?base64?") && n == call.name)
                }
                Hot::List(_) => named.is_none(),
                // Gone from 2026-07-28: rmcp answers it "method not found".
                Hot::Ping(_) => false,
            };
            let agrees = inline.version == version
                && inline.capabilities
                && method == Some(hot.method())
                && name_matches;
            if !agrees {
                return None;
            }
        } else if inline.is_some() || method.is_some() || named.is_some() {
            return None;
        }
        (self.host_allowed(headers)?
            && accepts_json_and_events(headers)?
            && single(headers, header::CONTENT_TYPE.as_str())?
                .trim()
                .eq_ignore_ascii_case("application/json"))
        .then(|| Shape::of(known))
    }

    /// Whether `Host` names an allowed host, as rmcp decides it; `None` when rmcp would
    /// refuse the header itself.
    fn host_allowed(&self, headers: &HeaderMap) -> Option<bool> {
        let host = single(headers, header::HOST.as_str())?;
        let authority = http::uri::Authority::try_from(host).ok()?;
        let (host, port) = (normalize(authority.host()), authority.port_u16());
        let allowed = self.any_host
            || self.allowed_hosts.iter().any(|(allowed, allowed_port)| {
                *allowed == host && allowed_port.is_none_or(|p| Some(p) == port)
            });
        allowed.then_some(true)
    }
}

/// A header sent once, as text.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?.to_str().ok()?;
    values.next().is_none().then_some(value)
}

/// As rmcp normalizes a host: brackets trimmed, lowercase.
fn normalize(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// Whether `Accept` lists both `application/json` and `text/event-stream`, without
/// parameters (a quality weight, say, is for rmcp to weigh).
fn accepts_json_and_events(headers: &HeaderMap) -> Option<bool> {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let value = value.to_str().ok()?;
        if value.contains([';', '"']) {
            return None;
        }
        for essence in value.split(',').map(str::trim) {
            json |= essence.eq_ignore_ascii_case("application/json");
            events |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    (json && events).then_some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    const PLAIN: &[(&str, &str)] = &[
        ("host", "127.0.0.1:8080"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2025-06-18"),
    ];

    fn ping() -> Hot<'static> {
        Hot::Ping(rmcp::model::RequestId::Number(1))
    }

    #[test]
    fn plain_requests_are_taken() {
        let plain = Plain::new(
            &["localhost".into(), "127.0.0.1".into(), "::1".into()],
            true,
        );
        assert_eq!(
            plain.shape(&ping(), None, &headers(PLAIN)),
            Some(Shape::Legacy)
        );
        let mut ipv6 = headers(PLAIN);
        ipv6.insert("host", HeaderValue::from_static("[::1]:9"));
        assert!(plain.shape(&ping(), None, &ipv6).is_some());
        let ported = Plain::new(&["example.com:8080".into()], true);
        let mut host = headers(PLAIN);
        host.insert("host", HeaderValue::from_static("Example.COM:8080"));
        assert!(ported.shape(&ping(), None, &host).is_some());
    }

    /// Anything rmcp might answer otherwise is left to it.
    #[test]
    fn anything_else_is_left_to_rmcp() {
        let plain = Plain::new(&["localhost".into(), "127.0.0.1".into()], true);
        let changed = |name: &'static str, value: Option<&'static str>| {
            let mut map = headers(PLAIN);
            match value {
                Some(value) => {
                    map.insert(name, HeaderValue::from_static(value));
                }
                None => {
                    map.remove(name);
                }
            }
            map
        };
        let appended = |name: &'static str, value: &'static str| {
            let mut map = headers(PLAIN);
            map.append(name, HeaderValue::from_static(value));
            map
        };
        for map in [
            changed("host", Some("evil.example")),
            changed("host", Some("127.0.0.1.evil.example")),
            changed("host", None),
            changed("origin", Some("http://localhost:3000")),
            changed("accept", Some("application/json")),
            changed("accept", Some("application/json;q=0, text/event-stream")),
            changed("content-type", Some("text/plain")),
            changed("content-type", Some("application/json; charset=utf-8")),
            changed("mcp-protocol-version", None),
            changed("mcp-protocol-version", Some("2026-07-28")),
            changed("mcp-protocol-version", Some("1999-01-01")),
            changed("mcp-session-id", Some("abc")),
            changed("mcp-method", Some("ping")),
            appended("mcp-protocol-version", "2025-06-18"),
            appended("host", "localhost"),
        ] {
            assert_eq!(plain.shape(&ping(), None, &map), None, "{map:?}");
        }
        let ported = Plain::new(&["localhost:9000".into()], true);
        let mut host = headers(PLAIN);
        host.insert("host", HeaderValue::from_static("localhost:9001"));
        assert_eq!(ported.shape(&ping(), None, &host), None);
    }

    /// A 2026-07-28 request is taken only when its headers and its `_meta` agree as rmcp checks
    /// them; each way one of them can fail rmcp's checks leaves it to rmcp.
    #[test]
    fn a_2026_request_is_taken_only_when_everything_agrees() {
        use std::borrow::Cow;

        use crate::server::fast::HotCall;

        const V2026: &[(&str, &str)] = &[
            ("host", "127.0.0.1:8080"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("mcp-protocol-version", "2026-07-28"),
        ];
        let call = || {
            Hot::Call(
                rmcp::model::RequestId::Number(1),
                HotCall {
                    name: Cow::Borrowed("billing"),
                    progress: None,
                    arguments: None,
                    traceparent: None,
                    tracestate: None,
                },
            )
        };
        let inline = |version: &'static str, capabilities: bool| Inline {
            version: Cow::Borrowed(version),
            capabilities,
        };
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut map = headers(V2026);
            for (name, value) in extra {
                map.append(*name, HeaderValue::from_static(value));
            }
            map
        };
        let plain = Plain::new(&["127.0.0.1".into()], true);
        let good = inline("2026-07-28", true);
        let named = [("mcp-method", "tools/call"), ("mcp-name", "billing")];
        assert_eq!(
            plain.shape(&call(), Some(&good), &with(&named)),
            Some(Shape::Current)
        );
        // `ping` is gone from 2026-07-28: rmcp's answer, method not found, is left to it.
        assert_eq!(
            plain.shape(&ping(), Some(&good), &with(&[("mcp-method", "ping")])),
            None
        );

        // No lifecycle in `_meta`, or one rmcp would not read, under the right headers.
        for meta in [
            None,
            Some(("2026-07-28", false)),
            Some(("2025-11-25", true)),
        ] {
            let inline = meta.map(|(version, capabilities)| inline(version, capabilities));
            assert_eq!(
                plain.shape(&call(), inline.as_ref(), &with(&named)),
                None,
                "{meta:?}"
            );
        }
        // Under the right lifecycle: standard headers missing, repeated or not the body's, and
        // headers rmcp checks against the tool's schema, or a session's.
        let refused = [
            "mcp-name=billing",
            "mcp-method=tools/call",
            "mcp-method=tools/list; mcp-name=billing",
            "mcp-method=tools/call; mcp-name=Billing",
            "mcp-method=tools/call; mcp-name==?base64?YmlsbGluZw==?=",
            "mcp-method=tools/call; mcp-method=tools/call; mcp-name=billing",
            "mcp-method=tools/call; mcp-name=billing; mcp-name=billing",
            "mcp-method=tools/call; mcp-name=billing; mcp-param-region=eu",
            "mcp-method=tools/call; mcp-name=billing; mcp-session-id=s",
        ];
        for extra in refused {
            let pairs: Vec<(&'static str, &'static str)> = extra
                .split("; ")
                .filter_map(|pair| pair.split_once('='))
                .collect();
            let map = with(&pairs);
            assert_eq!(plain.shape(&call(), Some(&good), &map), None, "{extra}");
        }
        // A server one of whose tools asks for an `Mcp-Param-*` header takes no 2026 call.
        let annotated = Plain::new(&["127.0.0.1".into()], false);
        assert_eq!(annotated.shape(&call(), Some(&good), &with(&named)), None);
        // Older versions with a lifecycle in `_meta`, or standard headers, stay rmcp's.
        let mut older = with(&named);
        older.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2025-11-25"),
        );
        assert_eq!(plain.shape(&call(), None, &older), None);
        let mut older = headers(V2026);
        older.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2025-11-25"),
        );
        assert_eq!(
            plain.shape(&call(), Some(&inline("2025-11-25", true)), &older),
            None
        );
    }
}
