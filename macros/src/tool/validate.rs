//! Checks of a tool: signatures (async, no generics, receiver, parameters) and the tool as a
//! whole (duplicate action names, replacements that exist).

use syn::spanned::Spanned;

use super::model::Tool;

/// What a signature's parameters are, once checked.
pub(super) struct Params {
    pub(super) receiver: bool,
    pub(super) args: Option<syn::Type>,
    pub(super) context: Option<syn::Type>,
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
    let mut typed = typed.into_iter();
    params.args = typed.next().map(|p| (*p.ty).clone());
    params.context = typed.next().map(|p| (*p.ty).clone());
    for extra in typed {
        errors.push(
            darling::Error::custom("an action takes at most two parameters: its arguments, then its context `f: Context`")
                .with_span(&extra.span()),
        );
    }
    params
}

pub(super) fn tool(tool: &Tool, errors: &mut darling::error::Accumulator) {
    for (i, action) in tool.actions.iter().enumerate() {
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
