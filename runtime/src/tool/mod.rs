//! What a tool is: its definition (name, actions, schemas, annotations, limits) and the trait
//! that `#[tool]` implements. Everything here can also be written by hand.

mod action;
mod answer;
mod as_text;
mod ask_user;
mod call;
mod caller;
mod check;
mod client;
mod client_requests;
mod context;
mod deadline;
mod decode;
mod definition;
mod failure;
pub(crate) mod form;
mod future;
mod header;
mod invoke;
mod listing;
mod object_schema;
mod schema;
mod scope;
mod user_field;

pub use action::{
    ActionDef, ActionDefBuilder, ActionRef, Annotations, Concurrency, Deprecation, RateLimit,
    TaskSupport,
};
pub use answer::Answer;
pub use call::TraceContext;
pub(crate) use call::{Progress, Reporter, new_span_id};
pub use caller::Caller;
pub use client::{Ask, AskError, ElicitForm, Elicited, LogLevel, Root, Sampled, Sampling};
pub(crate) use client::{ClientAccess, ClientLink, ClientRequestKind};
pub use client_requests::Input;
#[cfg(feature = "gateway")]
pub(crate) use client_requests::relayed_url;
pub use context::Context;
pub(crate) use context::Handoffs;
pub(crate) use deadline::Deadline;
pub use definition::{Exposition, SingleToolDefBuilder, ToolDef, ToolDefBuilder};
pub use failure::Failure;
pub use form::{Choice, ElicitChoice};
pub use future::BoxFuture;
#[cfg(feature = "http")]
pub(crate) use header::HEADER_KEYWORD;
#[cfg(feature = "gateway")]
pub(crate) use invoke::settle;
pub(crate) use invoke::{
    Callable, CatchUnwind, Outcome, PanicMessage, Rejection, Route, ask_user, catching, finish,
    prepare,
};
pub use invoke::{IntoOutput, Response, Tool};
pub use listing::SCOPES_KEY;
pub(crate) use listing::unknown_tool;
