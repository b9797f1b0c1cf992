//! What an upstream asks of the gateway's client while a forwarded call runs: sampling,
//! elicitation and roots, relayed through the call's own `Context` (so the client's
//! capabilities, the protocol era and the ask timeout apply as they do to a handler's asks).
//!
//! - An upstream on a session sends its request on the back-channel: it belongs to the call
//!   whose upstream request it arrived with (over streamable HTTP, rmcp records the response
//!   stream it came on, SEP-2260). Over stdio nothing on the wire says which call a request
//!   belongs to (MCP defines no field for it), and a guess could hand a late request of one
//!   caller's call to another's: it is refused. A request that cannot be tied to one call is
//!   refused (`invalid_request`, naming why), as is one the gateway's client cannot answer.
//! - Only what the mount relays is relayed (`relays.rs`), within its bounds: sampling clamped,
//!   counted per call and bounded in wall-clock time; an elicitation named after its upstream
//!   and its link `https` only.
//! - The gateway speaks to its upstreams on 2025-11-25 sessions, so an upstream never answers
//!   `input_required` (rmcp sends it only from 2026-07-28 on).
//!
//! When the gateway's own client is on 2026-07-28, asking ends the client's round: the
//! forwarded call is abandoned (the upstream told), and the retried call forwards it again; the
//! upstream asks the same again and this time the answer is in the client's `inputResponses`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData as McpError;
use rmcp::model::{ElicitRequestParams, RequestId, RequestMetaObject};
use rmcp::service::InboundStreamOrigin;
use serde::de::DeserializeOwned;

use super::relays::{Relays, UPSTREAM_KEY};
use crate::tool::{AskError, ClientRequestKind, Context, relayed_url};

/// The contexts of a link's calls in flight, by the id of their upstream request.
#[derive(Debug, Default)]
pub(super) struct Asking(Mutex<HashMap<RequestId, Arc<Call>>>);

/// A call in flight: its context, and how many sampling requests it relayed.
#[derive(Debug)]
struct Call {
    context: Context,
    sampled: AtomicU32,
}

impl Asking {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Arc<Call>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the call sent as `id`, until the guard is dropped.
    pub(super) fn enter(self: &Arc<Self>, id: RequestId, context: &Context) -> Entered {
        let call = Call {
            context: context.clone(),
            sampled: AtomicU32::new(0),
        };
        self.lock().insert(id.clone(), Arc::new(call));
        Entered(Arc::clone(self), id)
    }

    /// The call an upstream request belongs to, by the stream it came on; none when the
    /// transport cannot tell (stdio): a request there could belong to a call that ended, or to
    /// another caller's, so it is refused rather than guessed.
    fn call(&self, origin: Option<&InboundStreamOrigin>) -> Result<Arc<Call>, McpError> {
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => {
                self.lock().get(id).cloned().ok_or_else(|| {
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
            None => Err(McpError::invalid_request(
                "the gateway cannot tell which of its calls this request belongs to (this connection does not say), so it relays none",
                None,
            )),
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

/// Relays the request of the upstream mounted as `namespace` to the client of the call it
/// belongs to, as far as `relays` lets it: the client's answer, or the refusal the upstream is
/// told.
pub(super) async fn relay<T: DeserializeOwned>(
    asking: &Asking,
    origin: Option<&InboundStreamOrigin>,
    namespace: &str,
    relays: &Relays,
    request: ClientRequestKind,
) -> Result<T, McpError> {
    let call = asking.call(origin)?;
    let (request, bound) = admit(namespace, relays, request, &call)?;
    // A relayed sampling has a wall-clock bound of its own and does not pause the call's
    // deadline; a relayed elicitation waits for the user as a handler's does.
    let asked = call.context.ask(request, bound.is_none());
    let answer = match bound {
        Some(bound) => tokio::time::timeout(bound, asked).await.map_err(|_| {
            McpError::internal_error(
                format!(
                    "the gateway's client: no answer of its model within {} ms, the most the gateway waits for upstream {namespace}",
                    bound.as_millis()
                ),
                None,
            )
        })?,
        None => asked.await,
    };
    let answer = answer.map_err(refused)?;
    serde_json::from_value(answer).map_err(|e| {
        McpError::internal_error(format!("the client answered outside MCP: {e}"), None)
    })
}

/// The request as relayed, and the wall-clock bound of its ask; or why it is not relayed.
#[allow(deprecated)] // Sampling (SEP-2577), still relayed.
fn admit(
    namespace: &str,
    relays: &Relays,
    request: ClientRequestKind,
    call: &Call,
) -> Result<(ClientRequestKind, Option<std::time::Duration>), McpError> {
    let not_relayed = |what: &str| {
        McpError::invalid_request(
            format!("the gateway does not relay {what} for upstream {namespace}"),
            None,
        )
    };
    match request {
        ClientRequestKind::Sample(mut params) => {
            let bounds = relays.sampling.ok_or_else(|| not_relayed("sampling"))?;
            if call.sampled.fetch_add(1, Ordering::Relaxed) >= bounds.asks_per_call {
                return Err(McpError::invalid_request(
                    format!(
                        "this call already relayed {} sampling requests, the most the gateway relays per call for upstream {namespace}",
                        bounds.asks_per_call
                    ),
                    None,
                ));
            }
            params.max_tokens = params.max_tokens.min(bounds.max_tokens);
            // What the client's other servers said is not the upstream's to read.
            params.include_context = None;
            Ok((ClientRequestKind::Sample(params), Some(bounds.timeout)))
        }
        ClientRequestKind::Elicit(params) => {
            if !relays.elicitation {
                return Err(not_relayed("elicitation"));
            }
            Ok((ClientRequestKind::Elicit(named(namespace, params)?), None))
        }
        ClientRequestKind::Roots if relays.roots => Ok((ClientRequestKind::Roots, None)),
        ClientRequestKind::Roots => Err(not_relayed("roots")),
    }
}

/// An elicitation as the user sees it: the message prefixed `[namespace] `, the namespace in
/// `_meta` (whatever the upstream put there), a link only `https`.
fn named(namespace: &str, params: ElicitRequestParams) -> Result<ElicitRequestParams, McpError> {
    let with_name = |meta: Option<RequestMetaObject>| {
        let mut meta = meta.unwrap_or_default();
        (meta.0).0.insert(UPSTREAM_KEY.to_owned(), namespace.into());
        Some(meta)
    };
    match params {
        ElicitRequestParams::FormElicitationParams {
            meta,
            message,
            requested_schema,
        } => Ok(ElicitRequestParams::FormElicitationParams {
            meta: with_name(meta),
            message: format!("[{namespace}] {message}"),
            requested_schema,
        }),
        ElicitRequestParams::UrlElicitationParams {
            meta,
            message,
            url,
            elicitation_id,
        } => {
            let url = relayed_url(&url).map_err(|e| {
                McpError::invalid_params(
                    format!("the gateway relays only https links to the user: {e}"),
                    None,
                )
            })?;
            Ok(ElicitRequestParams::UrlElicitationParams {
                meta: with_name(meta),
                message: format!("[{namespace}] {message}"),
                url,
                elicitation_id,
            })
        }
        _ => Err(McpError::invalid_params(
            "an elicitation MCP does not define",
            None,
        )),
    }
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
#[allow(deprecated)] // Sampling (SEP-2577), still relayed.
mod tests {
    use super::*;
    use crate::server::gateway::SamplingRelay;

    #[test]
    fn a_request_goes_to_its_call_or_is_refused() {
        let asking = Arc::new(Asking::default());
        let first = asking.enter(RequestId::Number(1), &Context::detached("crm.a"));
        // Over stdio nothing says which call a request belongs to, even with one in flight.
        let untold = asking.call(None).unwrap_err();
        assert!(untold.message.contains("cannot tell"), "{untold:?}");
        let second = asking.enter(RequestId::Number(2), &Context::detached("crm.b"));
        let by_stream = InboundStreamOrigin::OutboundRequest(RequestId::Number(2));
        let call = asking.call(Some(&by_stream)).unwrap();
        assert_eq!(call.context.action(), "crm.b");
        let standalone = asking.call(Some(&InboundStreamOrigin::Unassociated));
        assert!(standalone.is_err());
        drop(second);
        assert!(asking.call(Some(&by_stream)).is_err());
        drop(first);
        assert!(asking.lock().is_empty());
    }

    fn call() -> Call {
        Call {
            context: Context::detached("crm.a"),
            sampled: AtomicU32::new(0),
        }
    }

    #[test]
    fn sampling_is_relayed_within_its_bounds_or_not_at_all() {
        let mut params = rmcp::model::CreateMessageRequestParams::new(vec![], 100_000);
        params.include_context = Some(rmcp::model::ContextInclusion::AllServers);
        let ask = || ClientRequestKind::Sample(params.clone());
        let off = admit("crm", &Relays::default(), ask(), &call()).unwrap_err();
        assert!(off.message.contains("does not relay sampling"), "{off:?}");
        let bounds = SamplingRelay::new().max_tokens(500).asks_per_call(2);
        let relays = Relays {
            sampling: Some(bounds),
            ..Relays::default()
        };
        let call = call();
        for _ in 0..2 {
            let (relayed, bound) = admit("crm", &relays, ask(), &call).unwrap();
            let ClientRequestKind::Sample(relayed) = relayed else {
                panic!("{relayed:?}")
            };
            assert_eq!(relayed.max_tokens, 500);
            assert_eq!(relayed.include_context, None);
            assert_eq!(bound, Some(bounds.timeout));
        }
        let third = admit("crm", &relays, ask(), &call).unwrap_err();
        assert!(third.message.contains("already relayed 2"), "{third:?}");
    }

    #[test]
    fn roots_are_relayed_only_when_turned_on() {
        let off = admit("fs", &Relays::default(), ClientRequestKind::Roots, &call());
        assert!(off.unwrap_err().message.contains("roots"));
        let on = Relays {
            roots: true,
            ..Relays::default()
        };
        assert!(admit("fs", &on, ClientRequestKind::Roots, &call()).is_ok());
    }
}
