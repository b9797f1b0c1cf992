//! What the streamable HTTP endpoint is configured with, split by what each setting configures:
//! the endpoint itself ([`HttpOptions`], which a mounted [`HttpService`](super::HttpService)
//! honours whole), and the connections of the crate's own HTTP server
//! ([`ConnectionOptions`], for [`Server::serve_http`](crate::Server::serve_http) only: a mounted
//! service's connections are its application's).

use std::time::Duration;

/// How the streamable HTTP endpoint answers: safe by default, every limit a knob.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::HttpOptions;
///
/// let mut options = HttpOptions::default();
/// options.stateless = true;
/// options.allowed_hosts = vec!["mcp.example.com".into()];
/// options.allowed_origins = vec!["https://app.example.com".into()];
/// options.max_sessions = 1_000;
/// options.connections.max_connections = 1_024;
/// assert_eq!(options.max_body_bytes, 1 << 20);
/// assert_eq!(options.session_keep_alive, Duration::from_secs(120));
/// ```
///
/// Memory at worst, with the defaults: bodies being read, at most `max_connections` × 1 MiB
/// (256 MiB); bodies being parsed, `max_parsing` × 1 MiB of them at a time, each read twice
/// over (once to check it, once by rmcp, one after the other) at up to ~130 times its size
/// for JSON of the smallest values: 2 × 130 MiB; arguments that fail validation, one large
/// call at a time at up to ~200 times its size (`Schema::validate`): 211 MiB for 1 MiB of the
/// smallest wrong values; sessions, about 55 KiB each: 256 × 55 KiB (14 MiB).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so replicas can sit behind a load balancer.
    pub stateless: bool,
    /// The path the MCP endpoint is served at by [`Server::serve_http`](crate::Server::serve_http);
    /// any other path is 404. A mounted service is routed to by its application.
    pub path: String,
    /// Host names accepted in `Host` (DNS-rebinding protection); loopback names by default.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in `Origin` (the MCP transport requires servers to check it): loopback
    /// origins, `http` and `https` on any port, by default. Requests without `Origin` (clients
    /// that are not browsers) pass; any other origin is refused 403. Entries need a scheme;
    /// `:*` matches any port (`https://app.example.com:*`).
    pub allowed_origins: Vec<String>,
    /// The largest request body, in bytes (1 MiB by default, as on stdio); a larger one is
    /// refused 413 before it is read, or as soon as it grows past the limit.
    pub max_body_bytes: usize,
    /// How long a client has to send a request's whole body once its headers are in (30 s by
    /// default); a slower one gets 408 and the connection is closed.
    pub body_read_timeout: Duration,
    /// How many request bodies of `max_body_bytes` are parsed at once (2 by default); smaller
    /// bodies share that budget by size (in KiB, each counting at least 1), so 2 × 1 MiB also
    /// parses 2,048 bodies of 1 KiB at once. Parsing JSON of small values takes ~130 times the
    /// body's size, so this bounds that memory whatever the traffic. A body holds its share
    /// only while it is parsed (by this crate, then by rmcp), never while its request runs or
    /// its stream is open.
    pub max_parsing: usize,
    /// How long a body waits for its share of the `max_parsing` budget before it is refused
    /// 503 with `Retry-After` (5 s by default): no request waits on others without a bound.
    pub parse_wait: Duration,
    /// How many sessions live at once (256 by default); past it, `initialize` is answered 503
    /// with `Retry-After` and a JSON-RPC error (-32000) naming the limit.
    pub max_sessions: usize,
    /// How long a session lives without a message from its client (120 s by default; rmcp's
    /// own default is 300 s). A client whose session ended gets 404 and initializes again.
    pub session_keep_alive: Duration,
    /// At a graceful shutdown, how long requests in flight may still run before they are
    /// stopped; `None` (the default) waits as long as the longest deadline of any action, or
    /// 30 s when an action has none.
    pub drain: Option<Duration>,
    /// Plain `tools/call` (without a progress token), `tools/list` and `ping` requests with
    /// plain headers are answered by this crate as rmcp would answer them (on by default):
    /// stateless, the same status and bytes, without rmcp's per-request service; in a live
    /// session, the same events in one body, without rmcp's session worker and per-request
    /// task (a call only when the session's client declared nothing it could be asked:
    /// elicitation, sampling, roots).
    pub fast_path: bool,
    /// MCP authorization (feature `oauth`): the server as an OAuth resource server. Every
    /// request must then carry a bearer token its verifier accepts (else `401`, before the
    /// body is read), its Protected Resource Metadata is served at the well-known paths, and
    /// a call of an action (or a mounted tool) whose scopes the token lacks is answered `403`
    /// `insufficient_scope` (see [`oauth`](crate::server::oauth)). `None` by default.
    #[cfg(feature = "oauth")]
    pub oauth: Option<crate::server::oauth::OAuth>,
    /// The connections of the crate's own HTTP server ([`Server::serve_http`](crate::Server::serve_http));
    /// a mounted service leaves them to its application's server.
    pub connections: ConnectionOptions,
}

/// The connections [`Server::serve_http`](crate::Server::serve_http) accepts: how many, how
/// patiently, and how they close (hyper's `http1::Builder` settings, and the accept loop's).
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::ConnectionOptions;
///
/// let mut connections = ConnectionOptions::default();
/// connections.max_connections = 64;
/// connections.idle_timeout = Duration::from_secs(30);
/// assert_eq!(connections.header_read_timeout, Duration::from_secs(10));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectionOptions {
    /// How long a client has to send a request's headers (10 s by default); an idle
    /// keep-alive connection must start its next request within it too.
    pub header_read_timeout: Duration,
    /// How long a connection may go without a byte read or written while no request of it is
    /// being handled (60 s by default; closed within a quarter of it more): a response stream
    /// its client stopped reading, say.
    /// Streams of events carry a keep-alive every 15 s, so a live one is never idle.
    pub idle_timeout: Duration,
    /// How many connections are open at once (256 by default). Past it, a new connection
    /// takes the place of the connection idle longest (no request in progress, or a request
    /// whose head is not complete), which is closed; a connection opened less than 200 ms
    /// ago (its request may be on its way) is closed only when no older one is idle, and a
    /// place freed meanwhile goes to the new connection instead. With none idle, or no place
    /// within a second, it is answered 503 with `Retry-After` and closed.
    pub max_connections: usize,
    /// After a refusal that closes the connection (413, 408, 400, 503 at the connection cap),
    /// how long what the client still sends is read and dropped before the connection is
    /// closed (5 s by default), so that a client still writing its request reads the answer
    /// instead of a reset (nginx's lingering close). Every close lingers at most this long.
    pub linger_timeout: Duration,
    /// How many bytes a lingering close reads and drops at most (128 MiB by default).
    pub linger_max_bytes: u64,
}

impl Default for HttpOptions {
    fn default() -> Self {
        let loopback = ["localhost", "127.0.0.1", "[::1]"];
        HttpOptions {
            stateless: false,
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: ["http", "https"]
                .iter()
                .flat_map(|scheme| {
                    loopback
                        .iter()
                        .map(move |host| format!("{scheme}://{host}:*"))
                })
                .collect(),
            max_body_bytes: 1 << 20,
            body_read_timeout: Duration::from_secs(30),
            max_parsing: 2,
            parse_wait: Duration::from_secs(5),
            max_sessions: 256,
            session_keep_alive: Duration::from_secs(120),
            drain: None,
            fast_path: true,
            #[cfg(feature = "oauth")]
            oauth: None,
            connections: ConnectionOptions::default(),
        }
    }
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 256,
            linger_timeout: Duration::from_secs(5),
            linger_max_bytes: 128 << 20,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults are part of the bounds the docs state: changing one is a decision.
    #[test]
    fn defaults_are_pinned() {
        let options = HttpOptions::default();
        assert_eq!(options.max_body_bytes, 1024 * 1024);
        assert_eq!(options.max_parsing, 2);
        assert_eq!(options.parse_wait, Duration::from_secs(5));
        assert_eq!(options.body_read_timeout, Duration::from_secs(30));
        assert_eq!(options.max_sessions, 256);
        assert_eq!(options.session_keep_alive, Duration::from_secs(120));
        assert!(!options.stateless);
        assert_eq!(options.path, "/mcp");
        assert_eq!(options.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(
            options.allowed_origins,
            [
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ]
        );
        let connections = options.connections;
        assert_eq!(connections.header_read_timeout, Duration::from_secs(10));
        assert_eq!(connections.idle_timeout, Duration::from_secs(60));
        assert_eq!(connections.max_connections, 256);
        assert_eq!(connections.linger_timeout, Duration::from_secs(5));
        assert_eq!(connections.linger_max_bytes, 128 << 20);
    }
}
