use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Rename {
    #[form(default = 3)]
    name: String,
}

fn main() {}
