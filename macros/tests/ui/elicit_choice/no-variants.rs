use mcp_fusion::tools::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {}

fn main() {}
