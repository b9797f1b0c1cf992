use mcp_fusion::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
struct Plan {
    name: String,
}

fn main() {}
