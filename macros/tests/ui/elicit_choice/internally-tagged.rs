use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
#[serde(tag = "kind")]
enum Plan {
    Free,
    Pro,
}

fn main() {}
