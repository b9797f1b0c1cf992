use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(format = "email")]
    age: u8,
}

fn main() {}
