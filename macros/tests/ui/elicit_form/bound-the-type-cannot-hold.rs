use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Order {
    #[form(max = 300)]
    copies: u8,
}

fn main() {}
