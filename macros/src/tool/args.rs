//! darling receivers for `#[tool(..)]` and the per-method `#[action(..)]`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, Override, SpannedValue};
use syn::spanned::Spanned;

use crate::common::diag::SCOPE_HINT;

/// `#[tool(..)]`. The action options (`read_only`, ..., `timeout`) apply to a single-action
/// tool only; on an impl block they go on each method's `#[action(..)]`.
#[derive(FromMeta, Default)]
pub(super) struct ToolArgs {
    pub(super) name: Option<SpannedValue<String>>,
    pub(super) description: Option<String>,
    pub(super) discriminator: Option<SpannedValue<String>>,
    pub(super) concurrency: Option<SpannedValue<ConcurrencyArgs>>,
    pub(super) rate_limit: Option<RateLimitArgs>,
    /// `scopes("invoices:read")`: the OAuth scopes every action of the tool needs.
    pub(super) scopes: Option<ScopesArgs>,
    /// `exposition = "flat"` (each action its own MCP tool) or `"grouped"` (the default: one
    /// tool, actions chosen by the discriminator).
    pub(super) exposition: Option<SpannedValue<String>>,
    #[darling(rename = "crate")]
    pub(super) krate: Option<syn::Path>,
    #[darling(flatten)]
    pub(super) action: ActionOptions,
}

/// `concurrency(max_active = 2, max_queued = 2)`.
#[derive(FromMeta, Clone, Copy)]
pub(super) struct ConcurrencyArgs {
    pub(super) max_active: usize,
    #[darling(default)]
    pub(super) max_queued: usize,
}

/// `rate_limit(max = 10, window = "1m")`.
#[derive(FromMeta)]
pub(super) struct RateLimitArgs {
    pub(super) max: SpannedValue<u64>,
    pub(super) window: SpannedValue<DurationText>,
}

/// `scopes("invoices:read", "invoices:write")` as written: the items and where the list is.
/// Each item is kept as it is (a string literal or a mistake) for `lower` to check, so that
/// every mistake is reported with the others.
pub(super) struct ScopesArgs {
    /// The whole `scopes(..)`, for an empty list.
    pub(super) span: proc_macro2::Span,
    pub(super) items: Vec<NestedMeta>,
}

impl FromMeta for ScopesArgs {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        match item {
            syn::Meta::List(list) => Ok(ScopesArgs {
                span: item.span(),
                items: NestedMeta::parse_meta_list(list.tokens.clone())?,
            }),
            _ => Err(darling::Error::custom(format!(
                "`scopes` is a list of strings: {SCOPE_HINT}"
            ))
            .with_span(item)),
        }
    }
}

/// `ask_user(confirm, "accountId")` as written: the fields only the user can give, each an
/// identifier (the field's name) or a string (the name serde reads, when renamed), kept as they
/// are for `lower` to check with the other mistakes.
pub(super) struct AskUserArgs {
    /// The whole `ask_user(..)`, for an empty list.
    pub(super) span: proc_macro2::Span,
    pub(super) items: Vec<NestedMeta>,
}

impl FromMeta for AskUserArgs {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        match item {
            syn::Meta::List(list) => Ok(AskUserArgs {
                span: item.span(),
                items: NestedMeta::parse_meta_list(list.tokens.clone())?,
            }),
            _ => Err(darling::Error::custom(
                "`ask_user` lists the fields to ask the user for: `ask_user(confirm)`",
            )
            .with_span(item)),
        }
    }
}

/// `needs(sampling, elicitation, roots)`: what the action's handler asks of the client.
#[derive(FromMeta, Default)]
pub(super) struct NeedsArgs {
    pub(super) sampling: Flag,
    pub(super) elicitation: Flag,
    pub(super) roots: Flag,
}

/// `header(region = "Region")` as written: each field of the arguments mirrored in the HTTP
/// header `Mcp-Param-{name}`, kept as they are for `lower` to check with the other mistakes.
pub(super) struct HeaderArgs {
    /// The whole `header(..)`, for an empty list.
    pub(super) span: proc_macro2::Span,
    pub(super) items: Vec<NestedMeta>,
}

impl FromMeta for HeaderArgs {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        match item {
            syn::Meta::List(list) => Ok(HeaderArgs {
                span: item.span(),
                items: NestedMeta::parse_meta_list(list.tokens.clone())?,
            }),
            _ => Err(darling::Error::custom(
                "`header` maps fields of the arguments to the headers they are mirrored in: `header(region = \"Region\")`",
            )
            .with_span(item)),
        }
    }
}

/// A duration as written: a string with its unit (`"5s"`); a bare number is refused with the
/// string it meant.
pub(super) struct DurationText(pub(super) String);

impl FromMeta for DurationText {
    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Str(text) => Ok(DurationText(text.value())),
            syn::Lit::Int(n) => Err(darling::Error::custom(format!(
                "a duration is a string with its unit: `\"{0}s\"` for {0} seconds (or \"{0}ms\", \"{0}m\", \"{0}h\")",
                n.base10_digits()
            ))
            .with_span(n)),
            other => Err(darling::Error::unexpected_lit_type(other)),
        }
    }
}

/// `#[action(..)]` on a method, or the same options on a single-action `#[tool(..)]`.
#[derive(FromMeta, Default)]
pub(super) struct ActionOptions {
    pub(super) read_only: Flag,
    pub(super) destructive: Flag,
    pub(super) idempotent: Flag,
    pub(super) open_world: Flag,
    /// `deprecated`, or `deprecated = "the author's note"`.
    pub(super) deprecated: Option<SpannedValue<Override<String>>>,
    /// `replacement = cancel_invoice`: the action to use instead.
    pub(super) replacement: Option<syn::Ident>,
    pub(super) timeout: Option<SpannedValue<DurationText>>,
    /// `heartbeat = "5s"`: progress while the handler reports none.
    pub(super) heartbeat: Option<SpannedValue<DurationText>>,
    /// `concurrency(max_active = 2, max_queued = 2)` for this action alone.
    pub(super) concurrency: Option<ConcurrencyArgs>,
    /// `open_arguments`: fields the arguments do not declare are accepted (and ignored) instead
    /// of reported. On an impl block's `#[tool(..)]`, for every action.
    pub(super) open_arguments: Flag,
    /// `title = ".."`: the name a host shows people. On an impl block's `#[tool(..)]`, the
    /// tool's.
    pub(super) title: Option<String>,
    /// `output_schema`: the success type's JSON Schema is listed as the output schema (flat
    /// exposition, or one action) and results carry `structuredContent`. On an impl block's
    /// `#[tool(..)]`, for every action.
    pub(super) output_schema: Flag,
    /// `ask_user(confirm)`: optional fields of the arguments that only the user can give,
    /// asked of them (MCP elicitation) when a call leaves one out.
    pub(super) ask_user: Option<AskUserArgs>,
    /// `needs(sampling)`: what the handler asks of the client (`sampling`, `elicitation`,
    /// `roots`); a call whose client cannot be asked it is refused before the handler runs.
    pub(super) needs: Option<NeedsArgs>,
    /// `header(region = "Region")`: fields of the arguments mirrored in HTTP headers
    /// (`Mcp-Param-Region`, SEP-2243).
    pub(super) header: Option<HeaderArgs>,
    /// `task` (may run as a task), `task = "required"` (only as a task), `task = "optional"`.
    pub(super) task: Option<SpannedValue<Override<String>>>,
    /// `task_after = "user_name"`: a task only once the call's request answers these input
    /// keys (comma-separated); before, the call runs inline and its asks end rounds.
    pub(super) task_after: Option<SpannedValue<String>>,
}

impl ActionOptions {
    /// Where the first option given is written, if any is.
    pub(super) fn first_span(&self) -> Option<proc_macro2::Span> {
        [
            &self.read_only,
            &self.destructive,
            &self.idempotent,
            &self.open_world,
        ]
        .into_iter()
        .find(|flag| flag.is_present())
        .map(Flag::span)
        .or_else(|| self.deprecated.as_ref().map(|d| d.span()))
        .or_else(|| self.replacement.as_ref().map(syn::Ident::span))
        .or_else(|| self.timeout.as_ref().map(|t| t.span()))
        .or_else(|| self.heartbeat.as_ref().map(|t| t.span()))
        .or_else(|| self.ask_user.as_ref().map(|a| a.span))
        .or_else(|| self.header.as_ref().map(|h| h.span))
        .or_else(|| self.task.as_ref().map(|t| t.span()))
        .or_else(|| self.task_after.as_ref().map(|t| t.span()))
    }
}

/// The per-method attribute, `#[action(name = "..", ..)]`.
#[derive(FromMeta, Default)]
pub(super) struct ActionArgs {
    pub(super) name: Option<SpannedValue<String>>,
    /// `rate_limit(max = 10, window = "1m")` for this action alone, beside the tool's (on a
    /// single-action tool, `#[tool(rate_limit(..))]` is the same thing).
    pub(super) rate_limit: Option<RateLimitArgs>,
    /// `scopes("invoices:write")`: the OAuth scopes this action needs besides the tool's (on a
    /// single-action tool, `#[tool(scopes(..))]` is the same thing).
    pub(super) scopes: Option<ScopesArgs>,
    #[darling(flatten)]
    pub(super) options: ActionOptions,
}
