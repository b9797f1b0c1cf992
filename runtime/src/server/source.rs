//! Sources of tools beside the server's own: listed after them, called through the same
//! pipeline (`call::steps`: the source's admission, the server's middleware, a deadline, the
//! panic caught). The upstreams a gateway mounts are one (feature `gateway`,
//! `ServerBuilder::mount`); the core knows them only through [`ToolSource`].

// The gateway (feature `gateway`) is the one source that ships; without it the trait has no
// implementation, and only the core's side of it is compiled.
#![cfg_attr(not(feature = "gateway"), allow(dead_code))]

use std::any::Any;
use std::sync::Arc;

use rmcp::model::Tool as ListedTool;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

use crate::contract::{Contract, UpstreamContract};
use crate::middleware::Middleware;
use crate::tool::{Answer, BoxFuture, Handoffs};

use super::admission::RateConfig;
use super::request::CallRequest;

/// A source of tools a server lists after its own and calls through its pipeline.
pub(crate) trait ToolSource: Send + Sync + std::fmt::Debug {
    /// Starts keeping the source ready (its connections), once; inside a Tokio runtime.
    fn start(&self);

    /// Its tools as listed, waiting for a first listing not made yet at most as long as the
    /// source documents.
    fn list(&self) -> BoxFuture<'_, Vec<ListedTool>>;

    /// Its tools as last known, without waiting.
    fn listed(&self) -> Vec<ListedTool>;

    /// Whether `name` is the listed name of one of its tools (or under its namespace).
    fn owns(&self, name: &str) -> bool;

    /// Its tool listed as `name`, as last known, without waiting.
    fn listed_tool(&self, name: &str) -> Option<ListedTool>;

    /// Runs a call of its tool `call.name` (a name it owns) through the server's steps
    /// (`call::steps`); the core has opened its span and stops it when the client cancels.
    fn call<'a>(&'a self, call: CallRequest<'a>) -> BoxFuture<'a, Sourced>;

    /// The OAuth scopes a call of `name` with `arguments` needs; `None` when none.
    #[cfg(feature = "oauth")]
    fn scopes(
        &self,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<Vec<String>>;

    /// Every scope a call of one of its tools may need.
    #[cfg(feature = "oauth")]
    fn all_scopes(&self) -> Vec<String>;

    /// The parts of it (an upstream's namespace) whose tools no scope limits: under OAuth,
    /// every verified caller may call them.
    #[cfg(feature = "oauth")]
    fn unscoped(&self) -> Vec<String>;

    /// Whether a call may need rmcp's check of `Mcp-Param-*` headers (2026-07-28, SEP-2243).
    #[cfg(feature = "http")]
    fn asks_param_headers(&self) -> bool;

    /// A session began with `initialize` (before 2026-07-28): tell it of listing changes.
    fn session_started(&self, peer: Peer<RoleServer>);

    /// A `subscriptions/listen` stream that asked for `tools` listing changes: told until the
    /// returned guard is dropped.
    fn subscribe(&self, sink: SubscriptionSink) -> Box<dyn Send>;

    /// What its tools are, for the contract lockfile.
    fn contracts(&self) -> Vec<UpstreamContract>;

    /// Reaches what it has not reached yet and waits for each first attempt: the names of
    /// what could not be reached.
    fn reach(&self) -> BoxFuture<'_, Vec<String>>;

    /// Where a handler's handoff leads.
    fn handoffs(self: Arc<Self>) -> Arc<dyn Handoffs>;
}

/// What a source is built with: the server's settings, once every tool is known.
pub(crate) struct SourceSettings<'a> {
    /// The limit store and rate-limit key of the server.
    pub(crate) rates: &'a RateConfig,
    /// The server's middleware, which forwarded calls go through.
    pub(crate) middleware: &'a [Arc<dyn Middleware>],
    pub(crate) expose_causes: bool,
    /// The lockfile the server was built with.
    pub(crate) locked: Option<&'a Contract>,
    /// The first (in order) of the server's own tool names that start with a prefix: a
    /// source's names must not clash with them.
    pub(crate) taken: &'a dyn Fn(&str) -> Option<String>,
}

/// How a source's call ended.
pub(crate) enum Sourced {
    Answered(Answer),
    /// The round is over (2026-07-28): what the call asks of its client.
    InputRequired(rmcp::model::InputRequests),
}

/// A source being described on a server's builder, built with the server.
pub(crate) trait PendingSource: Any + Send {
    fn as_any(&self) -> &dyn Any;

    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Whether it declares a rate limit, and whether it declares any limit (both kept in the
    /// server's store).
    fn limits(&self) -> (bool, bool);

    /// The source, or every problem with it, each one sentence naming the fix.
    fn build(
        self: Box<Self>,
        settings: &SourceSettings<'_>,
    ) -> Result<Arc<dyn ToolSource>, Vec<String>>;
}

/// The sources of a server, in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct Sources(Vec<Arc<dyn ToolSource>>);

impl Sources {
    pub(crate) fn new(sources: Vec<Arc<dyn ToolSource>>) -> Self {
        Sources(sources)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<dyn ToolSource>> {
        self.0.iter()
    }

    /// The source that owns `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&Arc<dyn ToolSource>> {
        self.0.iter().find(|source| source.owns(name))
    }

    /// Starts every source.
    pub(crate) fn start(&self) {
        self.0.iter().for_each(|source| source.start());
    }

    /// Every source's tools, in order.
    pub(crate) async fn list(&self) -> Vec<ListedTool> {
        let mut tools = Vec::new();
        for source in &self.0 {
            tools.extend(source.list().await);
        }
        tools
    }
}
