//! The lane on stdio (`StdioOptions::fast_path`): once rmcp has answered `initialize`, the
//! transport hands each line here first; a plain `tools/call`, `tools/list` or `ping` (`read`)
//! is answered in a task of its own by the server's pipeline (`answer`), with the result shaped
//! for the version negotiated (`rules`), and its answer written as one line after the call's
//! progress notifications. The transport keeps what is its own: the requests in flight, their
//! cancellation, and the order of the lines it writes.

use rmcp::model::{Extensions, ProtocolVersion, RequestId};
use rmcp::{Peer, RoleServer};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::answer::PlainClient;
use super::read::{self, PlainRequest};
use super::rules::Shape;
use crate::server::core::Server;
use crate::server::request::Framed;

/// The lane of one stdio session: the server, and once rmcp has begun the session, the shape
/// of the results of the version negotiated.
pub(crate) struct StdioLane {
    server: Server,
    shape: Option<Shape>,
}

impl StdioLane {
    pub(crate) fn new(server: Server) -> Self {
        StdioLane {
            server,
            shape: None,
        }
    }

    /// rmcp answered `initialize` with `version`: the lane answers plain requests from now on.
    pub(crate) fn begin(&mut self, version: &ProtocolVersion) {
        self.shape = Some(Shape::of(version));
    }

    /// The plain request on `line`, once the session has begun; `None` for rmcp's path.
    pub(crate) fn take<'a>(&self, line: &'a [u8]) -> Option<PlainRequest<'a>> {
        self.shape?;
        // A line that seems to name another method is rmcp's: not worth the lane's parse (were
        // the glance wrong, rmcp answers it as the lane would have).
        let other = |method: &[u8]| !read::METHODS.iter().any(|m| m.as_bytes() == method);
        if read::glance(line).is_some_and(other) {
            return None;
        }
        read::parse(line)
    }

    /// Answers `request` in a task of its own: a call's progress notifications and its answer
    /// go to `out`, the answer only when `leave` (the request leaving the transport's flights)
    /// gives its place, i.e. unless the client cancelled it meanwhile. `peer` is the session's,
    /// the way a call reaches its client.
    pub(crate) fn answer<L>(
        &self,
        request: PlainRequest<'_>,
        cancel: CancellationToken,
        peer: Option<Peer<RoleServer>>,
        out: mpsc::Sender<Framed>,
        leave: L,
    ) where
        L: FnOnce(&RequestId) -> Option<Option<OwnedSemaphorePermit>> + Send + 'static,
    {
        let Some(shape) = self.shape else {
            return;
        };
        let server = self.server.clone();
        let id = request.id().clone();
        let request = request.into_owned();
        let client = match peer {
            Some(peer) => PlainClient::Session(peer),
            None => PlainClient::None,
        };
        tokio::spawn(async move {
            let extensions = Extensions::new();
            let lines = Some(out.clone());
            // Boxed: the task holds a pointer, not the call's whole future (copied as the
            // task is made and again as it ends).
            let answer =
                Box::pin(server.answer_plain(request, cancel, shape, lines, extensions, client))
                    .await;
            if let (Some(mut line), Some(place)) = (answer, leave(&id)) {
                line.push(b'\n');
                // The writer ends only once every sender is gone.
                let _ = out.send((line, place)).await;
            }
        });
    }
}
