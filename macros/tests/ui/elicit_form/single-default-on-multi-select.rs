use mcp_fusion::tools::{ElicitChoice, ElicitForm};

#[derive(serde::Deserialize, ElicitChoice)]
enum Topic {
    Rust,
    Go,
}

#[derive(serde::Deserialize, ElicitForm)]
struct Follow {
    #[form(default = Topic::Rust)]
    topics: Vec<Topic>,
}

fn main() {}
