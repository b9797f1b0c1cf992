use mcp_fusion::{Tool, ToolError, ToolErrors, tool};

pub struct Billing;

/// A tool.
#[tool]
impl Billing {
    /// Lists invoices.
    fn list_invoices(&self) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

// Uses of the tool: the macro's stubs keep them from adding errors of their own.
#[derive(Debug, ToolErrors)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", actions(Billing::list_invoices))]
    InvoiceNotFound { id: String },
}

fn main() {
    let _ = Billing.definition();
    let _ = Billing::ACTIONS.list_invoices;
    let _ = ToolError::from(BillingError::InvoiceNotFound { id: "inv_9".into() });
}
