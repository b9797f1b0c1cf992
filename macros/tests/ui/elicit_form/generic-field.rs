use mcp_fusion::ElicitForm;

#[derive(serde::Deserialize, ElicitForm)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
