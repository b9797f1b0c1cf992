use mcp_fusion::{ToolError, tool};

pub struct Billing;

// Every mistake is reported at once: an empty list on the tool, then on the action a scope
// that is not a string, two scopes in one string, and the same scope twice.

/// A tool.
#[tool(scopes())]
impl Billing {
    /// Voids an invoice.
    #[action(scopes(invoices_write, "invoices:write invoices:admin", "invoices:read", "invoices:read"))]
    async fn void_invoice(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {}
