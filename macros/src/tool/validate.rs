//! Checks of a tool: signatures (async, no generics, receiver, parameters) and the tool as a
//! whole (duplicate action names, replacements that exist, OAuth scopes).

use quote::ToTokens;
use syn::spanned::Spanned;

use super::model::Tool;
use mcp_fusion_rules::names::{header_name_problem, tool_name_problem};
use mcp_fusion_rules::scope::is_scope_token;

use crate::common::diag::SCOPE_HINT;

/// What a signature's parameters are, once checked.
pub(super) struct Params {
    pub(super) receiver: bool,
    pub(super) args: Option<syn::Type>,
    pub(super) context: Option<syn::Type>,
    /// The context is declared before the arguments.
    pub(super) context_first: bool,
}

pub(super) fn signature(sig: &syn::Signature, errors: &mut darling::error::Accumulator) -> Params {
    if sig.asyncness.is_none() {
        errors.push(
            darling::Error::custom("actions are async: write `async fn`").with_span(&sig.fn_token),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(
            darling::Error::custom(
                "an action cannot be generic: its arguments are one concrete type",
            )
            .with_span(&sig.generics),
        );
    }
    let mut params = Params {
        receiver: false,
        args: None,
        context: None,
        context_first: false,
    };
    let mut typed = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(receiver) => {
                let shared = matches!(&receiver.kind, syn::ReceiverKind::Reference(_, _, None))
                    && receiver.mutability.is_none();
                if !shared {
                    errors.push(
                        darling::Error::custom(
                            "an action takes `&self` (shared by concurrent calls) or no receiver",
                        )
                        .with_span(&receiver.self_token),
                    );
                }
                params.receiver = true;
            }
            syn::FnArg::Typed(pat) => typed.push(pat),
        }
    }
    // The arguments and the context, in either order: the context is the `Context` parameter.
    params.context_first = typed.first().is_some_and(|p| is_context(&p.ty)) && typed.len() > 1;
    let (contexts, others): (Vec<_>, Vec<_>) = typed.into_iter().partition(|p| is_context(&p.ty));
    let mut others = others.into_iter();
    let args = others.next();
    params.args = args.map(|p| (*p.ty).clone());
    if let Some(args) = args
        && let Some(kind) = not_an_object(&args.ty)
    {
        let field = match &*args.pat {
            syn::Pat::Ident(ident) => ident.ident.to_string(),
            _ => "value".to_owned(),
        };
        let ty = args.ty.to_token_stream().to_string().replace(' ', "");
        let name = format!(
            "{}Args",
            mcp_fusion_rules::case::upper_camel(&sig.ident.to_string())
        );
        errors.push(
            darling::Error::custom(format!(
                "the arguments are one struct of named fields (a call sends a JSON object), not {kind} (`{ty}`): write `#[derive(Deserialize, JsonSchema)] struct {name} {{ {field}: {ty} }}` and take `args: {name}`"
            ))
            .with_span(&args.ty),
        );
    }
    if let Some(second) = others.next() {
        errors.push(
            darling::Error::custom(
                "an action takes one arguments struct: put these fields in the first one, and take the context as `f: Context` if needed",
            )
            .with_span(&second.ty),
        );
    }
    let mut contexts = contexts.into_iter();
    params.context = contexts.next().map(|p| (*p.ty).clone());
    for extra in contexts.chain(others) {
        errors.push(
            darling::Error::custom("an action takes at most two parameters: its arguments and its context `f: Context`")
                .with_span(&extra.span()),
        );
    }
    if let Some(ty) = params.args.as_ref().filter(|ty| borrows(ty)) {
        errors.push(
            darling::Error::custom(
                "the arguments are decoded from each call's JSON into a value the action owns: use owned types (`String`, not `&str`) and no lifetime parameters",
            )
            .with_span(ty),
        );
    }
    params
}

/// What a type the arguments cannot be is, when it is plainly not a struct of named fields: a
/// primitive, a `String`, a sequence or a tuple (JSON would send a scalar or an array, never
/// the object a call carries).
fn not_an_object(ty: &syn::Type) -> Option<&'static str> {
    const SCALARS: &[&str] = &[
        "bool", "char", "str", "String", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize",
        "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            let scalar = SCALARS.contains(&name.as_str());
            match (scalar && last.arguments.is_empty(), name.as_str()) {
                (true, _) => Some("a single value"),
                (false, "Vec" | "VecDeque" | "HashSet" | "BTreeSet") => Some("a sequence"),
                _ => None,
            }
        }
        syn::Type::Tuple(_) => Some("a tuple"),
        syn::Type::Array(_) | syn::Type::Slice(_) => Some("a sequence"),
        syn::Type::Paren(p) => not_an_object(&p.elem),
        syn::Type::Group(g) => not_an_object(&g.elem),
        _ => None,
    }
}

/// `Context`, however its path is written (`mcp_fusion::Context`).
fn is_context(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Context" && s.arguments.is_empty()))
}

/// Whether a type borrows: a reference, or a lifetime among its generic arguments.
fn borrows(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(_) => true,
        syn::Type::Path(p) => p
            .path
            .segments
            .iter()
            .any(|segment| match &segment.arguments {
                syn::PathArguments::AngleBracketed(args) => args.args.iter().any(|arg| match arg {
                    syn::GenericArgument::Lifetime(_) => true,
                    syn::GenericArgument::Type(inner) => borrows(inner),
                    _ => false,
                }),
                _ => false,
            }),
        syn::Type::Tuple(t) => t.elems.iter().any(borrows),
        syn::Type::Array(a) => borrows(&a.elem),
        syn::Type::Slice(_) => true,
        syn::Type::Paren(p) => borrows(&p.elem),
        syn::Type::Group(g) => borrows(&g.elem),
        _ => false,
    }
}

pub(super) fn tool(tool: &Tool, errors: &mut darling::error::Accumulator) {
    scopes(&tool.scopes, errors);
    headers_alike(tool, errors);
    flat_names(tool, errors);
    for (i, action) in tool.actions.iter().enumerate() {
        scopes(&action.scopes, errors);
        user_fields(action, errors);
        headers(action, errors);
        if let Some(first) = tool.actions[..i].iter().find(|a| a.name == action.name) {
            errors.push(
                darling::Error::custom(format!(
                    "duplicate action \"{}\": `{}` already has this name; rename one with `#[action(name = \"...\")]`",
                    action.name, first.method
                ))
                .with_span(&action.name_span),
            );
        }
        if action.name.is_empty()
            || action
                .name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            errors.push(
                darling::Error::custom(
                    "an action name is non-empty and has no spaces, such as \"list_invoices\"",
                )
                .with_span(&action.name_span),
            );
        }
        let own_prefix = format!("{}.", tool.name);
        if matches!(tool.shape, super::model::Shape::Group) && action.name.starts_with(&own_prefix)
        {
            let bare = &action.name[own_prefix.len()..];
            errors.push(
                darling::Error::custom(format!(
                    "name the action without its tool: `name = \"{bare}\"` (the model calls it as \"{}.{bare}\" or \"{bare}\"; this name would be \"{}.{}\")",
                    tool.name, tool.name, action.name
                ))
                .with_span(&action.name_span),
            );
        }
        if let Some(replacement) = action
            .deprecated
            .as_ref()
            .and_then(|d| d.replacement.as_ref())
        {
            let name = replacement.to_string();
            let known: Vec<&str> = tool.actions.iter().map(|a| a.name.as_str()).collect();
            if name == action.name {
                errors.push(
                    darling::Error::custom(format!(
                        "\"{name}\" cannot replace itself: name the action to use instead, or drop `replacement`"
                    ))
                    .with_span(&replacement.span()),
                );
            } else if !known.contains(&name.as_str()) {
                errors.push(crate::common::diag::unknown(
                    "replacement",
                    &name,
                    &known,
                    replacement.span(),
                ));
            }
        }
    }
    if let Some((_, span)) = tool.discriminator.as_ref().filter(|(d, _)| d.is_empty()) {
        errors.push(
            darling::Error::custom("the discriminator is a field name, such as \"action\"")
                .with_span(span),
        );
    }
}

/// `ask_user(..)`: each field once, and only on an action that takes arguments. Whether each is
/// an optional field of the arguments a form can show is checked against their schema when the
/// definition is built (a server refuses to build otherwise): a field's Rust name is not the
/// name serde reads once renamed, and the arguments' fields may be private to their module.
fn user_fields(action: &super::model::Action, errors: &mut darling::error::Accumulator) {
    for (i, (name, span)) in action.user_fields.iter().enumerate() {
        if action.args.is_none() {
            errors.push(
                darling::Error::custom(format!(
                    "this action takes no arguments, so it has no field \"{name}\" to ask the user for: take an arguments struct with an optional field (`{name}: Option<bool>`)"
                ))
                .with_span(span),
            );
        } else if action.user_fields[..i]
            .iter()
            .any(|(earlier, _)| earlier == name)
        {
            errors.push(
                darling::Error::custom(format!(
                    "\"{name}\" is already in this list: name each field once"
                ))
                .with_span(span),
            );
        }
    }
}

/// A tool's name: `^[A-Za-z0-9_.-]{1,128}$`, the names clients accept.
pub(super) fn tool_name(
    name: &str,
    span: proc_macro2::Span,
    errors: &mut darling::error::Accumulator,
) {
    if let Some(why) = tool_name_problem(name) {
        errors.push(
            darling::Error::custom(format!(
                "the tool name {name:?} {why}, and clients accept only tool names of letters, digits, '_', '.' and '-', at most 128 (^[A-Za-z0-9_.-]{{1,128}}$): rename it, `#[tool(name = \"...\")]`"
            ))
            .with_span(&span),
        );
    }
}

/// In a flat tool, each action's MCP tool name, `{tool}_{action}`, a name clients accept.
fn flat_names(tool: &Tool, errors: &mut darling::error::Accumulator) {
    if tool.flat != Some(true) || tool_name_problem(&tool.name).is_some() {
        return;
    }
    for action in &tool.actions {
        let listed = format!("{}_{}", tool.name, action.name);
        // An empty name or one with a space is reported as such (`tool`).
        let reported = action.name.is_empty()
            || (action.name.chars()).any(|c| c.is_whitespace() || c.is_control());
        if let Some(why) = tool_name_problem(&listed).filter(|_| !reported) {
            errors.push(
                darling::Error::custom(format!(
                    "served flat, this action is the MCP tool {listed:?}, whose name {why}, and clients accept only tool names of ^[A-Za-z0-9_.-]{{1,128}}$: rename the action, `#[action(name = \"...\")]`"
                ))
                .with_span(&action.name_span),
            );
        }
    }
}

/// `header(..)`: each field once, each header a valid name once (case-insensitively), and only
/// on an action that takes arguments. Whether each field is one of the arguments, of a type a
/// header carries, is checked against their schema when the server is built.
fn headers(action: &super::model::Action, errors: &mut darling::error::Accumulator) {
    for (i, header) in action.headers.iter().enumerate() {
        let earlier = &action.headers[..i];
        let (field, name) = (&header.field, &header.name);
        if action.args.is_none() {
            errors.push(
                darling::Error::custom(format!(
                    "this action takes no arguments, so it has no field \"{field}\" to mirror in a header: take an arguments struct with the field (`{field}: String`)"
                ))
                .with_span(&header.field_span),
            );
        } else if earlier.iter().any(|e| e.field == *field) {
            errors.push(
                darling::Error::custom(format!(
                    "\"{field}\" is already in this list: mirror each field in one header"
                ))
                .with_span(&header.field_span),
            );
        }
        if let Some(why) = header_name_problem(name) {
            errors.push(
                darling::Error::custom(format!(
                    "{name:?} is no header name: it {why}; name it with letters, digits and '-', as \"Region\" or \"Tenant-Id\""
                ))
                .with_span(&header.name_span),
            );
        } else if let Some(other) = earlier.iter().find(|e| e.name.eq_ignore_ascii_case(name)) {
            errors.push(
                darling::Error::custom(format!(
                    "the field \"{}\" is already mirrored in \"{}\", the same header (header names are case-insensitive): give each field a header of its own",
                    other.field, other.name
                ))
                .with_span(&header.name_span),
            );
        }
    }
}

/// In a tool whose actions are one MCP tool (grouped, unless `exposition = "flat"`), a field
/// two actions mirror in different headers: the tool would list it as alternatives, which
/// clients refuse. Whether every action that has the field mirrors it is checked when the
/// server is built (the macro does not see the arguments' fields).
fn headers_alike(tool: &Tool, errors: &mut darling::error::Accumulator) {
    if tool.flat == Some(true) {
        return;
    }
    let mut seen: Vec<(&str, &super::model::Header)> = Vec::new();
    // Each action's own mistakes are its own (`headers`): without arguments, a bad name.
    let actions = tool.actions.iter().filter(|a| a.args.is_some());
    for action in actions {
        let valid = action
            .headers
            .iter()
            .filter(|h| header_name_problem(&h.name).is_none());
        for header in valid {
            let earlier = seen.iter().filter(|(name, _)| *name != action.name);
            match earlier.clone().find(|(_, h)| h.field == header.field) {
                Some((first, h)) if h.name != header.name => errors.push(
                    darling::Error::custom(format!(
                        "the action \"{first}\" mirrors the field \"{}\" in the header \"{}\": in a grouped tool every action declares the field alike; use \"{}\" here too, or serve the tool flat (`#[tool(exposition = \"flat\")]`)",
                        header.field, h.name, h.name
                    ))
                    .with_span(&header.name_span),
                ),
                Some(_) => {}
                None if seen.iter().any(|(_, h)| h.field == header.field) => {}
                None => seen.push((&action.name, header)),
            }
        }
    }
}

/// One `scopes(..)` list: each an RFC 6749 §3.3 scope-token, each once.
fn scopes(scopes: &[(String, proc_macro2::Span)], errors: &mut darling::error::Accumulator) {
    for (i, (scope, span)) in scopes.iter().enumerate() {
        if !is_scope_token(scope) {
            errors.push(
                darling::Error::custom(format!(
                    "{scope:?} is not an OAuth scope (RFC 6749 §3.3: one or more printable ASCII characters, no space, no '\"' and no '\\'): {SCOPE_HINT}"
                ))
                .with_span(span),
            );
        } else if scopes[..i].iter().any(|(earlier, _)| earlier == scope) {
            errors.push(
                darling::Error::custom(format!(
                    "{scope:?} is already in this list: write each scope once"
                ))
                .with_span(span),
            );
        }
    }
}
