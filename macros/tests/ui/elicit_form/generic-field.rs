use mcp_fusion::tools::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
