use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {
    #[choice(tilte = "Free, for one person")]
    Free,
    Pro,
}

fn main() {}
