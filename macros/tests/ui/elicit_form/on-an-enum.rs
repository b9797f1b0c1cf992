use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
enum Plan {
    Free,
    Pro,
}

fn main() {}
