use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize)]
struct Address {
    city: String,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    name: String,
    address: Address,
}

fn main() {}
