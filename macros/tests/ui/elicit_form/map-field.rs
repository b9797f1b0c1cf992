use std::collections::HashMap;

use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Labels {
    labels: HashMap<String, String>,
}

fn main() {}
