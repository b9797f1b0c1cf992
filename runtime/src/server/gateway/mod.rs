//! A gateway: upstream MCP servers mounted under namespaces of one server (feature `gateway`).
//!
//! [`ServerBuilder::mount`](crate::server::ServerBuilder::mount) puts an [`Upstream`] (a child
//! process spoken to on stdio, or a streamable HTTP endpoint) under a namespace: its tools are
//! listed as `{namespace}_{tool}` beside the server's own, in one listing that is the same for
//! every connection and is not emptied while the upstream is down (its last known tools stay).
//! A call is forwarded with the gateway's own credentials (a client's are never passed
//! through), its progress notifications and cancellation go both ways, and its trace context is
//! continued; the upstream's result comes back unchanged. What fails on the way is an envelope
//! (ERRORS.md §4, the gateway rows): HANDOFF_CONNECTING while the connection is being made,
//! HANDOFF_UPSTREAM_UNAVAILABLE while it cannot be reached (with the time until the gateway
//! tries again), HANDOFF_NAMESPACE_MISMATCH for a name the upstream does not list.
//!
//! A forwarded call goes through what the server puts around its own tools' calls, in the same
//! order (ERRORS.md §4): the upstream's rate limit and concurrency
//! ([`Upstream::rate_limit`], [`Upstream::concurrency`]), the server's middleware (which sees
//! the call under its listed name, as tool and action), and the deadline
//! ([`Upstream::call_timeout`]); what the middleware returns or raises is answered as for a
//! local tool (a panic: INTERNAL_ERROR).
//!
//! A contract lockfile records the upstreams' tools too
//! ([`UpstreamContract`](crate::contract::UpstreamContract)): a gateway built with it
//! ([`contract_lock`](crate::server::ServerBuilder::contract_lock)) lists them before it first
//! reaches each upstream, and [`Server::reach_upstreams`](crate::Server::reach_upstreams) connects
//! them all before a lockfile is written.
//!
//! What an upstream asks of the client of a forwarded call is relayed only as its mount allows
//! ([`Upstream::relay_sampling`], [`Upstream::relay_elicitation`], [`Upstream::relay_roots`]),
//! to that call's client alone, and the gateway declares to each upstream only what it relays.
//!
//! The gateway keeps each upstream connected: after a failure it waits a backoff that doubles
//! with each consecutive failure (with jitter, up to a maximum), then tries once; one log line
//! tells an outage, one its end.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_fusion::Server;
//! use mcp_fusion::server::gateway::Upstream;
//! use mcp_fusion::server::StdioOptions;
//!
//! let server = Server::builder("front-desk", "1.0.0")
//!     .mount("billing", Upstream::command("billing-server", ["--stdio"]))
//!     .mount("crm", Upstream::http("http://10.0.0.7:8080/mcp").bearer(std::env::var("CRM_TOKEN")?))
//!     .build()?;
//! server.serve_stdio(StdioOptions::default()).await?;
//! # Ok(()) }
//! ```

mod breaker;
mod credentials;
mod envelopes;
mod keeper;
mod link;
mod listing;
mod relay;
mod relays;
mod source;
mod subscribers;

use std::time::Duration;

pub use relays::{SamplingRelay, UPSTREAM_KEY};

/// An upstream MCP server a gateway mounts: how to reach it, and how patiently.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::gateway::Upstream;
///
/// let billing = Upstream::command("billing-server", ["--stdio"]).env("RUST_LOG", "warn");
/// let crm = Upstream::http("http://10.0.0.7:8080/mcp")
///     .bearer("token of the gateway's own")
///     .call_timeout(Duration::from_secs(30))
///     .backoff(Duration::from_secs(1), Duration::from_secs(30));
/// # let _ = (billing, crm);
/// ```
#[derive(Clone)]
pub struct Upstream {
    pub(crate) target: Target,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) bearer: Option<String>,
    #[cfg(feature = "oauth-client")]
    pub(crate) oauth: Option<crate::oauth_client::OAuth>,
    pub(crate) connect_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) backoff: (Duration, Duration),
    pub(crate) breaker: u32,
    pub(crate) rate_limit: Option<crate::tool::RateLimit>,
    pub(crate) concurrency: Option<crate::tool::Concurrency>,
    pub(crate) scopes: Vec<String>,
    pub(crate) relays: relays::Relays,
}

#[derive(Clone)]
pub(crate) enum Target {
    Command {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http(String),
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Upstream");
        match &self.target {
            Target::Command { program, args, .. } => {
                out.field("program", program).field("args", args)
            }
            Target::Http(url) => out.field("url", url),
        };
        // Header values are credentials: only their names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        out.field("headers", &names)
            .field("bearer", &self.bearer.as_ref().map(|_| "…"));
        #[cfg(feature = "oauth-client")]
        out.field("oauth", &self.oauth);
        out.field("connect_timeout", &self.connect_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("backoff", &self.backoff)
            .field("breaker", &self.breaker)
            .field("rate_limit", &self.rate_limit)
            .field("concurrency", &self.concurrency)
            .field("scopes", &self.scopes)
            .field("relays", &self.relays)
            .finish()
    }
}

impl Upstream {
    /// An upstream started as a child process (`program` with `args`), spoken to on its stdin
    /// and stdout; started again after it exits. Its stderr is the gateway's.
    pub fn command<S: Into<String>>(
        program: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        Self::with_target(Target::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        })
    }

    /// An upstream at a streamable HTTP endpoint (`http://10.0.0.7:8080/mcp`). TLS needs a
    /// reqwest TLS feature of your choice.
    pub fn http(url: impl Into<String>) -> Self {
        Self::with_target(Target::Http(url.into()))
    }

    fn with_target(target: Target) -> Self {
        Upstream {
            target,
            headers: Vec::new(),
            bearer: None,
            #[cfg(feature = "oauth-client")]
            oauth: None,
            connect_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(60),
            backoff: (Duration::from_secs(1), Duration::from_secs(30)),
            breaker: 5,
            rate_limit: None,
            concurrency: None,
            scopes: Vec::new(),
            relays: relays::Relays::default(),
        }
    }

    /// The OAuth scopes a verified caller needs to call any tool of this upstream (over
    /// streamable HTTP with [`HttpOptions::oauth`](crate::server::HttpOptions)), on top of those
    /// its tools declare themselves (an mcp-fusion upstream lists them in each tool's `_meta`,
    /// [`SCOPES_KEY`](crate::tool::SCOPES_KEY): the action called needs its own). A caller
    /// without them is answered `403 insufficient_scope` before anything is forwarded. An
    /// upstream with neither is callable by every verified caller; the server warns of it when
    /// it serves with OAuth.
    ///
    /// ```
    /// use mcp_fusion::server::gateway::Upstream;
    ///
    /// let crm = Upstream::http("http://10.0.0.7:8080/mcp").scopes(["crm:read"]);
    /// # let _ = crm;
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self.scopes.sort_unstable();
        self.scopes.dedup();
        self
    }

    /// At most `max` calls per `window` to this upstream, kept in the server's limit store
    /// (shared by replicas on Redis): beyond it, RATE_LIMITED before anything is forwarded.
    /// Budgets are kept per key as for the server's own tools: a verified caller's own, divided
    /// by [`rate_limit_key`](crate::server::ServerBuilder::rate_limit_key) when the server has
    /// one.
    pub fn rate_limit(mut self, max: u64, window: Duration) -> Self {
        self.rate_limit = Some(crate::tool::RateLimit { max, window });
        self
    }

    /// At most `max_active` calls to this upstream at once, `max_queued` more waiting, in the
    /// server's limit store: beyond them, SERVER_BUSY. A limit no call could pass (0 at once, or
    /// leases a Redis store could not renew within the call timeout) is a build error naming
    /// the mount.
    ///
    /// ```
    /// use mcp_fusion::Server;
    /// use mcp_fusion::server::gateway::Upstream;
    ///
    /// let crm = Upstream::http("http://10.0.0.7:8080/mcp").concurrency(8, 32);
    /// assert!(Server::builder("front-desk", "1").mount("crm", crm).build().is_ok());
    /// let none = Upstream::http("http://10.0.0.7:8080/mcp").concurrency(0, 32);
    /// let refused = Server::builder("front-desk", "1").mount("crm", none).build().unwrap_err();
    /// assert!(refused.problems()[0].starts_with("mount \"crm\": a concurrency limit of 0"));
    /// ```
    pub fn concurrency(mut self, max_active: usize, max_queued: usize) -> Self {
        self.concurrency = Some(crate::tool::Concurrency {
            max_active,
            max_queued,
        });
        self
    }

    /// Sets an environment variable of the child process (a command upstream).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Command { env, .. } = &mut self.target {
            env.push((name.into(), value.into()));
        }
        self
    }

    /// The gateway's own access token for an HTTP upstream (`Authorization: Bearer`): the
    /// clients' tokens are never passed through (MCP security best practices: no token
    /// passthrough).
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// The gateway's own OAuth client for an HTTP upstream (feature `oauth-client`): usually
    /// [`OAuth::client_credentials`](crate::client::oauth::OAuth::client_credentials), the
    /// grant that needs no user. The gateway gets a token before it connects (discovery from
    /// the upstream's metadata), refreshes or gets another as it expires, and never passes a
    /// client's token on. An upstream or authorization server that refuses the gateway's
    /// credentials makes its calls answer FORBIDDEN (critical, no retry) until it takes them.
    ///
    /// ```
    /// use mcp_fusion::client::oauth::OAuth;
    /// use mcp_fusion::server::gateway::Upstream;
    ///
    /// let crm = Upstream::http("http://10.0.0.7:8080/mcp")
    ///     .oauth(OAuth::client_credentials("front-desk", "s3cret").scopes(["crm:read"]));
    /// assert!(!format!("{crm:?}").contains("s3cret"));
    /// ```
    #[cfg(feature = "oauth-client")]
    pub fn oauth(mut self, oauth: crate::oauth_client::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// A header sent with every request to an HTTP upstream (not `Authorization`, set with
    /// [`bearer`](Self::bearer), nor the headers MCP's transport sets itself).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into().to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.into()));
        self
    }

    /// How long connecting (starting, the MCP handshake, the first listing) may take before
    /// it counts as a failure (10 s by default).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long a forwarded call may wait for the upstream's answer before it is cancelled
    /// there and answered TIMEOUT (60 s by default).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// After this many forwarded calls in a row that fail (no answer within the
    /// [`call_timeout`](Self::call_timeout), an answer that is no result, an internal error;
    /// 5 by default, at least 1), the circuit breaker opens: the connection is dropped and
    /// calls are answered HANDOFF_UPSTREAM_UNAVAILABLE until the [`backoff`](Self::backoff)
    /// ends (growing with each trip no served call follows), when the gateway connects again
    /// and lets calls through. A refusal of the arguments (`-32602`) or a result with
    /// `isError` is an answer, not a failure.
    ///
    /// One caller cannot open it for everyone: failures are counted per caller too (a verified
    /// subject, else the server's `rate_limit_key`, else one anonymous caller), and a caller
    /// whose own calls fail this many times in a row is answered
    /// HANDOFF_UPSTREAM_UNAVAILABLE alone, for the backoff; the connection is dropped only when
    /// the failures in a row come from two callers or more (or from the only caller the
    /// upstream has served, as on stdio). Callers the server cannot tell apart (no OAuth, no
    /// key) are one caller.
    pub fn breaker(mut self, failures: u32) -> Self {
        self.breaker = failures.max(1);
        self
    }

    /// The wait after a first failure (1 s by default), doubled after each consecutive one up
    /// to `max` (30 s by default), each less a random part of up to a fifth.
    pub fn backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = (first, max.max(first));
        self
    }
}

impl Upstream {
    /// Relays the upstream's sampling requests to the client's model, within `bounds`. Off by
    /// default: sampling spends the user's model budget, so the gateway neither declares nor
    /// relays it to an upstream unless told.
    ///
    /// ```
    /// use mcp_fusion::server::gateway::{SamplingRelay, Upstream};
    ///
    /// let crm = Upstream::http("http://10.0.0.7:8080/mcp")
    ///     .relay_sampling(SamplingRelay::new().max_tokens(256));
    /// # let _ = crm;
    /// ```
    pub fn relay_sampling(mut self, bounds: SamplingRelay) -> Self {
        self.relays.sampling = Some(bounds);
        self
    }

    /// Whether the upstream's elicitations reach the user (on by default). Each is shown
    /// prefixed `[namespace] ` with the namespace in `_meta` ([`UPSTREAM_KEY`]), and a URL
    /// elicitation only for an `https` link.
    ///
    /// ```
    /// use mcp_fusion::server::gateway::Upstream;
    ///
    /// let silent = Upstream::command("billing-server", ["--stdio"]).relay_elicitation(false);
    /// # let _ = silent;
    /// ```
    pub fn relay_elicitation(mut self, relay: bool) -> Self {
        self.relays.elicitation = relay;
        self
    }

    /// Whether the upstream may list the client's roots (off by default: they tell the
    /// upstream where the user's files are).
    ///
    /// ```
    /// use mcp_fusion::server::gateway::Upstream;
    ///
    /// let files = Upstream::command("file-server", ["--stdio"]).relay_roots(true);
    /// # let _ = files;
    /// ```
    pub fn relay_roots(mut self, relay: bool) -> Self {
        self.relays.roots = relay;
        self
    }
}

/// Whether `namespace` can name a mount: lowercase ASCII letters, digits and `-`, starting
/// with a letter, at most 32 characters (the listed names stay valid MCP tool names).
pub(crate) fn valid_namespace(namespace: &str) -> bool {
    let bytes = namespace.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes.len() <= 32
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

pub(crate) use crate::contract::SEPARATOR;
