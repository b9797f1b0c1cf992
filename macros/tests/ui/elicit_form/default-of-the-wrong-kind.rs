use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Confirm {
    #[form(default = "yes")]
    confirm: bool,
}

fn main() {}
