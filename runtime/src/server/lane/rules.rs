//! What this crate mirrors of rmcp 3.11's own behaviour, in one place: where a transport
//! answers a request itself (the plain requests of the fast lane, `read`, on stdio, on
//! stateless streamable HTTP and in a session of streamable HTTP), its answer must be the one
//! rmcp's path would give, byte for byte and status for status, and it may take only requests rmcp would accept as they are. Each rule
//! names where rmcp keeps it (in its repository, modelcontextprotocol/rust-sdk, under
//! `crates/rmcp/src/`); the differential tests (`tests/it/fast_path.rs`: the same requests
//! through both paths, one variant per refusal) are the contract that holds them when rmcp
//! moves.
//!
//! - **Result shaping** ([`Shape`]): rmcp's `ServerHandler`
//!   (modelcontextprotocol/rust-sdk `crates/rmcp/src/handler/server.rs`) shapes a result for
//!   the negotiated version.
//! - **HTTP acceptance** ([`PlainHeaders`], feature `http`): rmcp's streamable HTTP service
//!   (modelcontextprotocol/rust-sdk `crates/rmcp/src/transport/streamable_http_server/tower.rs`
//!   and modelcontextprotocol/rust-sdk `crates/rmcp/src/transport/common/mcp_headers.rs`)
//!   checks `Host`, `Origin`, `Accept`, `Content-Type`, the protocol version header and, from
//!   2026-07-28, the SEP-2243 headers against the body.
//! - **Parsing**: rmcp's service reads a POST body whole, parses it, and drops the body before
//!   it awaits anything else (`expect_json` in
//!   modelcontextprotocol/rust-sdk `crates/rmcp/src/transport/common/server_side_http.rs`); the
//!   HTTP body step lends each body its parse permit until it is dropped, so the permit covers
//!   rmcp's parse and nothing after it.

// Without a transport, nothing answers a request itself.
#![cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]

use rmcp::model::{ErrorCode, ErrorData, ProtocolVersion, ServerResult};

/// The rmcp release these rules were read from (`Cargo.toml` pins its minor version).
#[allow(dead_code)]
pub(crate) const RMCP: &str = "3.11";

/// How results are shaped for the protocol version the session negotiated, as rmcp's
/// `ServerHandler` shapes them: 2026-07-28 and later get the caching hints of list results,
/// earlier versions lose `resultType: "complete"` and non-object structured output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Legacy,
    Current,
}

impl Shape {
    /// The shape of a session that negotiated `version` in `initialize`.
    pub(crate) fn of(version: &ProtocolVersion) -> Shape {
        if version.as_str() >= ProtocolVersion::V_2026_07_28.as_str() {
            Shape::Current
        } else {
            Shape::Legacy
        }
    }

    pub(crate) fn apply(self, outcome: &mut Result<ServerResult, ErrorData>) {
        match (self, outcome) {
            (Shape::Current, Ok(result)) => result.fill_missing_cache_hints(),
            (Shape::Legacy, Ok(result)) => {
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
            }
            (Shape::Current, Err(error)) if error.code == ErrorCode::RESOURCE_NOT_FOUND => {
                error.code = ErrorCode::INVALID_PARAMS;
            }
            (_, Err(_)) => {}
        }
    }
}

/// The versions from 2026-07-28 on that the server's handler supports: a request whose own
/// lifecycle names another is refused by rmcp's handler (its `Service` for a `ServerHandler`
/// checks the version a request carries against `supported_protocol_versions`), whatever the
/// transport.
pub(crate) struct Lifecycles(Box<[ProtocolVersion]>);

impl Lifecycles {
    /// Of a handler supporting `versions`.
    pub(crate) fn of(versions: &[ProtocolVersion]) -> Self {
        let current = |v: &&ProtocolVersion| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str();
        Lifecycles(versions.iter().filter(current).cloned().collect())
    }

    /// Whether rmcp's handler takes a request whose lifecycle names `version`.
    pub(crate) fn supports(&self, version: &str) -> bool {
        self.0.iter().any(|v| v.as_str() == version)
    }
}

#[cfg(feature = "http")]
pub(crate) use http_rules::{Asked, PlainHeaders};

/// The HTTP acceptance rules.
#[cfg(feature = "http")]
mod http_rules {
    use http::{HeaderMap, header};
    use rmcp::model::ProtocolVersion;

    use super::Shape;

    /// What the rules look at of a plain request.
    pub(crate) struct Asked<'a> {
        /// `tools/call`, `tools/list` or `ping`.
        pub(crate) method: &'static str,
        /// A call's tool name.
        pub(crate) tool: Option<&'a str>,
        /// Whether the request asks for progress.
        pub(crate) progress: bool,
        /// The lifecycle its `_meta` carries (2026-07-28): its protocol version, and whether its
        /// client capabilities are there and read as rmcp reads them.
        pub(crate) lifecycle: Option<(&'a str, bool)>,
    }

    /// What a request must show to be answered by a transport itself.
    pub(crate) struct PlainHeaders {
        /// `HttpOptions::allowed_hosts`, parsed as rmcp parses them.
        allowed_hosts: Vec<(String, Option<u16>)>,
        /// Whether any host passes (no list).
        any_host: bool,
        /// Whether a 2026-07-28 call may be taken: no tool asks for `Mcp-Param-*` headers.
        without_param_headers: bool,
    }

    impl PlainHeaders {
        pub(crate) fn new(allowed_hosts: &[String], without_param_headers: bool) -> Self {
            PlainHeaders {
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

        /// The shape of the answer when a front may answer `asked` itself without a session (a
        /// stateless server's requests, and those carrying their 2026-07-28 lifecycle on a
        /// server with sessions), sent with `headers` and the lifecycle of its `_meta`, if any.
        pub(crate) fn shape(&self, asked: &Asked<'_>, headers: &HeaderMap) -> Option<Shape> {
            let read = Read::of(asked, headers)?;
            if read.session.is_some() {
                return None;
            }
            let (version, method, named) = (read.version, read.method, read.named);
            let version = version?;
            let known = ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .find(|known| known.as_str() == version)?;
            if known.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str() {
                let (inline_version, capabilities) = asked.lifecycle?;
                let name_matches = match (asked.method, asked.tool) {
                    ("tools/call", Some(tool)) => {
                        self.without_param_headers
                            && named.is_some_and(|n| !n.starts_with("=?base64?") && n == tool)
                    }
                    ("tools/list", _) => named.is_none(),
                    // `ping` is gone from 2026-07-28: rmcp answers it "method not found".
                    _ => false,
                };
                let agrees = inline_version == version
                    && capabilities
                    && method == Some(asked.method)
                    && name_matches;
                if !agrees {
                    return None;
                }
            } else if asked.lifecycle.is_some() || method.is_some() || named.is_some() {
                return None;
            }
            (self.host_allowed(headers)?
                && accepts_json_and_events(headers)?
                && single(headers, header::CONTENT_TYPE.as_str())?
                    .trim()
                    .eq_ignore_ascii_case("application/json"))
            .then(|| Shape::of(known))
        }

        /// The session of a request a front with sessions may answer itself: one rmcp's service
        /// with sessions would take as it is (its `Host`, `Accept` and `Content-Type`, a protocol
        /// version header it knows from before 2026-07-28 or none, no lifecycle of its own), and
        /// whose answer is one event (no progress).
        pub(crate) fn session<'h>(
            &self,
            asked: &Asked<'_>,
            headers: &'h HeaderMap,
        ) -> Option<&'h str> {
            let read = Read::of(asked, headers)?;
            if asked.lifecycle.is_some() || read.method.is_some() || read.named.is_some() {
                return None;
            }
            if let Some(version) = read.version {
                let known = ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .find(|known| known.as_str() == version)?;
                if known.as_str() >= ProtocolVersion::STANDARD_HEADERS.as_str() {
                    return None;
                }
            }
            let session = read.session?;
            (self.host_allowed(headers)?
                && accepts_json_and_events(headers)?
                && single(headers, header::CONTENT_TYPE.as_str())?
                    .trim()
                    .eq_ignore_ascii_case("application/json"))
            .then_some(session)
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

    /// The MCP headers of a request the front may take (each sent once, as text), read once.
    struct Read<'h> {
        version: Option<&'h str>,
        method: Option<&'h str>,
        named: Option<&'h str>,
        session: Option<&'h str>,
    }

    impl<'h> Read<'h> {
        /// `None` when the request is rmcp's whatever its MCP headers say: it asks for progress
        /// (its notifications would make the answer a stream of events), it has an `Origin`, an
        /// MCP header is sent twice or is not text, or another `Mcp-*` header is there.
        fn of(asked: &Asked<'_>, headers: &'h HeaderMap) -> Option<Read<'h>> {
            if asked.progress {
                return None;
            }
            let mut read = Read {
                version: None,
                method: None,
                named: None,
                session: None,
            };
            for name in headers.keys() {
                let name = name.as_str();
                let slot = match name {
                    "origin" => return None,
                    "mcp-protocol-version" => &mut read.version,
                    "mcp-method" => &mut read.method,
                    "mcp-name" => &mut read.named,
                    "mcp-session-id" => &mut read.session,
                    _ if name.starts_with("mcp-") => return None,
                    _ => continue,
                };
                *slot = Some(single(headers, name)?);
            }
            Some(read)
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

        fn ping() -> Asked<'static> {
            Asked {
                method: "ping",
                tool: None,
                progress: false,
                lifecycle: None,
            }
        }

        #[test]
        fn plain_requests_are_taken() {
            let plain = PlainHeaders::new(
                &["localhost".into(), "127.0.0.1".into(), "::1".into()],
                true,
            );
            assert_eq!(plain.shape(&ping(), &headers(PLAIN)), Some(Shape::Legacy));
            let mut ipv6 = headers(PLAIN);
            ipv6.insert("host", HeaderValue::from_static("[::1]:9"));
            assert!(plain.shape(&ping(), &ipv6).is_some());
            let ported = PlainHeaders::new(&["example.com:8080".into()], true);
            let mut host = headers(PLAIN);
            host.insert("host", HeaderValue::from_static("Example.COM:8080"));
            assert!(ported.shape(&ping(), &host).is_some());
        }

        /// Anything rmcp might answer otherwise is left to it.
        #[test]
        fn anything_else_is_left_to_rmcp() {
            let plain = PlainHeaders::new(&["localhost".into(), "127.0.0.1".into()], true);
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
            let ported = PlainHeaders::new(&["localhost:9000".into()], true);
            let mut host = headers(PLAIN);
            host.insert("host", HeaderValue::from_static("localhost:9001"));
            assert_eq!(ported.shape(&ping(), &host), None);
        }

        /// A 2026-07-28 request is taken only when its headers and its `_meta` agree as rmcp checks
        /// them; each way one of them can fail rmcp's checks leaves it to rmcp.
        #[test]
        fn a_2026_request_is_taken_only_when_everything_agrees() {
            const V2026: &[(&str, &str)] = &[
                ("host", "127.0.0.1:8080"),
                ("accept", "application/json, text/event-stream"),
                ("content-type", "application/json"),
                ("mcp-protocol-version", "2026-07-28"),
            ];
            let call = |lifecycle: Option<(&'static str, bool)>| Asked {
                method: "tools/call",
                tool: Some("billing"),
                progress: false,
                lifecycle,
            };
            let with = |extra: &[(&'static str, &'static str)]| {
                let mut map = headers(V2026);
                for (name, value) in extra {
                    map.append(*name, HeaderValue::from_static(value));
                }
                map
            };
            let plain = PlainHeaders::new(&["127.0.0.1".into()], true);
            let good = Some(("2026-07-28", true));
            let named = [("mcp-method", "tools/call"), ("mcp-name", "billing")];
            assert_eq!(
                plain.shape(&call(good), &with(&named)),
                Some(Shape::Current)
            );
            // `ping` is gone from 2026-07-28: rmcp's answer, method not found, is left to it.
            assert_eq!(
                plain.shape(
                    &Asked {
                        lifecycle: good,
                        ..ping()
                    },
                    &with(&[("mcp-method", "ping")])
                ),
                None
            );

            // No lifecycle in `_meta`, or one rmcp would not read, under the right headers.
            for meta in [
                None,
                Some(("2026-07-28", false)),
                Some(("2025-11-25", true)),
            ] {
                assert_eq!(plain.shape(&call(meta), &with(&named)), None, "{meta:?}");
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
                assert_eq!(plain.shape(&call(good), &map), None, "{extra}");
            }
            // A server one of whose tools asks for an `Mcp-Param-*` header takes no 2026 call.
            let annotated = PlainHeaders::new(&["127.0.0.1".into()], false);
            assert_eq!(annotated.shape(&call(good), &with(&named)), None);
            // Older versions with a lifecycle in `_meta`, or standard headers, stay rmcp's.
            let mut older = with(&named);
            older.insert(
                "mcp-protocol-version",
                HeaderValue::from_static("2025-11-25"),
            );
            assert_eq!(plain.shape(&call(None), &older), None);
            let mut older = headers(V2026);
            older.insert(
                "mcp-protocol-version",
                HeaderValue::from_static("2025-11-25"),
            );
            assert_eq!(plain.shape(&call(Some(("2025-11-25", true))), &older), None);
        }
    }
}
