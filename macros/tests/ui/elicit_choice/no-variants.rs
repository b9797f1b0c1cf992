use mcp_fusion::ElicitChoice;

#[derive(serde::Deserialize, ElicitChoice)]
enum Plan {}

fn main() {}
