//! The lane on stdio (`StdioOptions::fast_path`): once rmcp has answered `initialize`, the
//! transport hands each line here first; a plain `tools/call`, `tools/list` or `ping` (`read`)
//! is answered by the server's pipeline (`answer`), with the result shaped for the version
//! negotiated (`rules`), and its answer written as one line after the call's progress
//! notifications. A call read while nothing else is in flight begins in the reader, and takes
//! a task of its own only if it does not finish there; the others run in tasks of their own.
//! The transport keeps what is its own: the requests in flight, their cancellation, and the
//! order of the lines it writes.

use rmcp::model::{Extensions, ProtocolVersion, RequestId};
use rmcp::{Peer, RoleServer};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::answer::PlainClient;
use super::read::{self, PlainRequest};
use super::rules::Shape;
use crate::server::core::Server;
use crate::server::request::{Framed, boxed};

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

    /// Answers `request`: a call's progress notifications go to `out`, and its answer, once
    /// `leave` (the request leaving the transport's flights) gives its place, i.e. unless the
    /// client cancelled it meanwhile, is returned when the call finished as it began, or else
    /// sent to `out` by the task that runs it. `inline`: whether the call may begin here, in the
    /// reader (otherwise it begins in its task). `peer` is the session's, the way a call reaches
    /// its client.
    pub(crate) fn answer<L>(
        &self,
        request: PlainRequest<'_>,
        cancel: CancellationToken,
        peer: Option<Peer<RoleServer>>,
        out: &mpsc::Sender<Framed>,
        leave: L,
        inline: bool,
    ) -> Option<Framed>
    where
        L: FnOnce(&RequestId) -> Option<Option<OwnedSemaphorePermit>> + Send + 'static,
    {
        let shape = self.shape?;
        let server = self.server.clone();
        let id = request.id().clone();
        let request = request.into_owned();
        let client = match peer {
            Some(peer) => PlainClient::Session(peer),
            None => PlainClient::None,
        };
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
