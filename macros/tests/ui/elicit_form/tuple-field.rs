use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Position {
    at: (u32, u32),
}

fn main() {}
