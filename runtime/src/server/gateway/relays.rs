//! What the gateway relays for each upstream to the client of a forwarded call, and within
//! which bounds: sampling (off by default; when on, `maxTokens` clamped, a number of asks per
//! call, a wall-clock limit on each ask), elicitation (on by default, the upstream named in
//! the message and `_meta`, links only `https`), roots (off by default). The gateway declares
//! to each upstream only what it relays for it, and refuses the rest if asked anyway.
//!
//! Why these defaults: elicitation puts the user in the loop, who sees the upstream's name and
//! can decline, so it stays on (upstreams ask for confirmations); sampling spends the user's
//! model budget and reaches the model without the user necessarily seeing it, and roots tell
//! an upstream about the user's files: both are the gateway operator's choice per upstream.

use std::time::Duration;

#[allow(deprecated)] // Sampling and roots (SEP-2577), still relayed.
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, FormElicitationCapability, RootsCapabilities,
    SamplingCapability, UrlElicitationCapability,
};

/// The `_meta` key of a relayed elicitation that names the upstream asking (its namespace).
///
/// ```
/// assert_eq!(mcp_fusion::server::gateway::UPSTREAM_KEY, "dev.mcp-fusion/upstream");
/// ```
pub const UPSTREAM_KEY: &str = "dev.mcp-fusion/upstream";

/// What the gateway relays for one upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Relays {
    pub(crate) sampling: Option<SamplingRelay>,
    pub(crate) elicitation: bool,
    pub(crate) roots: bool,
}

impl Default for Relays {
    fn default() -> Self {
        Relays {
            sampling: None,
            elicitation: true,
            roots: false,
        }
    }
}

impl Relays {
    /// The capabilities the gateway declares to the upstream: only what it relays.
    #[allow(deprecated)]
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.sampling.is_some() {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.roots {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        if self.elicitation {
            let mut elicitation = ElicitationCapability::default();
            elicitation.form = Some(FormElicitationCapability::default());
            elicitation.url = Some(UrlElicitationCapability::new());
            capabilities.elicitation = Some(elicitation);
        }
        capabilities
    }
}

/// The bounds of an upstream's sampling relayed to the client's model
/// ([`Upstream::relay_sampling`](super::Upstream::relay_sampling)): `maxTokens` clamped to
/// [`max_tokens`](Self::max_tokens) (1024 by default), at most
/// [`asks_per_call`](Self::asks_per_call) asks per forwarded call (3 by default), each
/// answered within [`timeout`](Self::timeout) of wall-clock time (60 s by default; the call's
/// own deadline keeps running meanwhile). The gateway drops `includeContext`: what the client's
/// other servers said is not the upstream's to read.
///
/// ```
/// use std::time::Duration;
/// use mcp_fusion::server::gateway::SamplingRelay;
///
/// let bounds = SamplingRelay::new()
///     .max_tokens(512)
///     .asks_per_call(1)
///     .timeout(Duration::from_secs(20));
/// # let _ = bounds;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplingRelay {
    pub(crate) max_tokens: u32,
    pub(crate) asks_per_call: u32,
    pub(crate) timeout: Duration,
}

impl Default for SamplingRelay {
    fn default() -> Self {
        Self::new()
    }
}

impl SamplingRelay {
    /// The default bounds: 1024 tokens, 3 asks per call, 60 s each.
    pub fn new() -> Self {
        SamplingRelay {
            max_tokens: 1024,
            asks_per_call: 3,
            timeout: Duration::from_secs(60),
        }
    }

    /// The most tokens an ask may request: a larger `maxTokens` is lowered to it (at least 1).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens.max(1);
        self
    }

    /// The most asks one forwarded call may relay; the next are refused.
    pub fn asks_per_call(mut self, asks: u32) -> Self {
        self.asks_per_call = asks;
        self
    }

    /// How long one relayed ask may take, in wall-clock time, before it is abandoned and the
    /// upstream told so.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_relayed_is_declared() {
        let declared = Relays::default().capabilities();
        assert!(declared.sampling.is_none() && declared.roots.is_none());
        assert!(declared.elicitation.is_some());
        let all = Relays {
            sampling: Some(SamplingRelay::new()),
            elicitation: false,
            roots: true,
        };
        let declared = all.capabilities();
        assert!(declared.sampling.is_some() && declared.roots.is_some());
        assert!(declared.elicitation.is_none());
    }
}
