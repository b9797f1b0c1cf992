use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize)]
enum Plan {
    Free,
    Pro,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Upgrade {
    plan: Plan,
}

fn main() {}
