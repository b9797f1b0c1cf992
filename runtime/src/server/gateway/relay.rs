//! What an upstream asks of the gateway's client while a forwarded call runs: sampling,
//! elicitation and roots, relayed through the call's own `Context` (so the client's
//! capabilities, the protocol era and the ask timeout apply as they do to a handler's asks).
//!
//! - An upstream on a session sends its request on the back-channel: it belongs to the call
//!   whose upstream request it arrived with (over streamable HTTP, rmcp records the response
//!   stream it came on, SEP-2260); over stdio, where streams cannot be told apart, to the one
//!   call in flight on the link. A request that cannot be tied to one call is refused
//!   (`invalid_request`, naming why), as is one the gateway's client cannot answer.
//! - The gateway speaks to its upstreams on 2025-11-25 sessions, so an upstream never answers
//!   `input_required` (rmcp sends it only from 2026-07-28 on).
//!
//! When the gateway's own client is on 2026-07-28, asking ends the client's round: the
//! forwarded call is abandoned (the upstream told), and the retried call forwards it again; the
//! upstream asks the same again and this time the answer is in the client's `inputResponses`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData as McpError;
use rmcp::model::RequestId;
use rmcp::service::InboundStreamOrigin;
use serde::de::DeserializeOwned;

use crate::tool::{AskError, ClientRequestKind, Context};

/// The contexts of a link's calls in flight, by the id of their upstream request.
#[derive(Debug, Default)]
pub(super) struct Asking(Mutex<HashMap<RequestId, Context>>);

impl Asking {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Context>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the call sent as `id`, until the guard is dropped.
    pub(super) fn enter(self: &Arc<Self>, id: RequestId, context: &Context) -> Entered {
        self.lock().insert(id.clone(), context.clone());
        Entered(Arc::clone(self), id)
    }

    /// The call an upstream request belongs to, by the stream it came on.
    fn call(&self, origin: Option<&InboundStreamOrigin>) -> Result<Context, McpError> {
        let calls = self.lock();
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => {
                calls.get(id).cloned().ok_or_else(|| {
                    McpError::invalid_request(
                        "the gateway's call this request came with has ended",
                        None,
                    )
                })
            }
            Some(InboundStreamOrigin::Unassociated) => Err(McpError::invalid_request(
                "the gateway relays a request only on the stream of the call it belongs to",
                None,
            )),
            // Streams cannot be told apart (stdio): the one call in flight, if one.
            None => match calls.len() {
                1 => Ok(calls.values().next().cloned().expect("one call")),
                0 => Err(McpError::invalid_request(
                    "no call of the gateway's is in flight to relay this request for",
                    None,
                )),
                _ => Err(McpError::invalid_request(
                    "several of the gateway's calls are in flight on this connection: it cannot tell which one this request belongs to",
                    None,
                )),
            },
        }
    }
}

/// Forgets a call when it ends.
pub(super) struct Entered(Arc<Asking>, RequestId);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

/// Relays an upstream's request to the client of the call it belongs to; the client's answer,
/// or the refusal the upstream is told.
pub(super) async fn relay<T: DeserializeOwned>(
    asking: &Asking,
    origin: Option<&InboundStreamOrigin>,
    request: ClientRequestKind,
) -> Result<T, McpError> {
    let context = asking.call(origin)?;
    let answer = context.ask(request).await.map_err(refused)?;
    serde_json::from_value(answer).map_err(|e| {
        McpError::internal_error(format!("the client answered outside MCP: {e}"), None)
    })
}

/// A client's failure to answer, as the upstream is told it.
fn refused(error: AskError) -> McpError {
    match error {
        AskError::NotSupported { .. } => McpError::invalid_request(
            format!("the gateway's client cannot be asked this: {error}"),
            None,
        ),
        other => McpError::internal_error(format!("the gateway's client: {other}"), None),
    }
}

/// A request's origin, as rmcp's transport recorded it.
pub(super) fn origin(extensions: &rmcp::model::Extensions) -> Option<&InboundStreamOrigin> {
    extensions.get::<InboundStreamOrigin>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_to_its_call_or_is_refused() {
        let asking = Arc::new(Asking::default());
        let none = asking.call(None).unwrap_err();
        assert!(none.message.contains("no call"), "{none:?}");
        let first = asking.enter(RequestId::Number(1), &Context::detached("crm.a"));
        assert_eq!(asking.call(None).unwrap().action(), "crm.a");
        let second = asking.enter(RequestId::Number(2), &Context::detached("crm.b"));
        let several = asking.call(None).unwrap_err();
        assert!(several.message.contains("several"), "{several:?}");
        let by_stream = InboundStreamOrigin::OutboundRequest(RequestId::Number(2));
        assert_eq!(asking.call(Some(&by_stream)).unwrap().action(), "crm.b");
        let standalone = asking.call(Some(&InboundStreamOrigin::Unassociated));
        assert!(standalone.is_err());
        drop(second);
        assert!(asking.call(Some(&by_stream)).is_err());
        drop(first);
        assert!(asking.lock().is_empty());
    }
}
