#![deny(warnings, missing_docs, unused_qualifications)]
//! Forms a new user writes that are accepted: a bare `#[action]`, the context before the
//! arguments, and an error type that is a plain `String` (sent as INTERNAL_ERROR, logged).

use mcp_fusion::{Context, Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of `get`.
#[derive(Deserialize, JsonSchema)]
pub struct Id {
    /// The invoice ID.
    pub id: String,
}

/// Invoices.
pub struct Billing;

/// Invoices.
#[tool]
impl Billing {
    /// Lists invoices.
    #[action]
    async fn list(&self) -> Result<u32, ToolError> {
        Ok(0)
    }

    /// Gets one invoice, the context first.
    async fn get(&self, f: Context, args: Id) -> Result<String, ToolError> {
        let _ = f.action();
        Ok(args.id)
    }

    /// Fails with a string: the model sees INTERNAL_ERROR, the log the string.
    async fn fail(&self) -> Result<String, String> {
        Err("the database is down".to_owned())
    }
}

fn main() {
    assert_eq!(Billing.definition().actions().len(), 3);
}
