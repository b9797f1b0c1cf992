use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Confirm(bool);

fn main() {}
