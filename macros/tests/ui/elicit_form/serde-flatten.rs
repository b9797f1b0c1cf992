use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Contact {
    phone: String,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Signup {
    name: String,
    #[serde(flatten)]
    contact: Contact,
}

fn main() {}
