use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Confirm(bool);

fn main() {}
