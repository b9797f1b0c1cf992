//! Plain requests answered by the front itself on a stateless server (`server::fast`): a
//! `tools/call` without a progress token, `tools/list` or `ping`, whose headers are the plain
//! ones rmcp's stateless service would accept as they are, get the answer rmcp would give
//! (`200`, `application/json`, the same bytes), without rmcp building its message, a one-shot
//! service and its task for the request.
//!
//! Only requests whose acceptance is certain are taken; anything rmcp might treat otherwise
//! goes to it: an `Origin` header (checked by rmcp against the allowed origins), any `Mcp-*`
//! header but the protocol version (session ids, the standard headers of SEP-2243), media
//! types with parameters, a protocol version of 2026-07-28 or later (which requires the
//! standard headers and per-request metadata) or none (rmcp assumes 2025-03-26).

use http::{HeaderMap, header};
use rmcp::model::ProtocolVersion;

use crate::server::fast::{Hot, Shape};

/// What a request must show to be answered by the front.
pub(super) struct Plain {
    /// `HttpOptions::allowed_hosts`, parsed as rmcp parses them.
    allowed_hosts: Vec<(String, Option<u16>)>,
    /// Whether any host passes (no list).
    any_host: bool,
}

impl Plain {
    pub(super) fn new(allowed_hosts: &[String]) -> Self {
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
        }
    }

    /// The shape of the answer when the front may answer `hot` itself, sent with `headers`.
    pub(super) fn shape(&self, hot: &Hot<'_>, headers: &HeaderMap) -> Option<Shape> {
        if let Hot::Call(_, call) = hot
            && call.progress.is_some()
        {
            // Its notifications would make the answer a stream of events.
            return None;
        }
        let mut version = None;
        for name in headers.keys() {
            let name = name.as_str();
            if name == "origin" {
                return None;
            }
            if name.starts_with("mcp-") {
                if name != "mcp-protocol-version" {
                    return None;
                }
                version = Some(single(headers, name)?);
            }
        }
        let version = version?;
        let known = ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .find(|known| known.as_str() == version)?;
        if known.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str() {
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
        let plain = Plain::new(&["localhost".into(), "127.0.0.1".into(), "::1".into()]);
        assert_eq!(plain.shape(&ping(), &headers(PLAIN)), Some(Shape::Legacy));
        let mut ipv6 = headers(PLAIN);
        ipv6.insert("host", HeaderValue::from_static("[::1]:9"));
        assert!(plain.shape(&ping(), &ipv6).is_some());
        let ported = Plain::new(&["example.com:8080".into()]);
        let mut host = headers(PLAIN);
        host.insert("host", HeaderValue::from_static("Example.COM:8080"));
        assert!(ported.shape(&ping(), &host).is_some());
    }

    /// Anything rmcp might answer otherwise is left to it.
    #[test]
    fn anything_else_is_left_to_rmcp() {
        let plain = Plain::new(&["localhost".into(), "127.0.0.1".into()]);
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
            assert_eq!(plain.shape(&ping(), &map), None, "{map:?}");
        }
        let ported = Plain::new(&["localhost:9000".into()]);
        let mut host = headers(PLAIN);
        host.insert("host", HeaderValue::from_static("localhost:9001"));
        assert_eq!(ported.shape(&ping(), &host), None);
    }
}
