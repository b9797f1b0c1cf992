use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {
    Free,
    Team { seats: u32 },
}

fn main() {}
