//! The `Host` and `Origin` check: a request naming a host not in `HttpOptions::allowed_hosts`,
//! or a browser's origin not in `allowed_origins`, is refused before anything else reads it
//! (its body, its token), as rmcp refuses it (DNS rebinding). rmcp checks these headers first
//! in its own service, but after the steps that read the body: a forbidden `Host` with a body
//! that is no JSON-RPC message was told 400 about the body rather than 403 about the host.
//!
//! The check is rmcp's own, not a copy: it asks rmcp's service about the request's head
//! alone (its `Host`, `Origin` and URI, with the method `OPTIONS`, which rmcp answers 405 once
//! the headers pass), so the rules (ports, IPv6 brackets, `null` origins, an empty list) are
//! always those of the rmcp that serves the request. What rmcp allowed is remembered (at most
//! [`REMEMBERED`] heads, the usual few of a deployment), so that a request whose `Host` and
//! `Origin` were allowed before costs a lookup, not a second pass through rmcp's service.
//! One rule is its own, stricter than rmcp's: a request with more than one `Host` is
//! answered 400, as RFC 9112 §3.2 requires (rmcp would judge the first alone).

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::Empty;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::reply::{Reply, text};
use crate::server::core::Server;
use crate::tool::BoxFuture;

/// How many allowed heads (URI authority, `Host`, `Origin`) are remembered; past it, rmcp
/// decides each request again (nothing grows).
pub(crate) const REMEMBERED: usize = 64;

/// The `Host` and `Origin` check.
pub(crate) struct Hosts {
    /// The rmcp service whose rules decide.
    pub(crate) rmcp: StreamableHttpService<Server, LocalSessionManager>,
    /// The heads rmcp allowed.
    pub(crate) allowed: std::sync::RwLock<foldhash::HashSet<Box<[u8]>>>,
}

/// A request's `Host` and `Origin` not known to be allowed: refused, or rmcp to be asked.
pub(crate) enum Unknown<'a> {
    Refused(Box<Reply>),
    /// rmcp's refusal, if it refuses them (what it allows is remembered).
    Ask(BoxFuture<'a, Option<Reply>>),
}

/// What rmcp's check reads of a request: its URI's authority, its `Host` and `Origin` values,
/// on the stack when they fit (the usual head: no allocation to look it up), and boxed only
/// when it is remembered.
struct HeadKey {
    inline: [u8; HeadKey::INLINE],
    len: usize,
    spilled: Option<Vec<u8>>,
    /// How many `Host` values the request carries.
    hosts: usize,
}

impl HeadKey {
    const INLINE: usize = 160;

    fn of<B>(request: &Request<B>) -> Self {
        let mut key = HeadKey {
            inline: [0; HeadKey::INLINE],
            len: 0,
            spilled: None,
            hosts: 0,
        };
        if let Some(authority) = request.uri().authority() {
            key.push(authority.as_str().as_bytes());
        }
        for (name, host) in [(header::HOST, true), (header::ORIGIN, false)] {
            for value in request.headers().get_all(&name) {
                key.hosts += usize::from(host);
                key.push(&[0]);
                key.push(value.as_bytes());
            }
            key.push(&[1]);
        }
        key
    }

    fn push(&mut self, bytes: &[u8]) {
        if let Some(spilled) = &mut self.spilled {
            spilled.extend_from_slice(bytes);
            return;
        }
        let end = self.len + bytes.len();
        match self.inline.get_mut(self.len..end) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len = end;
            }
            None => {
                let mut spilled = Vec::with_capacity(end * 2);
                spilled.extend_from_slice(&self.inline[..self.len]);
                spilled.extend_from_slice(bytes);
                self.spilled = Some(spilled);
            }
        }
    }

    fn as_slice(&self) -> &[u8] {
        self.spilled.as_deref().unwrap_or(&self.inline[..self.len])
    }
}

impl Hosts {
    /// Whether `request`'s `Host` and `Origin` are allowed: at once when rmcp allowed them
    /// before, or when they cannot be (more than one `Host`); else rmcp is to be asked.
    pub(crate) fn check<B>(&self, request: &Request<B>) -> Result<(), Unknown<'_>> {
        let key = HeadKey::of(request);
        // RFC 9112 §3.2: a request with more than one `Host` is answered 400 (rmcp reads the
        // first, a proxy in front may have routed by another).
        if key.hosts > 1 {
            return Err(Unknown::Refused(Box::new(text(
                StatusCode::BAD_REQUEST,
                "Bad Request: more than one Host header",
            ))));
        }
        let allowed = (self.allowed.read()).is_ok_and(|allowed| allowed.contains(key.as_slice()));
        match allowed {
            true => Ok(()),
            false => Err(Unknown::Ask(self.ask_rmcp(request, key.as_slice().into()))),
        }
    }

    /// rmcp's refusal of the request's head, asked of its service; remembered when allowed.
    #[cold]
    #[inline(never)]
    fn ask_rmcp<B>(&self, request: &Request<B>, key: Box<[u8]>) -> BoxFuture<'_, Option<Reply>> {
        let mut head = Request::builder()
            .method(Method::OPTIONS)
            .uri(request.uri().clone());
        for name in [header::HOST, header::ORIGIN] {
            for value in request.headers().get_all(&name) {
                head = head.header(&name, value);
            }
        }
        let head = head.body(Empty::<Bytes>::new());
        Box::pin(async move {
            // Built from a request's own URI and header values: it cannot fail to build.
            if let Ok(head) = head {
                let told = self.rmcp.handle(head).await;
                if told.status() != StatusCode::METHOD_NOT_ALLOWED {
                    return Some(told);
                }
                if let Ok(mut allowed) = self.allowed.write()
                    && allowed.len() < REMEMBERED
                {
                    allowed.insert(key);
                }
            }
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use std::sync::Arc;

    fn hosts() -> Hosts {
        let server = crate::Server::builder("t", "1").build().unwrap();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(["localhost", "127.0.0.1"])
            .with_allowed_origins(["http://localhost:5173"])
            .enforce_origin_validation();
        let rmcp = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        Hosts {
            rmcp,
            allowed: Default::default(),
        }
    }

    /// The status and body `hosts` answers a request with `headers` (`200 reached`: let
    /// through).
    async fn status_of(hosts: &Hosts, headers: &[(&str, &str)]) -> (StatusCode, String) {
        let mut request = Request::post("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(()).unwrap();
        let refused = match hosts.check(&request) {
            Ok(()) => None,
            Err(Unknown::Refused(refused)) => Some(*refused),
            Err(Unknown::Ask(asked)) => asked.await,
        };
        let Some(reply) = refused else {
            return (StatusCode::OK, "reached".to_owned());
        };
        let status = reply.status();
        let body = reply.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// The status and body a request with `headers` gets from a new check.
    async fn status(headers: &[(&str, &str)]) -> (StatusCode, String) {
        status_of(&hosts(), headers).await
    }

    /// What rmcp allowed is remembered, at most `REMEMBERED` heads; what it refused never is.
    #[tokio::test]
    async fn allowed_heads_are_remembered_within_a_bound() {
        let hosts = hosts();
        for port in 0..100 {
            let host = format!("127.0.0.1:{port}");
            let reached = status_of(&hosts, &[("host", &host)]).await;
            assert_eq!(reached.0, StatusCode::OK);
            let refused = status_of(&hosts, &[("host", "evil.example")]).await;
            assert_eq!(refused.0, StatusCode::FORBIDDEN);
        }
        assert_eq!(hosts.allowed.read().unwrap().len(), REMEMBERED);
        let again = status_of(&hosts, &[("host", "127.0.0.1:3")]).await;
        assert_eq!(again.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn a_forbidden_host_or_origin_is_refused_before_the_steps_after_it() {
        let reached = (StatusCode::OK, "reached".to_owned());
        assert_eq!(status(&[("host", "127.0.0.1:8080")]).await, reached);
        assert_eq!(status(&[("host", "LOCALHOST")]).await, reached);
        let origin = [("host", "localhost"), ("origin", "http://localhost:5173")];
        assert_eq!(status(&origin).await, reached);
        let (code, told) = status(&[("host", "evil.example")]).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{told}");
        assert!(told.contains("Host"), "{told}");
        let evil = [("host", "localhost"), ("origin", "https://evil.example")];
        let (code, told) = status(&evil).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{told}");
        assert!(told.contains("Origin"), "{told}");
        // No Host and no authority: rmcp's 400.
        assert_eq!(status(&[]).await.0, StatusCode::BAD_REQUEST);
        // Two: 400 whatever they are (RFC 9112 §3.2), though rmcp would read the first alone.
        let two = [("host", "localhost"), ("host", "evil.example")];
        let (code, told) = status(&two).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{told}");
        assert!(told.contains("more than one Host"), "{told}");
        let same = [("host", "localhost"), ("host", "localhost")];
        assert_eq!(status(&same).await.0, StatusCode::BAD_REQUEST);
    }
}
