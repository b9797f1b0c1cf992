//! The `<tool_error>` envelope: its structure, its fluent builder and its wire text.

mod actions;
mod asked;
mod builtin;
mod escape;
mod itoa;
mod json;
mod mirror;
mod render;
mod retry_after;
mod route;
pub(crate) mod text;
mod tool_error;

pub(crate) use actions::ActionList;
pub(crate) use builtin::new_incident_id;
pub(crate) use builtin::{Instead, unknown_tool};
pub(crate) use escape::{attr as escape_attr, replace_forbidden, text as escape_text};
pub(crate) use itoa::itoa;
pub use mirror::MIRROR_KEY;
#[cfg(any(feature = "client", feature = "otel"))]
pub(crate) use mirror::entries as mirror_entries;
pub(crate) use mirror::{
    Envelope, FieldLines, FieldsMirror, Mirror, VALIDATION_RECOVERY, push as push_mirror,
};
pub use retry_after::RetryAfter;
pub(crate) use retry_after::seconds_up;
pub(crate) use route::{RouteText, UnknownTail, fitting_sentence};
pub use text::Text;
pub use tool_error::ToolError;
