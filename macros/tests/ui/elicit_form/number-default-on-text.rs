use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Rename {
    #[form(default = 3)]
    name: String,
}

fn main() {}
