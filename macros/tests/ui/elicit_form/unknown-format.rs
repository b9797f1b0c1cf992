use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(format = "emial")]
    email: String,
}

fn main() {}
