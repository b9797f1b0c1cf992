use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
#[serde(rename_all = "camelCase")]
struct Signup {
    first_name: String,
    #[serde(rename = "firstName")]
    given_name: Option<String>,
}

fn main() {}
