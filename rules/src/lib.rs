//! The rules that both `mcp-fusion` and its procedural macros apply, written once, so that a
//! mistake the macros report at compile time is the same mistake the runtime reports at run
//! time.
//!
//! ```
//! use mcp_fusion_rules::{case, close, codes, names, scope};
//!
//! assert!(codes::is_canonical("NOT_FOUND"));
//! assert!(codes::is_valid_code("PAYMENT_DECLINED"));
//! assert!(scope::is_scope_token("invoices:read"));
//! assert!(names::is_tool_name("billing_list_invoices"));
//! assert_eq!(close::closest("lst", &["list", "create"]), Some("list"));
//! assert_eq!(case::upper_camel("list_invoices"), "ListInvoices");
//! ```
#![forbid(unsafe_code)]

pub mod case;
pub mod close;
pub mod codes;
pub mod names;
pub mod scope;
