//! The lane's answers: a plain request (`read`) run by the server's one call pipeline and
//! answered with one serialisation, the same bytes rmcp's path gives (`rules`).

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, Extensions, ListToolsResult, RequestId, ServerResult};

use super::read::{PlainRequest, answer, envelope_answer};
use super::rules::Shape;
use crate::server::call::Called;
use crate::server::core::Server;
use crate::server::reach::Asker;
use crate::server::request::{CallRequest, boxed, trace_of};
use crate::server::task_calls::{TaskCall, Tasked};
use crate::tool::CatchUnwind;

impl Server {
    /// Whether the listing of tools may change while serving (a source's may).
    fn tools_change(&self) -> bool {
        !self.inner.sources.is_empty()
    }

    /// The answer to a plain request a transport read itself (`read`): the same as rmcp's
    /// path gives, serialised once. `None` for a call cancelled before its answer. A call's
    /// progress notifications go to `lines` (stdio); `extensions` are what the transport knows
    /// of the request (over HTTP the verified caller and the request's head, as rmcp gives
    /// them on its path); `client`, how the call reaches its client.
    #[allow(clippy::too_many_arguments)] // each is one fact about the request
    #[allow(clippy::manual_async_fn)] // an `async fn` keeps its arguments twice: rust#62958
    pub(crate) fn answer_plain(
        &self,
        request: PlainRequest<'_>,
        cancelled: tokio_util::sync::CancellationToken,
        shape: Shape,
        #[cfg_attr(not(feature = "stdio"), allow(unused_variables))] lines: Option<
            tokio::sync::mpsc::Sender<crate::server::request::Framed>,
        >,
        extensions: Extensions,
        client: PlainClient,
    ) -> impl Future<Output = Option<Vec<u8>>> {
        async move {
            let (id, mut call) = match request {
                PlainRequest::Ping(id) => {
                    return Some(answer(id, Ok(ServerResult::empty(())), shape));
                }
                PlainRequest::List(id) => return Some(self.listing(&id, shape).await),
                PlainRequest::Call(id, call) => (id, call),
            };
            // A retried call's answers and state (only a request with its 2026-07-28 lifecycle).
            let mut retry = call.retry.take();
            let name = call.name.clone();
            let caller = crate::tool::Caller::of(&extensions).cloned();
            // What reaches the client is moved into the reach's future, not kept beside it
            // (a value borrowed in a future keeps its room there until its scope ends).
            let (declared, declared_tasks, asker) = {
                let (version, capabilities, peer) = match client {
                    PlainClient::None => (None, None, None),
                    PlainClient::Session(peer) => {
                        let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
                        (None, capabilities, Some(peer))
                    }
                    PlainClient::Round(capabilities) => (
                        Some(rmcp::model::ProtocolVersion::V_2026_07_28),
                        capabilities.map(|c| *c),
                        None,
                    ),
                };
                let declared = capabilities.as_ref().is_some_and(|c| c.supports_tasks());
                // A copy for a task, which only a client that declares tasks is given (boxed:
                // rare, and kept for as long as the call runs).
                let declared_tasks = declared
                    .then(|| capabilities.clone().map(Box::new))
                    .flatten();
                let asker = Asker {
                    tool: &name,
                    arguments: call.arguments.as_ref(),
                    version,
                    capabilities,
                    back_channel: peer.is_some(),
                    peer,
                    log_level: None,
                    answers: retry.as_mut().and_then(|r| r.answers.take()),
                    state: retry.as_ref().and_then(|r| r.state.as_deref()),
                    caller: caller.as_ref(),
                };
                (declared, declared_tasks, asker)
            };
            let reach = match self.reach(asker).await {
                Ok(reach) => reach,
                // A state that cannot carry the call on is the client's doing: a JSON-RPC error,
                // as on rmcp's path.
                Err(refused) => return Some(answer(id, Err(refused), shape)),
            };
            match self.tasked(&name, call.arguments.as_ref(), declared, &reach.answers) {
                Tasked::Inline => {}
                Tasked::Refused(refused) => return Some(answer(id, Err(refused), shape)),
                Tasked::Task => {
                    let task = TaskCall {
                        name: name.to_string(),
                        arguments: call.arguments,
                        trace: trace_of(call.traceparent.as_deref(), call.tracestate.as_deref()),
                        extensions,
                        answers: reach.answers.clone(),
                        capabilities: declared_tasks.map(|c| *c).unwrap_or_default(),
                    };
                    // Boxed: a task's start is rare, and its future would make every call's larger.
                    let created = Box::pin(self.start_task(task)).await;
                    let created = created.map(ServerResult::from);
                    return Some(answer(id, created, shape));
                }
            }
            #[cfg(feature = "stdio")]
            let progress = (call.progress)
                .zip(lines)
                .map(|(token, lines)| (token, crate::server::request::ProgressSink::Lines(lines)));
            #[cfg(not(feature = "stdio"))]
            let progress = None;
            let request = CallRequest {
                trace: trace_of(call.traceparent.as_deref(), call.tracestate.as_deref()),
                name: call.name,
                arguments: call.arguments,
                progress,
                extensions,
                cancelled,
                client: reach.client.clone(),
                round: reach.round.clone(),
                spent: false,
            };
            // As in `call_tool`: a panic on the way to the action still answers.
            let called = CatchUnwind(boxed(|| self.run_call(request))).await;
            if let Some(missing) = reach.missing() {
                let refused = ErrorData::missing_required_client_capability(missing);
                return Some(answer(id, Err(refused), shape));
            }
            let outcome = match called {
                // An envelope is written from its parts, its mirror never made a value.
                Ok(Called::Answered(ref answer)) if let Some(envelope) = answer.as_envelope() => {
                    return Some(envelope_answer(&id, envelope, shape));
                }
                Ok(Called::Cancelled { .. }) => return None,
                Ok(Called::InputRequired(asks)) => {
                    let result =
                        ServerResult::InputRequiredResult(self.input_required(&reach, asks));
                    return Some(answer(id, Ok(result), shape));
                }
                Ok(called) => self.answer_of(&id, &name, called),
                Err(panic) => Err(self.panicked(panic)),
            };
            let response = |result| ServerResult::from(CallToolResponse::from(result));
            Some(answer(id, outcome.map(response), shape))
        }
    }

    /// `tools/list`'s answer to request `id`: made once for each shape, its id put in (made
    /// each time when a source's tools may change).
    async fn listing(&self, id: &RequestId, shape: Shape) -> Vec<u8> {
        const PREFIX: &str = r#"{"jsonrpc":"2.0","id":0,"#;
        let make = |tools| -> Box<str> {
            let result = ServerResult::ListToolsResult(ListToolsResult::with_all_items(tools));
            let answer = answer(RequestId::Number(0), Ok(result), shape);
            String::from_utf8(answer).unwrap_or_default().into()
        };
        let made;
        let cached = match self.tools_change() {
            false => {
                let own = || self.inner.registry.listed().cloned().collect();
                self.inner.lane.listing[shape as usize].get_or_init(|| make(own()))
            }
            true => {
                made = make(self.listed_tools().await);
                &made
            }
        };
        let rest = cached.strip_prefix(PREFIX).unwrap_or_default();
        let id = serde_json::to_string(id).unwrap_or_default();
        format!(r#"{{"jsonrpc":"2.0","id":{id},{rest}"#).into_bytes()
    }
}

/// How a plain request reaches its client.
pub(crate) enum PlainClient {
    /// No way back (stateless HTTP before 2026-07-28).
    None,
    /// The session's peer (stdio, a session of streamable HTTP).
    Session(rmcp::Peer<RoleServer>),
    /// A 2026-07-28 request, with the client capabilities its `_meta` declares.
    Round(Option<Box<rmcp::model::ClientCapabilities>>),
}
