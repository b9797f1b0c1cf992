//! The lane on streamable HTTP (`HttpOptions::fast_path`): one tower layer (`front`), between
//! the session limits and rmcp's service, answers a plain request whose headers rmcp would
//! take as they are: on a stateless server itself, in a session through `session`, which
//! checks the session as rmcp checks it against the sessions the server was told of (`known`).

mod front;
mod known;
mod session;

use std::sync::Arc;

pub(crate) use front::FastPath;
pub(super) use known::LaneSessions;

use super::rules::PlainHeaders;
use crate::server::HttpOptions;
use crate::server::core::Server;

impl<S> FastPath<S> {
    /// The layer over `inner` (rmcp's service) for `options`: with `fast_path` off it only
    /// takes the body layer's facts off each request and hands it on, as rmcp wants it.
    pub(crate) fn new(
        inner: S,
        server: &Server,
        options: &HttpOptions,
        sessions: &Arc<crate::server::http::Sessions>,
    ) -> Self {
        let plain = options.fast_path.then(|| {
            let headers = PlainHeaders::new(&options.allowed_hosts, server.without_param_headers());
            let sessions = (!options.stateless).then(|| session::SessionLane::new(sessions));
            Arc::new(front::Lane {
                server: server.clone(),
                headers,
                sessions,
            })
        });
        FastPath { inner, plain }
    }
}
