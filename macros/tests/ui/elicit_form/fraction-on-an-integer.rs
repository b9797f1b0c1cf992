use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Order {
    #[form(max = 2.5)]
    copies: u8,
}

fn main() {}
