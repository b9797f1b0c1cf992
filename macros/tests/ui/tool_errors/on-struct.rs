use mcp_fusion::ToolErrors;

#[derive(Debug, ToolErrors)]
pub struct InvoiceNotFound {
    pub id: String,
}

fn main() {}
