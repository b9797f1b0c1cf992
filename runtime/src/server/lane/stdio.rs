//! The lane on stdio (`StdioOptions::fast_path`): once rmcp has begun the session, the
//! transport hands each line here first. A plain `tools/call`, `tools/list` or `ping` (`read`)
//! of a session begun with `initialize`, and a plain `tools/call` or `tools/list` carrying its
//! own 2026-07-28 lifecycle in `_meta` (in either kind of session: rmcp reads such a request
//! by its own lifecycle alone), is answered by the server's pipeline (`answer`), with the
//! result shaped for the version negotiated or carried (`rules`), and its answer written as
//! one line after the call's progress notifications. A call read while nothing else is in
//! flight begins in the reader, and takes a task of its own only if it does not finish there;
//! the others run in tasks of their own. The transport keeps what is its own: the requests in
//! flight, their cancellation, and the order of the lines it writes.

use rmcp::model::{ClientCapabilities, Extensions, ProtocolVersion, RequestId};
use rmcp::{Peer, RoleServer};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::answer::PlainClient;
use super::read::{self, PlainRequest};
use super::rules::{Lifecycles, Shape};
use crate::server::core::Server;
use crate::server::request::{Framed, boxed};

/// The lane of one stdio session: the server, the versions a request may carry as its own
/// lifecycle, and once rmcp has answered `initialize`, the shape of the results of the
/// version negotiated.
pub(crate) struct StdioLane {
    server: Server,
    shape: Option<Shape>,
    /// The versions a request may carry as its own lifecycle.
    lifecycles: Lifecycles,
}

/// A request the lane takes: what it asks, and, when it carries its own lifecycle
/// (2026-07-28), the client capabilities it declares.
pub(crate) struct Taken<'a> {
    pub(crate) request: PlainRequest<'a>,
    declared: Option<Box<ClientCapabilities>>,
}

impl StdioLane {
    pub(crate) fn new(server: Server) -> Self {
        let lifecycles = Lifecycles::of(&rmcp::ServerHandler::supported_protocol_versions(&server));
        StdioLane {
            server,
            shape: None,
            lifecycles,
        }
    }

    /// rmcp answered `initialize` with `version`: the lane answers the session's plain
    /// requests from now on.
    pub(crate) fn begin(&mut self, version: &ProtocolVersion) {
        self.shape = Some(Shape::of(version));
    }

    /// Whether rmcp has answered `initialize`.
    pub(crate) fn begun(&self) -> bool {
        self.shape.is_some()
    }

    /// The plain request on `line`, once rmcp has begun the session; `None` for rmcp's path.
    /// One without a lifecycle of its own is taken in a session `initialize` began; one with
    /// its lifecycle (rmcp's rules: a supported version from 2026-07-28 on, with client
    /// capabilities), whatever began the session, but `ping` (gone from 2026-07-28: rmcp
    /// answers it "method not found").
    pub(crate) fn take<'a>(&self, line: &'a [u8]) -> Option<Taken<'a>> {
        // A line that seems to name another method is rmcp's: not worth the lane's parse (were
        // the glance wrong, rmcp answers it as the lane would have).
        let other = |method: &[u8]| !read::METHODS.iter().any(|m| m.as_bytes() == method);
        if read::glance(line).is_some_and(other) {
            return None;
        }
        let (request, inline) = read::parse_inline(line)?;
        let declared = match inline {
            None => {
                self.shape?;
                None
            }
            Some(inline) => {
                let ping = matches!(request, PlainRequest::Ping(_));
                if !self.lifecycles.supports(&inline.version) || ping {
                    return None;
                }
                Some(inline.capabilities?)
            }
        };
        Some(Taken { request, declared })
    }

    /// Answers `request`: a call's progress notifications go to `out`, and its answer, once
    /// `leave` (the request leaving the transport's flights) gives its place, i.e. unless the
    /// client cancelled it meanwhile, is returned when the call finished as it began, or else
    /// sent to `out` by the task that runs it. `inline`: whether the call may begin here, in the
    /// reader (otherwise it begins in its task). `peer` is the session's, the way a call reaches
    /// its client.
    pub(crate) fn answer<L>(
        &self,
        taken: Taken<'_>,
        cancel: CancellationToken,
        peer: Option<Peer<RoleServer>>,
        out: &mpsc::Sender<Framed>,
        leave: L,
        inline: bool,
    ) -> Option<Framed>
    where
        L: FnOnce(&RequestId) -> Option<Option<OwnedSemaphorePermit>> + Send + 'static,
    {
        let Taken { request, declared } = taken;
        // A request with its own lifecycle reaches its client by rounds, as on rmcp's path.
        let (shape, client) = match (declared, peer) {
            (Some(declared), _) => (Shape::Current, PlainClient::Round(Some(declared))),
            (None, Some(peer)) => (self.shape?, PlainClient::Session(peer)),
            (None, None) => (self.shape?, PlainClient::None),
        };
        let server = self.server.clone();
        let id = request.id().clone();
        let request = request.into_owned();
        let lines = Some(out.clone());
        // Boxed: what runs the call (the reader, then its task) holds a pointer, not the
        // call's whole future.
        let mut call = boxed(|| async move {
            let answer = server
                .answer_plain(request, cancel, shape, lines, Extensions::new(), client)
                .await?;
            let place = leave(&id)?;
            let mut line = answer;
            line.push(b'\n');
            Some((line, place))
        });
        if inline {
            // A first poll without a waker: a call still pending is polled again by its task,
            // which registers the task's.
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            if let std::task::Poll::Ready(answer) = call.as_mut().poll(&mut cx) {
                return answer;
            }
        }
        let out = out.clone();
        // In the reader's span, as rmcp's own tasks: a call's span has the same parent whether
        // it finished in the reader or in its task, and on either path.
        let task = async move {
            if let Some(line) = call.await {
                // The writer ends only once every sender is gone.
                let _ = out.send(line).await;
            }
        };
        tokio::spawn(tracing::Instrument::instrument(
            task,
            tracing::Span::current(),
        ));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(method: &str, meta: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{meta}}}}}"#)
    }

    /// Before `initialize`, only a request carrying a lifecycle rmcp would take (a supported
    /// version from 2026-07-28 on, with capabilities; not `ping`) is the lane's; after it,
    /// plain requests of the session too.
    #[test]
    fn a_request_is_taken_by_its_own_lifecycle_or_the_sessions() {
        let server = crate::Server::builder("t", "1").build().expect("builds");
        let mut lane = StdioLane::new(server);
        let with = |version: &str, capabilities: bool| {
            let capabilities = match capabilities {
                true => r#","io.modelcontextprotocol/clientCapabilities":{}"#,
                false => "",
            };
            format!(r#"{{"io.modelcontextprotocol/protocolVersion":"{version}"{capabilities}}}"#)
        };
        let taken = |lane: &StdioLane, line: String| {
            (lane.take(line.as_bytes())).map(|taken| taken.declared.is_some())
        };
        let current = with("2026-07-28", true);
        assert_eq!(taken(&lane, line("tools/list", "{}")), None, "not begun");
        for _ in 0..2 {
            assert_eq!(taken(&lane, line("tools/list", &current)), Some(true));
            assert_eq!(taken(&lane, line("tools/call", &current)), None, "no name");
            let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":META}}"#;
            assert_eq!(taken(&lane, call.replace("META", &current)), Some(true));
            for refused in [
                line("ping", &current),
                line("tools/list", &with("2026-07-28", false)),
                line("tools/list", &with("2025-11-25", true)),
                line("tools/list", &with("2099-01-01", true)),
            ] {
                assert_eq!(taken(&lane, refused), None);
            }
            lane.begin(&ProtocolVersion::V_2025_11_25);
        }
        assert_eq!(taken(&lane, line("tools/list", "{}")), Some(false));
        assert_eq!(taken(&lane, line("ping", "{}")), Some(false));
    }
}
