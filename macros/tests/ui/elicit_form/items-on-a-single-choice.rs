use mcp_fusion::tools::{ElicitChoice, ElicitForm};

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {
    Free,
    Pro,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Upgrade {
    #[form(min_items = 1)]
    plan: Plan,
}

fn main() {}
