use mcp_fusion::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
#[serde(rename_all = "lowercase")]
enum Plan {
    Pro,
    #[serde(rename = "pro")]
    Professional,
}

fn main() {}
