use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(format = "emial")]
    email: String,
}

fn main() {}
