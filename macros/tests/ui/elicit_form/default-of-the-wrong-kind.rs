use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Confirm {
    #[form(default = "yes")]
    confirm: bool,
}

fn main() {}
