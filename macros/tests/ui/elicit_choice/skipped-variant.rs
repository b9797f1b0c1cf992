use mcp_fusion::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {
    Free,
    Pro,
    #[serde(skip)]
    Legacy,
}

fn main() {}
