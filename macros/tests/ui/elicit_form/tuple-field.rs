use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Position {
    at: (u32, u32),
}

fn main() {}
