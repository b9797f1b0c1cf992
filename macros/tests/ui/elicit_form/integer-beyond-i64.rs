use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Budget {
    #[form(max = 10_000_000_000_000_000_000)]
    cents: u64,
}

fn main() {}
