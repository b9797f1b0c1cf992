use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(max = 20)]
    name: String,
}

fn main() {}
