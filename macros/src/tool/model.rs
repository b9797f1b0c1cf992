//! The validated model of a `#[tool]`: owned values with the spans errors point at. No tokens
//! are produced here.

use proc_macro2::{Span, TokenStream};

use crate::common::paths::Krate;

pub(super) struct Tool {
    pub(super) krate: Krate,
    pub(super) name: String,
    pub(super) description: Option<TokenStream>,
    pub(super) title: Option<String>,
    pub(super) discriminator: Option<(String, Span)>,
    pub(super) concurrency: Option<(usize, usize)>,
    pub(super) rate_limit: Option<(u64, u64)>,
    /// The OAuth scopes every action needs, each where it is written.
    pub(super) scopes: Vec<(String, Span)>,
    /// `Some(true)` for `exposition = "flat"`, `Some(false)` for `"grouped"`.
    pub(super) flat: Option<bool>,
    /// The type that implements `Tool`: the impl's self type, or the struct made for a fn.
    pub(super) self_ident: syn::Ident,
    /// The struct naming the actions, `{Type}Actions`.
    pub(super) actions_ident: syn::Ident,
    pub(super) shape: Shape,
    pub(super) actions: Vec<Action>,
}

pub(super) enum Shape {
    /// `#[tool]` on an async fn: one action, no discriminator; a unit struct is generated.
    Single { vis: syn::Visibility },
    /// `#[tool]` on an impl block: one action per method.
    Group,
}

pub(super) struct Action {
    /// The method (or fn) that handles it.
    pub(super) method: syn::Ident,
    pub(super) name: String,
    pub(super) name_span: Span,
    pub(super) description: Option<TokenStream>,
    pub(super) receiver: bool,
    pub(super) args: Option<syn::Type>,
    pub(super) context: Option<syn::Type>,
    /// The context is declared before the arguments.
    pub(super) context_first: bool,
    /// Where the return type is written, for the errors its checks raise.
    pub(super) output_span: Span,
    /// Where its success type is written (`T` of `Result<T, E>`), or the return type.
    pub(super) ok_span: Span,
    pub(super) read_only: bool,
    pub(super) destructive: bool,
    pub(super) idempotent: bool,
    pub(super) open_world: bool,
    pub(super) deprecated: Option<Deprecated>,
    pub(super) timeout_ms: Option<u64>,
    pub(super) heartbeat_ms: Option<u64>,
    pub(super) concurrency: Option<(usize, usize)>,
    /// `(max, window in ms)` for this action alone.
    pub(super) rate_limit: Option<(u64, u64)>,
    /// The OAuth scopes this action needs besides the tool's, each where it is written.
    pub(super) scopes: Vec<(String, Span)>,
    /// Undeclared fields accepted.
    pub(super) open_arguments: bool,
    pub(super) title: Option<String>,
    /// The success type (`T` of `Result<T, E>`), when its schema is the output schema.
    pub(super) output: Option<syn::Type>,
    /// The fields only the user can give (`ask_user`), each as the schema names it and where it
    /// is written.
    pub(super) user_fields: Vec<(String, Span)>,
    /// What the handler asks of the client (`needs`): the names of `Ask`'s variants.
    pub(super) needs: Vec<&'static str>,
    /// The fields mirrored in HTTP headers (`header`), in the order written.
    pub(super) headers: Vec<Header>,
    /// Whether it runs as a task (`task`).
    pub(super) task: Option<TaskMode>,
}

/// How an action runs as a task: `task`, `task = "required"`, `task_after = ".."`.
pub(super) struct TaskMode {
    /// Only as a task.
    pub(super) required: bool,
    /// The input keys a request answers before the call becomes a task.
    pub(super) after: Vec<String>,
}

/// `region = "Region"` of `header(..)`: a field as the schema names it, and its header's name
/// (without `Mcp-Param-`), each with where it is written.
pub(super) struct Header {
    pub(super) field: String,
    pub(super) field_span: Span,
    pub(super) name: String,
    pub(super) name_span: Span,
}

pub(super) struct Deprecated {
    pub(super) note: Option<String>,
    pub(super) replacement: Option<syn::Ident>,
}
