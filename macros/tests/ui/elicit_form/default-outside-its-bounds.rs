use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Order {
    #[form(min = 1, max = 10, default = 20)]
    copies: u8,
}

fn main() {}
