use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
enum Plan {
    Free,
    Pro,
}

fn main() {}
