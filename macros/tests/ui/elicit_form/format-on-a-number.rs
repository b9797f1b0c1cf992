use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(format = "email")]
    age: u8,
}

fn main() {}
