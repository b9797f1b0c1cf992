use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Order {
    #[form(min = 10, max = 1)]
    copies: u8,
}

fn main() {}
