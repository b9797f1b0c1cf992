use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {
    Free,
    Pro,
    #[serde(skip)]
    Legacy,
}

fn main() {}
