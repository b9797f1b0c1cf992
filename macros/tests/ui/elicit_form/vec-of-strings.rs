use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Tagging {
    tags: Vec<String>,
}

fn main() {}
