use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
struct Plan {
    name: String,
}

fn main() {}
