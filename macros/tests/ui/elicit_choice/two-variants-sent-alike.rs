use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
#[serde(rename_all = "lowercase")]
enum Plan {
    Pro,
    #[serde(rename = "pro")]
    Professional,
}

fn main() {}
