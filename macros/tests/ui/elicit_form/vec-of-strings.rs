use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Tagging {
    tags: Vec<String>,
}

fn main() {}
