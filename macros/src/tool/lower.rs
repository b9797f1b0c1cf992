//! Lowering: the item `#[tool]` is on, and its options, read into the [`Tool`] model (names,
//! actions, parameters, limits), every mistake reported at once.

use darling::FromMeta;
use mcp_fusion_rules::case::{snake_case, upper_camel};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use super::args::{self, ActionArgs, ActionOptions, ToolArgs};
use super::model::{Action, Deprecated, Shape, Tool};
use super::validate;
use crate::common::diag::{DURATION_HINT, SCOPE_HINT, parse_duration};
use crate::common::docs;
use crate::common::paths::Krate;

/// `#[tool] async fn get_weather(..)`: the action is the fn, the tool a generated unit struct.
pub(super) fn single(
    f: &syn::ItemFn,
    args: ToolArgs,
    errors: &mut darling::error::Accumulator,
) -> Option<Tool> {
    if let Some(d) = &args.discriminator {
        errors.push(
            darling::Error::custom("a tool with one action has no discriminator; put #[tool] on an impl block to group actions")
                .with_span(&d.span()),
        );
    }
    let name = args
        .name
        .as_ref()
        .map_or_else(|| f.sig.ident.to_string(), |n| n.as_ref().clone());
    let name_span = args
        .name
        .as_ref()
        .map_or_else(|| f.sig.ident.span(), |n| n.span());
    // A name with a space is reported as the action's (`validate::tool`).
    if !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        validate::tool_name(&name, name_span, errors);
    }
    let description = args
        .description
        .as_ref()
        .map(|d| quote!(#d))
        .or_else(|| docs::description(&f.attrs));
    if description.is_none() {
        errors.push(undescribed("tool", "the fn").with_span(&f.sig.ident));
    }
    let action = action(
        &f.sig,
        name,
        name_span,
        description.clone(),
        args.action,
        errors,
    )?;
    if let Some(exposition) = &args.exposition {
        errors.push(
            darling::Error::custom("a tool with one action is one MCP tool either way; `exposition` is for an impl block of actions")
                .with_span(&exposition.span()),
        );
    }
    let camel = upper_camel(&f.sig.ident.to_string());
    let self_ident = format_ident!("{camel}Tool", span = f.sig.ident.span());
    let tool = Tool {
        krate: Krate::new(args.krate),
        name: action.name.clone(),
        description,
        title: None,
        discriminator: None,
        concurrency: limits(args.concurrency.as_ref()),
        rate_limit: rate_limit(args.rate_limit.as_ref(), errors),
        scopes: scopes(args.scopes.as_ref(), errors),
        flat: None,
        actions_ident: format_ident!("{self_ident}Actions"),
        self_ident,
        shape: Shape::Single { vis: f.vis.clone() },
        actions: vec![action],
    };
    validate::tool(&tool, errors);
    Some(tool)
}

/// `#[tool] impl Billing { async fn list_invoices(..) .. }`: each method is an action; its
/// `#[action(..)]` attributes are read and removed.
pub(super) fn group(
    block: &mut syn::ItemImpl,
    args: ToolArgs,
    errors: &mut darling::error::Accumulator,
) -> Option<Tool> {
    if let Some(span) = args.action.first_span() {
        errors.push(
            darling::Error::custom(
                "on an impl block, put action options on each method: `#[action(read_only)]`",
            )
            .with_span(&span),
        );
    }
    // Neither shape gets its methods checked or stubs generated: the fix is elsewhere.
    if let Some((path, _)) = &block.trait_ {
        errors.push(
            darling::Error::custom("#[tool] goes on an inherent impl block, not a trait impl")
                .with_span(path),
        );
        return None;
    }
    if let Some(param) = block.generics.params.first() {
        errors.push(
            darling::Error::custom(
                "a tool's impl block cannot be generic: implement the tool for one concrete type",
            )
            .with_span(param),
        );
        return None;
    }
    let self_ident = match &*block.self_ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    };
    let Some(self_ident) = self_ident else {
        errors.push(
            darling::Error::custom("#[tool] goes on `impl SomeType { .. }`")
                .with_span(&block.self_ty),
        );
        return None;
    };
    let name = args.name.as_ref().map_or_else(
        || snake_case(&self_ident.to_string()),
        |n| n.as_ref().clone(),
    );
    let name_span = args
        .name
        .as_ref()
        .map_or_else(|| self_ident.span(), |n| n.span());
    validate::tool_name(&name, name_span, errors);
    // Before the methods', so that its mistakes are reported in the order they are written.
    let tool_scopes = scopes(args.scopes.as_ref(), errors);
    let mut actions = Vec::new();
    for item in &mut block.items {
        let syn::ImplItem::Fn(method) = item else {
            continue;
        };
        let mut options = ActionArgs::default();
        let mut seen = false;
        method.attrs.retain(|attr| {
            if !attr.path().is_ident("action") {
                return true;
            }
            if seen {
                errors.push(
                    darling::Error::custom("an action takes one `#[action(..)]`; merge them")
                        .with_span(attr),
                );
            } else if matches!(attr.meta, syn::Meta::Path(_)) {
                // A bare `#[action]`: the defaults.
            } else if let Some(parsed) = errors.handle(ActionArgs::from_meta(&attr.meta)) {
                options = parsed;
            }
            seen = true;
            false
        });
        let action_name = options
            .name
            .as_ref()
            .map_or_else(|| method.sig.ident.to_string(), |n| n.as_ref().clone());
        let name_span = options
            .name
            .as_ref()
            .map_or_else(|| method.sig.ident.span(), |n| n.span());
        let description = docs::description(&method.attrs);
        if description.is_none() {
            errors.push(undescribed("action", "the method").with_span(&method.sig.ident));
        }
        let rate = rate_limit(options.rate_limit.as_ref(), errors);
        let action_scopes = scopes(options.scopes.as_ref(), errors);
        let open_for_all = args.action.open_arguments.is_present();
        let output_for_all = args.action.output_schema.is_present();
        if let Some(mut action) = action(
            &method.sig,
            action_name,
            name_span,
            description,
            options.options,
            errors,
        ) {
            action.rate_limit = rate;
            action.scopes = action_scopes;
            action.open_arguments |= open_for_all;
            if output_for_all && action.output.is_none() {
                action.output = ok_type(&method.sig.output, errors);
            }
            actions.push(action);
        }
    }
    if actions.is_empty()
        && block
            .items
            .iter()
            .all(|i| !matches!(i, syn::ImplItem::Fn(_)))
    {
        errors.push(
            darling::Error::custom("this tool has no actions: add an async method per action")
                .with_span(&block.self_ty),
        );
    }
    let description = args
        .description
        .as_ref()
        .map(|d| quote!(#d))
        .or_else(|| docs::description(&block.attrs));
    if description.is_none() {
        errors.push(undescribed("tool", "the impl block").with_span(&block.self_ty));
    }
    let tool = Tool {
        krate: Krate::new(args.krate),
        name,
        description,
        title: args.action.title.clone(),
        discriminator: args
            .discriminator
            .as_ref()
            .map(|d| (d.as_ref().clone(), d.span())),
        concurrency: limits(args.concurrency.as_ref()),
        rate_limit: rate_limit(args.rate_limit.as_ref(), errors),
        scopes: tool_scopes,
        flat: exposition(args.exposition.as_ref(), errors),
        actions_ident: format_ident!("{self_ident}Actions"),
        self_ident,
        shape: Shape::Group,
        actions,
    };
    validate::tool(&tool, errors);
    Some(tool)
}

/// One action from its signature and options. Signature mistakes are recorded; the action is
/// still returned when its name is known, so that the stubs stay complete.
fn action(
    sig: &syn::Signature,
    name: String,
    name_span: Span,
    description: Option<TokenStream>,
    options: ActionOptions,
    errors: &mut darling::error::Accumulator,
) -> Option<Action> {
    let params = validate::signature(sig, errors);
    if let (true, true) = (
        options.read_only.is_present(),
        options.destructive.is_present(),
    ) {
        errors.push(
            darling::Error::custom(
                "an action is `read_only` or `destructive`, not both: a read-only action changes nothing; keep the one that is true",
            )
            .with_span(&options.destructive.span()),
        );
    }
    if let Some(ty) = params.args.as_ref().filter(|ty| is_option(ty)) {
        errors.push(
            darling::Error::custom(
                "the arguments are one struct, not an `Option`: a call always sends an object (`{}` at least); make the struct's fields optional instead (`Option<T>` fields, or `#[serde(default)]`)",
            )
            .with_span(ty),
        );
    }
    let timeout_ms = duration_ms(options.timeout.as_ref(), "timeout", errors);
    let heartbeat_ms = duration_ms(options.heartbeat.as_ref(), "heartbeat", errors);
    let deprecated = match (&options.deprecated, options.replacement) {
        (None, None) => None,
        (deprecated, replacement) => Some(Deprecated {
            note: deprecated.as_ref().and_then(|d| match d.as_ref() {
                darling::util::Override::Explicit(note) => Some(note.clone()),
                darling::util::Override::Inherit => None,
            }),
            replacement,
        }),
    };
    Some(Action {
        method: sig.ident.clone(),
        name,
        name_span,
        description,
        receiver: params.receiver,
        args: params.args,
        context: params.context,
        context_first: params.context_first,
        output_span: match &sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => sig.paren_token.span.close(),
        },
        ok_span: ok_span(&sig.output),
        read_only: options.read_only.is_present(),
        destructive: options.destructive.is_present(),
        idempotent: options.idempotent.is_present(),
        open_world: options.open_world.is_present(),
        deprecated,
        timeout_ms,
        heartbeat_ms,
        concurrency: options.concurrency.map(|c| (c.max_active, c.max_queued)),
        rate_limit: None,
        scopes: Vec::new(),
        open_arguments: options.open_arguments.is_present(),
        title: options.title,
        output: match options.output_schema.is_present() {
            true => ok_type(&sig.output, errors),
            false => None,
        },
        user_fields: user_fields(options.ask_user.as_ref(), errors),
        needs: options.needs.as_ref().map(needs).unwrap_or_default(),
        headers: headers(options.header.as_ref(), errors),
        task: super::task::task_mode(options.task.as_ref(), options.task_after.as_ref(), errors),
    })
}

/// `needs(sampling, elicitation, roots)`: the variants of `Ask` they name.
fn needs(needs: &super::args::NeedsArgs) -> Vec<&'static str> {
    [
        (needs.sampling.is_present(), "Model"),
        (needs.elicitation.is_present(), "User"),
        (needs.roots.is_present(), "Roots"),
    ]
    .into_iter()
    .filter_map(|(given, ask)| given.then_some(ask))
    .collect()
}

/// `header(region = "Region")`: each field, as the schema names it, with its header's name.
/// An empty list and items that are not `field = "Name"` are reported here; `validate` checks
/// the names.
fn headers(
    written: Option<&args::HeaderArgs>,
    errors: &mut darling::error::Accumulator,
) -> Vec<super::model::Header> {
    const HINT: &str = "map each field to its header, as `header(region = \"Region\")` (the field as serde reads it: `tenantId` when renamed, `r#type` for a keyword)";
    let Some(written) = written else {
        return Vec::new();
    };
    if written.items.is_empty() {
        errors.push(
            darling::Error::custom(format!("`header()` names no field: {HINT}"))
                .with_span(&written.span),
        );
    }
    let mut headers = Vec::new();
    for item in &written.items {
        let pair = match item {
            darling::ast::NestedMeta::Meta(syn::Meta::NameValue(pair)) => pair,
            other => {
                errors.push(
                    darling::Error::custom(format!("not `field = \"Header\"`: {HINT}"))
                        .with_span(other),
                );
                continue;
            }
        };
        let Some(field) = pair.path.get_ident() else {
            errors.push(
                darling::Error::custom(format!("not a field's name: {HINT}")).with_span(&pair.path),
            );
            continue;
        };
        let name = match &pair.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(name),
                ..
            }) => name,
            other => {
                errors.push(
                    darling::Error::custom(format!("a header is named by a string: {HINT}"))
                        .with_span(other),
                );
                continue;
            }
        };
        let field_name = field.to_string();
        headers.push(super::model::Header {
            field: field_name
                .strip_prefix("r#")
                .unwrap_or(&field_name)
                .to_owned(),
            field_span: field.span(),
            name: name.value(),
            name_span: name.span(),
        });
    }
    headers
}

/// `ask_user(confirm, "accountId")`: each field's name, as the schema names it, with where it
/// is written. An empty list and items that are neither a name nor a string are reported here;
/// `validate` checks the names against each other and the action.
fn user_fields(
    written: Option<&args::AskUserArgs>,
    errors: &mut darling::error::Accumulator,
) -> Vec<(String, Span)> {
    const HINT: &str = "name each field the user gives, as `ask_user(confirm)`, or as serde reads it when renamed, `ask_user(\"confirmDelete\")`";
    let Some(written) = written else {
        return Vec::new();
    };
    if written.items.is_empty() {
        errors.push(
            darling::Error::custom(format!("`ask_user()` names no field: {HINT}"))
                .with_span(&written.span),
        );
    }
    written
        .items
        .iter()
        .filter_map(|item| match item {
            darling::ast::NestedMeta::Meta(syn::Meta::Path(path)) if path.get_ident().is_some() => {
                let ident = path.get_ident()?;
                let name = ident.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
                Some((name, ident.span()))
            }
            darling::ast::NestedMeta::Lit(syn::Lit::Str(name)) if !name.value().is_empty() => {
                Some((name.value(), name.span()))
            }
            other => {
                errors.push(
                    darling::Error::custom(format!("not a field's name: {HINT}")).with_span(other),
                );
                None
            }
        })
        .collect()
}

/// `T` of a return type written `Result<T, E>` (any path ending in `Result`), for
/// `output_schema`; an error on the return type when it is written otherwise.
fn ok_type(
    output: &syn::ReturnType,
    errors: &mut darling::error::Accumulator,
) -> Option<syn::Type> {
    let found = match output {
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Path(p) => p
                .path
                .segments
                .last()
                .and_then(|last| match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) if last.ident == "Result" => {
                        args.args.iter().find_map(|arg| match arg {
                            syn::GenericArgument::Type(ty) => Some(ty.clone()),
                            _ => None,
                        })
                    }
                    _ => None,
                }),
            _ => None,
        },
        syn::ReturnType::Default => None,
    };
    if found.is_none() {
        let at = match output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => Span::call_site(),
        };
        errors.push(
            darling::Error::custom(
                "`output_schema` lists the schema of the success type: return `Result<T, E>` with `T: serde::Serialize + schemars::JsonSchema`",
            )
            .with_span(&at),
        );
    }
    found
}

/// A duration option in milliseconds, or an error on it.
fn duration_ms(
    written: Option<&darling::util::SpannedValue<args::DurationText>>,
    what: &str,
    errors: &mut darling::error::Accumulator,
) -> Option<u64> {
    let written = written?;
    let ms = parse_duration(&written.as_ref().0);
    if ms.is_none() {
        errors.push(
            darling::Error::custom(format!("invalid {what}: {DURATION_HINT}"))
                .with_span(&written.span()),
        );
    }
    ms
}

/// `Option<T>`, however its path is written (`std::option::Option<T>`).
fn is_option(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().is_some_and(|last| {
            last.ident == "Option"
                && matches!(last.arguments, syn::PathArguments::AngleBracketed(_))
        }),
        syn::Type::Paren(inner) => is_option(&inner.elem),
        syn::Type::Group(inner) => is_option(&inner.elem),
        _ => false,
    }
}

/// `exposition = "flat" | "grouped"`.
fn exposition(
    exposition: Option<&darling::util::SpannedValue<String>>,
    errors: &mut darling::error::Accumulator,
) -> Option<bool> {
    let exposition = exposition?;
    match exposition.as_str() {
        "flat" => Some(true),
        "grouped" => Some(false),
        other => {
            errors.push(crate::common::diag::unknown(
                "exposition",
                other,
                &["flat", "grouped"],
                exposition.span(),
            ));
            None
        }
    }
}

/// The span of `T` in a return type written `Result<T, E>` (any path ending in `Result`).
fn ok_span(output: &syn::ReturnType) -> Span {
    let syn::ReturnType::Type(_, ty) = output else {
        return Span::call_site();
    };
    let first_arg = match &**ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .and_then(|last| match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => args.args.first().map(Spanned::span),
                _ => None,
            }),
        _ => None,
    };
    first_arg.unwrap_or_else(|| ty.span())
}

fn limits(
    concurrency: Option<&darling::util::SpannedValue<args::ConcurrencyArgs>>,
) -> Option<(usize, usize)> {
    concurrency.map(|c| (c.max_active, c.max_queued))
}

fn rate_limit(
    limit: Option<&args::RateLimitArgs>,
    errors: &mut darling::error::Accumulator,
) -> Option<(u64, u64)> {
    let limit = limit?;
    if *limit.max == 0 {
        errors.push(
            darling::Error::custom("a rate limit allows at least one call")
                .with_span(&limit.max.span()),
        );
    }
    let Some(window) = parse_duration(&limit.window.as_ref().0) else {
        errors.push(
            darling::Error::custom(format!("invalid rate limit window: {DURATION_HINT}"))
                .with_span(&limit.window.span()),
        );
        return None;
    };
    Some((*limit.max, window))
}

/// `scopes("invoices:read", ..)`: each scope with where it is written. An empty list and items
/// that are not string literals are reported here; `validate` checks the scopes themselves.
fn scopes(
    written: Option<&args::ScopesArgs>,
    errors: &mut darling::error::Accumulator,
) -> Vec<(String, Span)> {
    let Some(written) = written else {
        return Vec::new();
    };
    if written.items.is_empty() {
        errors.push(
            darling::Error::custom(format!(
                "`scopes()` lists no scope: {SCOPE_HINT}, or drop `scopes()`"
            ))
            .with_span(&written.span),
        );
    }
    written
        .items
        .iter()
        .filter_map(|item| match item {
            darling::ast::NestedMeta::Lit(syn::Lit::Str(scope)) => {
                Some((scope.value(), scope.span()))
            }
            other => {
                errors.push(
                    darling::Error::custom(format!("a scope is a string literal: {SCOPE_HINT}"))
                        .with_span(other),
                );
                None
            }
        })
        .collect()
}

/// The error of a tool or action without a description: the model would see only its name.
fn undescribed(what: &str, on: &str) -> darling::Error {
    let or = match what {
        "tool" => " or `#[tool(description = \"...\")]`",
        _ => "",
    };
    darling::Error::custom(format!(
        "this {what} has no description, so the model would see only its name: write a doc comment on {on} (`/// What it does.`){or}"
    ))
}
