//! `#[tool]`: on an async fn (a single-action tool) or on an impl block (one action per
//! method). Parse (`args`) → model with checks (`lower`, `validate`) → `codegen`. On any
//! mistake the item is still emitted, with its helper attributes stripped, next to the errors
//! and stub impls, so that uses of the tool add no errors of their own.

mod args;
mod codegen;
mod lower;
mod model;
mod task;
mod validate;

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;

use args::ToolArgs;
use lower::{group, single};

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let args = errors
        .handle(
            NestedMeta::parse_meta_list(args)
                .map_err(darling::Error::from)
                .and_then(|list| ToolArgs::from_list(&list)),
        )
        .unwrap_or_default();
    let item = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let e = e.to_compile_error();
            return quote!(#item #e);
        }
    };
    let (item, tool) = match item {
        syn::Item::Fn(f) => {
            let tool = single(&f, args, &mut errors);
            (syn::Item::Fn(f), tool)
        }
        syn::Item::Impl(mut block) => {
            let tool = group(&mut block, args, &mut errors);
            (syn::Item::Impl(block), tool)
        }
        other => {
            errors.push(
                darling::Error::custom(
                    "#[tool] goes on an async fn (a tool with one action) or on an impl block whose async methods are the actions",
                )
                .with_span(&item_span(&other)),
            );
            (other, None)
        }
    };
    match (errors.finish(), tool) {
        (Ok(()), Some(tool)) => {
            let generated = codegen::expand(&tool);
            quote!(#item #generated)
        }
        (result, tool) => {
            let errors = result.err().map(darling::Error::write_errors);
            let stubs = tool.as_ref().map(codegen::fallback);
            quote!(#item #errors #stubs)
        }
    }
}

fn item_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Struct(s) => s.ident.span(),
        syn::Item::Enum(e) => e.ident.span(),
        syn::Item::Trait(t) => t.ident.span(),
        syn::Item::Mod(m) => m.ident.span(),
        other => other.span(),
    }
}

#[cfg(test)]
mod tests {
    use super::model::Tool;
    use super::*;
    use mcp_fusion_rules::case::{snake_case as snake, upper_camel};

    fn model(args: TokenStream, item: TokenStream) -> (Option<Tool>, usize) {
        let mut errors = darling::Error::accumulator();
        let args = NestedMeta::parse_meta_list(args)
            .and_then(|l| Ok(ToolArgs::from_list(&l)?))
            .unwrap();
        let tool = match syn::parse2::<syn::Item>(item).unwrap() {
            syn::Item::Fn(f) => single(&f, args, &mut errors),
            syn::Item::Impl(mut block) => group(&mut block, args, &mut errors),
            _ => None,
        };
        let count = errors.finish().err().map_or(0, |e| e.len());
        (tool, count)
    }

    #[test]
    fn names() {
        assert_eq!(upper_camel("get_weather"), "GetWeather");
        assert_eq!(snake("UserAdmin"), "user_admin");
        assert_eq!(snake("Billing"), "billing");
    }

    #[test]
    fn impl_block_actions_and_options() {
        let (tool, errors) = model(
            quote!(
                discriminator = "op",
                concurrency(max_active = 2, max_queued = 3),
                rate_limit(max = 10, window = "1m")
            ),
            quote! {
                /// Invoices.
                impl Billing {
                    /// Lists invoices.
                    #[action(read_only, timeout = "5s")]
                    async fn list_invoices(&self, args: ListArgs, f: Context) -> Result<(), E> { todo!() }
                    /// Voids one.
                    #[action(name = "void", deprecated = "Old.", replacement = list_invoices,
                             rate_limit(max = 3, window = "1h"))]
                    async fn void_invoice(&self) -> Result<(), E> { todo!() }
                }
            },
        );
        assert_eq!(errors, 0);
        let tool = tool.unwrap();
        assert_eq!(tool.name, "billing");
        assert_eq!(
            tool.discriminator.as_ref().map(|(d, _)| d.as_str()),
            Some("op")
        );
        assert_eq!(tool.concurrency, Some((2, 3)));
        assert_eq!(tool.rate_limit, Some((10, 60_000)));
        let names: Vec<&str> = tool.actions.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["list_invoices", "void"]);
        assert!(tool.actions[0].read_only && tool.actions[0].receiver);
        assert_eq!(tool.actions[0].timeout_ms, Some(5_000));
        assert!(tool.actions[0].args.is_some() && tool.actions[0].context.is_some());
        let deprecated = tool.actions[1].deprecated.as_ref().unwrap();
        assert_eq!(deprecated.note.as_deref(), Some("Old."));
        assert_eq!(tool.actions[0].rate_limit, None);
        assert_eq!(tool.actions[1].rate_limit, Some((3, 3_600_000)));
    }

    fn scopes(list: &[(String, Span)]) -> Vec<&str> {
        list.iter().map(|(scope, _)| scope.as_str()).collect()
    }

    #[test]
    fn scopes_of_the_tool_and_of_each_action() {
        let (tool, errors) = model(
            quote!(scopes("invoices:read")),
            quote! {
                /// Invoices.
                impl Billing {
                    /// Lists invoices.
                    async fn list_invoices(&self) -> Result<(), E> { todo!() }
                    /// Voids one.
                    #[action(scopes("invoices:write", "invoices:admin"))]
                    async fn void_invoice(&self) -> Result<(), E> { todo!() }
                }
            },
        );
        assert_eq!(errors, 0);
        let tool = tool.unwrap();
        assert_eq!(scopes(&tool.scopes), ["invoices:read"]);
        assert!(tool.actions[0].scopes.is_empty());
        assert_eq!(
            scopes(&tool.actions[1].scopes),
            ["invoices:write", "invoices:admin"]
        );
        let generated = codegen::expand(&tool).to_string();
        assert!(
            generated.contains(r#". scopes (["invoices:read"])"#),
            "{generated}"
        );
        assert!(
            generated.contains(r#". scopes (["invoices:write" , "invoices:admin"])"#),
            "{generated}"
        );

        let (tool, errors) = model(
            quote!(read_only, scopes("weather:read")),
            quote! {
                /// Current weather.
                async fn get_weather(args: City) -> Result<(), E> { todo!() }
            },
        );
        assert_eq!(errors, 0);
        let tool = tool.unwrap();
        assert_eq!(scopes(&tool.scopes), ["weather:read"]);
        assert!(tool.actions[0].scopes.is_empty());
    }

    #[test]
    fn scope_mistakes_accumulate() {
        let (_, errors) = model(
            quote!(scopes()),
            quote! {
                /// Invoices.
                impl Billing {
                    /// Voids one.
                    #[action(scopes(invoices_write, 42, "invoices:write invoices:admin", "", "a\\b",
                                    "invoices:read", "invoices:read"))]
                    async fn void_invoice(&self) -> Result<(), E> { todo!() }
                }
            },
        );
        // The empty list, two items that are not strings, three that are not scope tokens,
        // the duplicate.
        assert_eq!(errors, 7);

        let list = NestedMeta::parse_meta_list(quote!(scopes = "invoices:read")).unwrap();
        let error = ToolArgs::from_list(&list).err().unwrap();
        assert!(
            error.to_string().contains("`scopes` is a list of strings"),
            "{error}"
        );
    }

    #[test]
    fn fields_only_the_user_can_give() {
        let (tool, errors) = model(
            quote!(),
            quote! {
                /// Notes.
                impl Notes {
                    /// Deletes one.
                    #[action(destructive, ask_user(confirm, "accountId", r#type))]
                    async fn delete(&self, args: Delete) -> Result<(), E> { todo!() }
                }
            },
        );
        assert_eq!(errors, 0);
        let tool = tool.unwrap();
        let names: Vec<&str> = tool.actions[0]
            .user_fields
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(names, ["confirm", "accountId", "type"]);

        let (_, errors) = model(
            quote!(ask_user(confirm)),
            quote! {
                /// Notes.
                impl Notes {
                    /// Lists them.
                    #[action(ask_user(confirm))]
                    async fn list(&self) -> Result<(), E> { todo!() }
                    /// Deletes one.
                    #[action(ask_user(), ask_user = confirm)]
                    async fn delete(&self, args: Delete) -> Result<(), E> { todo!() }
                    /// Archives one.
                    #[action(ask_user(confirm, 3, "", confirm, a::b))]
                    async fn archive(&self, args: Archive) -> Result<(), E> { todo!() }
                }
            },
        );
        // On the impl block; an action without arguments; `ask_user = ..` (not a list; darling
        // reports it before the empty list); a number, an empty string, a path; the duplicate.
        assert_eq!(errors, 7);
    }

    #[test]
    fn fields_mirrored_in_headers() {
        let (tool, errors) = model(
            quote!(),
            quote! {
                /// Operations.
                impl Ops {
                    /// Deploys.
                    #[action(header(region = "Region", r#type = "Kind"))]
                    async fn deploy(&self, args: Deploy) -> Result<(), E> { todo!() }
                    /// Undeploys.
                    #[action(header(region = "Region"))]
                    async fn undeploy(&self, args: Deploy) -> Result<(), E> { todo!() }
                }
            },
        );
        assert_eq!(errors, 0);
        let tool = tool.unwrap();
        let headers: Vec<(&str, &str)> = (tool.actions[0].headers.iter())
            .map(|h| (h.field.as_str(), h.name.as_str()))
            .collect();
        assert_eq!(headers, [("region", "Region"), ("type", "Kind")]);

        let (_, errors) = model(
            quote!(header(region = "Region")),
            quote! {
                /// Operations.
                impl Ops {
                    /// Lists.
                    #[action(header(region = "Region"))]
                    async fn list(&self) -> Result<(), E> { todo!() }
                    /// Deploys.
                    #[action(header(region = "My Region", zone = "Zone", zone = "Other", x = "zone", y, w = 3))]
                    async fn deploy(&self, args: Deploy) -> Result<(), E> { todo!() }
                    /// Undeploys.
                    #[action(header(zone = "Place"))]
                    async fn undeploy(&self, args: Deploy) -> Result<(), E> { todo!() }
                }
            },
        );
        // On the impl block; an action without arguments; a bad name; a field twice; a header
        // twice; not a pair (`y`); not a string (`3`); `zone` unlike `deploy`'s (`Place`).
        assert_eq!(errors, 8);
    }

    #[test]
    fn mistakes_accumulate() {
        let (_, errors) = model(
            quote!(),
            quote! {
                /// Invoices.
                impl Billing {
                    /// Not async.
                    fn not_async(&self) -> Result<(), E> { todo!() }
                    /// Generic.
                    async fn generic<T>(&self) -> Result<(), E> { todo!() }
                    /// By value.
                    async fn by_value(self) -> Result<(), E> { todo!() }
                    /// Everything wrong.
                    #[action(timeout = "soon", replacement = nope)]
                    async fn not_async(&self, a: A, f: Context, extra: u8) -> Result<(), E> { todo!() }
                }
            },
        );
        // non-async, generics, receiver, bad timeout, unknown replacement, extra param, duplicate
        assert_eq!(errors, 7);
    }

    #[test]
    fn tools_and_actions_without_descriptions_are_errors() {
        let (_, errors) = model(
            quote!(),
            quote! {
                impl Billing {
                    /// Described.
                    async fn one(&self) -> Result<(), E> { todo!() }
                    async fn two(&self) -> Result<(), E> { todo!() }
                }
            },
        );
        // The tool, and `two`.
        assert_eq!(errors, 2);
    }
}
