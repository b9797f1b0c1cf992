use mcp_fusion::ElicitForm;

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
