//! Argument validation: every problem in a call's arguments, found against the action's JSON
//! Schema (`detect`, with what it reads of the schema once in `layout`; `flat`, a walk of its
//! own for flat object schemas), kept as typed problems (`path`, `problem`) and written as one
//! `<validation_error>` by the §5 message table (`message`), ERRORS.md §5.

mod compile;
mod copy;
mod detect;
mod flat;
mod group;
mod keywords;
mod layout;
mod message;
mod mirror;
mod path;
pub(crate) mod pointer;
mod problem;
mod schema;
mod validation_error;

pub use group::Field;
pub use path::{FieldPath, PathSegment};
pub(crate) use pointer::invalid_references;
pub use problem::{Format, JsonType, Problem, ProblemKind};
pub use schema::{Schema, SchemaError};
pub use validation_error::ValidationError;

/// At most this many `<field>` lines (a line for several elements of one array counts once);
/// the problems of the others are counted in a `(more)` line.
pub const MAX_FIELDS: usize = 20;
