use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize)]
struct Address {
    city: String,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    #[form(formta = "email")]
    email: String,
    #[form(min = 5, max = 2)]
    age: u8,
    address: Address,
}

fn main() {}
