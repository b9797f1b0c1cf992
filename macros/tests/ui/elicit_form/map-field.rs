use std::collections::HashMap;

use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Labels {
    labels: HashMap<String, String>,
}

fn main() {}
