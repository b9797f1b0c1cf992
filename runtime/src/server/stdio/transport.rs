//! The stdio transport rmcp's service loop runs on: it reads lines as rmcp's own does, and keeps
//! the promises rmcp's does not (ERRORS.md §1: every request with an id answered exactly once):
//!
//! - it knows each request in flight by id (`flights`): a second request with an id in flight
//!   is answered -32600 (its answer could not be told from the first's);
//!   `notifications/cancelled` stops the named request, whatever answers it (a call, a
//!   `subscriptions/listen` stream, a request of the user's handler: the core watches the
//!   [`Cancel`] each request carries), and its answer is not written (MCP: cancellation), which
//!   gives its place back;
//! - it answers what rmcp would drop (see `server::incoming`), and lines over `max_line_bytes`;
//! - it holds at most `max_pending_answers` requests whose answers are not yet written (calls
//!   running, answers waiting for stdout); reading waits while that many are pending, so neither
//!   a flood of requests nor a client that does not read stdout can grow the server; lines
//!   are written whole, one after another, by one task (`writer`), or by the reader itself
//!   for an answer it made when nothing is queued;
//! - at the end of the input it keeps serving the calls in flight up to the drain period,
//!   and `close` writes every answer already made before it returns;
//! - before the lifecycle begins (rmcp reads the first message as `initialize`, `ping`, or a
//!   request with inline metadata, and stops on anything else) it drops notifications and
//!   responses, which the MCP lifecycle gives no meaning there;
//! - once it has begun, it answers the plain `tools/call`, `tools/list` and `ping` itself
//!   (those carrying their own 2026-07-28 lifecycle too, but `ping`) through the fast lane
//!   (`server::lane::stdio`): read from the line into a few fields, run
//!   by the server's pipeline (begun as read, in a task of their own if they wait), answered
//!   with one serialisation;
//!   everything else goes to rmcp.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    ClientNotification, ErrorData, GetExtensions, JsonRpcMessage, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleServer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::flights::{Flights, Left};
use super::lines::{Line, Lines};
use super::options::StdioOptions;
use super::writer::{Output, frame};
use crate::server::incoming::{Read, read};
use crate::server::lane::{StdioLane, Taken};
use crate::server::methods::id_in_flight;
use crate::server::request::{Cancel, Framed, Stopping};
use crate::server::serve::Shutdown;

/// A server transport over a byte stream pair such as `rmcp::transport::stdio_pipes()`.
pub(crate) struct StdioTransport<R, W> {
    lines: Lines<R>,
    max_line_bytes: usize,
    drain: Duration,
    /// Requests read and not yet answered, shared with the tasks answering plain requests.
    flights: Flights,
    /// The fast lane, when the transport answers plain requests itself (`server::lane`).
    lane: Option<StdioLane>,
    /// The session's peer, once rmcp has begun the session: the calls this transport answers
    /// itself reach their client through it.
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    /// Whether rmcp has begun the lifecycle (it answered a request other than `ping`).
    started: bool,
    /// One place per request whose answer is not yet written.
    pending: Arc<Semaphore>,
    /// The place taken for the next line read.
    place: Option<OwnedSemaphorePermit>,
    /// An answer made while reading, waiting for room in the writer.
    held: Option<Framed>,
    /// When the input ended, the time the calls in flight have left.
    draining_until: Option<Instant>,
    /// The signal of a graceful shutdown, until it comes.
    shutdown: Option<Shutdown>,
    /// Once it came, the time the calls in flight have left; new calls are refused meanwhile.
    stopping_until: Option<Instant>,
    /// Framed answers to the writer task.
    out: mpsc::Sender<Framed>,
    /// The output the writer task writes, where the reader writes an answer it made itself
    /// when nothing is queued.
    output: Output<W>,
    writer: Option<JoinHandle<()>>,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(
        (read, write): (R, W),
        options: &StdioOptions,
        drain: Duration,
        shutdown: Option<Shutdown>,
        lane: Option<StdioLane>,
        peer: Arc<OnceLock<Peer<RoleServer>>>,
    ) -> Self {
        let max_pending = options.max_pending_answers.clamp(1, Semaphore::MAX_PERMITS);
        let (out, queue) = mpsc::channel(max_pending);
        let output = Output::new(write);
        StdioTransport {
            lines: Lines::new(read, options.max_line_bytes),
            max_line_bytes: options.max_line_bytes,
            drain,
            flights: Flights::default(),
            lane,
            peer,
            started: false,
            pending: Arc::new(Semaphore::new(max_pending)),
            place: None,
            held: None,
            draining_until: None,
            shutdown,
            stopping_until: None,
            out,
            writer: Some(tokio::spawn(output.clone().run(queue))),
            output,
        }
    }

    /// What to do with a message rmcp can read: `Some` to hand it on.
    fn admit(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        match message {
            JsonRpcMessage::Request(mut request) => {
                let cancel = self.enter(&request.id)?;
                let extensions = request.request.extensions_mut();
                extensions.insert(Cancel(cancel));
                if self.stopping_until.is_some() {
                    extensions.insert(Stopping);
                }
                Some(JsonRpcMessage::Request(request))
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                {
                    // Whoever answers the request (rmcp's path or this transport's) stops it on
                    // its token; its answer is then dropped in `send` (or by its task), which
                    // gives its place back.
                    let params = &cancelled.params;
                    match params
                        .request_id
                        .as_ref()
                        .filter(|id| self.flights.cancel(id))
                    {
                        Some(id) => {
                            tracing::debug!(?id, reason = ?params.reason, "stdio: the client cancelled a request")
                        }
                        None => {
                            tracing::debug!(id = ?params.request_id, "stdio: cancellation of no request in flight")
                        }
                    }
                    return None;
                }
                self.lifecycle(JsonRpcMessage::Notification(notification))
            }
            other => self.lifecycle(other),
        }
    }

    /// Takes a place among the requests in flight for request `id`, with the place its line
    /// took: the token that cancels it. `None` when a request with that id is in flight, which
    /// is refused.
    fn enter(&mut self, id: &RequestId) -> Option<CancellationToken> {
        match self.flights.enter(id, self.place.take()) {
            Ok(cancel) => Some(cancel),
            Err(place) => {
                self.place = place;
                self.hold(&JsonRpcMessage::error(duplicate(id), Some(id.clone())));
                None
            }
        }
    }

    /// Answers a plain request through the lane: its answer is written unless the client
    /// cancelled the request meanwhile. It begins here, in the reader, when no other request is
    /// in flight: with others, it takes its turn behind them in a task of its own (a request
    /// read in a burst after cancellations finds the slots the cancelled calls give back, as
    /// their tasks run first). Its answer, when it finished here, is written at once if
    /// nothing is queued, or else held as the answers made while reading.
    fn answer_plain(&mut self, request: Taken<'_>) {
        let id = request.request.id().clone();
        let Some(cancel) = self.enter(&id) else {
            return;
        };
        let Some(lane) = &self.lane else {
            return;
        };
        let flights = self.flights.clone();
        let leave = move |id: &RequestId| match flights.leave(id) {
            Left::Answered(place) => Some(place),
            Left::Cancelled | Left::Unknown => None,
        };
        let inline = self.flights.alone();
        let answered = lane.answer(
            request,
            cancel,
            self.peer.get().cloned(),
            &self.out,
            leave,
            inline,
        );
        if let Some(answer) = answered {
            self.held = self.output.write_now(answer, &self.out).err();
        }
    }

    /// A notification or response, dropped before the lifecycle begins.
    fn lifecycle(
        &self,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        if !self.started {
            tracing::debug!("stdio: a notification or response before initialization was ignored");
            return None;
        }
        Some(message)
    }

    /// A request on `line` the transport answers itself, once the lifecycle has begun and
    /// while no shutdown is under way (a call then is refused on rmcp's path).
    fn plain<'a>(&self, line: &'a [u8]) -> Option<Taken<'a>> {
        let lane = self.lane.as_ref()?;
        // Until rmcp hands over the session's peer, a call could not reach its client.
        self.peer.get()?;
        if self.stopping_until.is_some() {
            return None;
        }
        lane.take(line)
    }

    /// The answer to a line over the limit, when its id could be read.
    fn oversized(&mut self, len: usize, id: Option<RequestId>) {
        let Some(id) = id else {
            tracing::warn!(
                len,
                max = self.max_line_bytes,
                "stdio: a line over max_line_bytes without a readable id was dropped"
            );
            return;
        };
        tracing::warn!(
            len,
            max = self.max_line_bytes,
            ?id,
            "stdio: a request over max_line_bytes was refused"
        );
        let error = ErrorData::invalid_request(
            format!(
                "Invalid request: the message is {len} bytes; this server reads at most {} bytes per message",
                self.max_line_bytes
            ),
            None,
        );
        self.hold(&JsonRpcMessage::error(error, Some(id)));
    }

    /// Keeps an answer made while reading, with the place its line took. A refusal of a request
    /// whose id is in flight says so, as a second request with that id is told (its answer can
    /// be told from the first's only by what it says).
    fn hold(&mut self, answer: &TxJsonRpcMessage<RoleServer>) {
        let in_flight = match answer {
            JsonRpcMessage::Error(error) => {
                error.id.as_ref().filter(|id| self.flights.contains(id))
            }
            _ => None,
        };
        let framed = match in_flight {
            Some(id) => frame(&JsonRpcMessage::error(duplicate(id), Some(id.clone()))),
            None => frame(answer),
        };
        self.held = Some((framed, self.place.take()));
    }

    /// Hands the held answer to the writer, then waits for a place for the next line: reading
    /// pauses while `max_pending_answers` answers are not yet written.
    async fn make_room(&mut self) {
        self.deliver_held().await;
        if self.place.is_none() {
            // Never closed.
            self.place = self.pending.clone().acquire_owned().await.ok();
        }
    }

    /// Hands the held answer to the writer once it has room.
    async fn deliver_held(&mut self) {
        if self.held.is_some() {
            match self.out.reserve().await {
                Ok(room) => room.send(self.held.take().expect("held")),
                Err(_) => self.held = None,
            }
        }
    }

    /// At the end of the input: waits for the calls in flight until the drain period ends,
    /// then stops those still running.
    async fn drained(&mut self) {
        let until = *self
            .draining_until
            .get_or_insert_with(|| Instant::now() + self.drain);
        let running = loop {
            let running = self.flights.running();
            if running == 0 {
                return;
            }
            // rmcp polls `receive` again after each answer it passes to `send`; the requests
            // this transport answers itself say when they are done.
            tokio::select! {
                () = tokio::time::sleep_until(until) => break running,
                () = self.flights.departure() => {}
            }
        };
        tracing::warn!(
            running,
            drain = ?self.drain,
            "stdio: input closed; calls still running after the drain period were stopped"
        );
        self.stop_running(running);
    }

    /// Stops the requests still running: their answers are not written.
    fn stop_running(&mut self, running: usize) {
        if self.stopping_until.is_some() {
            tracing::warn!(running, drain = ?self.drain, "stdio: calls still running after the drain period were stopped");
        }
        self.flights.stop_all();
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some((&response.id, true)),
            JsonRpcMessage::Error(error) => error.id.as_ref().map(|id| (id, false)),
            _ => None,
        };
        let mut write = true;
        let mut place = None;
        if let Some((id, success)) = answered {
            match self.flights.leave(id) {
                Left::Cancelled => write = false,
                Left::Answered(taken) => {
                    place = taken;
                    let pong = matches!(&item, JsonRpcMessage::Response(r) if matches!(r.result, ServerResult::EmptyResult(_)));
                    self.started |= success && !pong;
                    // The fast lane answers the session's plain requests from now on: when
                    // `initialize` began it (rmcp answers it before handing over the peer),
                    // and as a later `initialize` renegotiates it. A session begun by a request
                    // with its own lifecycle requires one of every request, whatever follows.
                    if let JsonRpcMessage::Response(response) = &item
                        && let ServerResult::InitializeResult(initialized) = &response.result
                        && let Some(lane) = &mut self.lane
                        && (self.peer.get().is_none() || lane.begun())
                    {
                        lane.begin(&initialized.protocol_version);
                    }
                }
                Left::Unknown => {}
            }
        }
        let mut framed = write.then(|| (frame(&item), place));
        // Written at once when nothing is queued or being written (the writing task is not
        // woken for it); else queued behind the rest.
        if let Some(line) = framed.take()
            && let Err(line) = self.output.write_now(line, &self.out)
        {
            match self.out.try_send(line) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(line)) => framed = Some(line),
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
        let out = self.out.clone();
        async move {
            if let Some(framed) = framed {
                out.send(framed).await.map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the stdio writer stopped")
                })?;
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Nothing more is read while the writer has no room.
            self.make_room().await;
            if self.draining_until.is_some() {
                self.drained().await;
                return None;
            }
            if let Some(until) = self.stopping_until {
                // rmcp polls `receive` again after each answer it passes to `send`; the calls
                // this transport answers itself wake it below.
                let running = self.flights.running();
                if running == 0 {
                    return None;
                }
                if Instant::now() >= until {
                    self.stop_running(running);
                    return None;
                }
            }
            let stopping_until = self.stopping_until;
            let shutdown = &mut self.shutdown;
            // In this order, the signal and the drain's watches first (each there only when it
            // applies): a flood of lines never holds them back, and no branch is drawn at random.
            // (A disabled branch's future is still made: the drain's timer is made only once
            // polled.)
            let line = tokio::select! {
                biased;
                () = async { shutdown.as_mut().expect("checked").await }, if shutdown.is_some() => {
                    self.shutdown = None;
                    self.stopping_until = Some(Instant::now() + self.drain);
                    tracing::info!(drain = ?self.drain, "stdio: shutting down: new calls are refused, calls in flight may finish");
                    continue;
                }
                () = async move {
                    if let Some(until) = stopping_until {
                        tokio::time::sleep_until(until).await;
                    }
                }, if stopping_until.is_some() => continue,
                () = self.flights.departure(), if stopping_until.is_some() => continue,
                line = self.lines.next() => line,
            };
            let line = match line {
                Some(line) => line,
                None => {
                    self.drained().await;
                    return None;
                }
            };
            match line {
                Line::Whole(line) => match self.plain(&line) {
                    Some(request) => self.answer_plain(request),
                    None => match read(&line) {
                        Read::Message(message) => {
                            if let Some(message) = self.admit(message) {
                                return Some(message);
                            }
                        }
                        Read::Answer(answer) => self.hold(&answer),
                        Read::Drop(_) => {}
                    },
                },
                Line::Oversized { len, id } => self.oversized(len, id),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        // Whatever is left of the drain period, and at least a second, to write the rest.
        let left = self.draining_until.map_or(Duration::ZERO, |until| {
            until.saturating_duration_since(Instant::now())
        });
        let flushed = tokio::time::timeout(left.max(Duration::from_secs(1)), async {
            self.deliver_held().await;
            // The writer ends once every sender is gone: this one and those of rmcp's sends.
            let (closed, _) = mpsc::channel(1);
            drop(std::mem::replace(&mut self.out, closed));
            let _ = writer.await;
        });
        if flushed.await.is_err() {
            tracing::warn!("stdio: answers left unwritten at exit (stdout is not being read)");
        }
        Ok(())
    }
}

/// The refusal of a request whose id is already used by a request in flight.
fn duplicate(id: &RequestId) -> ErrorData {
    id_in_flight(id, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;
    use crate::{ToolError, tool};
    use rmcp::ServiceExt;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    struct Slow;

    /// A tool whose one action takes eight seconds.
    #[tool]
    impl Slow {
        /// Waits.
        #[action(timeout = "20s")]
        async fn wait(&self) -> Result<&'static str, ToolError> {
            tokio::time::sleep(Duration::from_secs(8)).await;
            Ok("done")
        }
    }

    /// rmcp gives calls 5 s after the input ends; the transport gives them the longest
    /// deadline (20 s here). On tokio's paused clock, so the test takes no time.
    #[tokio::test(start_paused = true)]
    async fn calls_in_flight_outlive_rmcps_own_drain() {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let server = Server::builder("t", "1").tool(Slow).build().unwrap();
        let drain = server.longest_deadline();
        assert_eq!(drain, Duration::from_secs(20));
        let transport = StdioTransport::new(
            tokio::io::split(server_end),
            &StdioOptions::default(),
            drain,
            None,
            None,
            Arc::default(),
        );
        let serving = tokio::spawn(async move {
            let running = server.serve(transport).await.expect("initialized");
            running.waiting().await.expect("served")
        });
        let (read, mut write) = tokio::io::split(client);
        for message in [
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "slow", "arguments": {"action": "wait"}}}),
        ] {
            write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        write.shutdown().await.unwrap();
        let started = Instant::now();
        let mut lines = BufReader::new(read).lines();
        let mut answers = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        serving.await.unwrap();
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_eq!(answers[1]["id"], 1);
        assert_eq!(answers[1]["result"]["isError"], false);
        assert!(started.elapsed() >= Duration::from_secs(8));
    }
}
