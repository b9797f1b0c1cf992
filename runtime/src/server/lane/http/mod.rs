//! The lane on streamable HTTP (`HttpOptions::fast_path`): one step of the endpoint (`front`),
//! between the session cap and rmcp's service, answers a plain request whose headers rmcp would
//! take as they are: on a stateless server itself, and on a server with sessions a request
//! carrying its 2026-07-28 lifecycle (which has no session) likewise; in a session through
//! `session`, which checks the session as rmcp checks it against the sessions the server was
//! told of (`known`).

mod front;
mod known;
mod session;

pub(crate) use front::Lane;
pub(super) use known::LaneSessions;

use super::rules::{Lifecycles, PlainHeaders};
use crate::server::HttpOptions;
use crate::server::core::Server;

impl Lane {
    /// The lane for `options`, unless `fast_path` is off.
    pub(crate) fn new(
        server: &Server,
        options: &HttpOptions,
        sessions: &crate::server::http::Sessions,
    ) -> Option<Self> {
        options.fast_path.then(|| Lane {
            server: server.clone(),
            headers: PlainHeaders::new(&options.allowed_hosts, server.without_param_headers()),
            lifecycles: Lifecycles::of(&rmcp::ServerHandler::supported_protocol_versions(server)),
            sessions: (!options.stateless).then(|| session::SessionLane::new(sessions)),
        })
    }
}
