use mcp_fusion::tools::{ElicitChoice, ElicitForm};

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {
    Free,
    Pro,
}

#[derive(serde::Deserialize, ElicitChoice)]
enum Color {
    Red,
    Blue,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Upgrade {
    #[form(default = Color::Red)]
    plan: Plan,
}

fn main() {}
