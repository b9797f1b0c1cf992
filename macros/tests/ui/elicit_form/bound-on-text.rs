use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(max = 20)]
    name: String,
}

fn main() {}
