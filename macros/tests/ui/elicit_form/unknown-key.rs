use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(titel = "Your name")]
    name: String,
}

fn main() {}
