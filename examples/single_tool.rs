//! `#[tool]` on one async fn: a tool with a single action and no discriminator.
//!
//! `cargo run --example single_tool`

use mcp_fusion::{ErrorCode, Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct City {
    /// The city, such as "Lyon".
    #[schemars(length(min = 1, max = 100))]
    city: String,
}

#[derive(Serialize)]
struct Weather {
    city: String,
    celsius: f64,
}

/// The current weather in a city.
#[tool(read_only, idempotent)]
async fn get_weather(args: City) -> Result<Weather, ToolError> {
    match args.city.as_str() {
        "Lyon" => Ok(Weather {
            city: args.city,
            celsius: 21.5,
        }),
        _ => Err(ToolError::new(
            ErrorCode::NOT_FOUND,
            format!("No weather station in {}.", args.city),
        )
        .suggest("Ask the user for a larger city nearby, then call get_weather again.")),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let listed = serde_json::to_string_pretty(&GetWeatherTool.definition().to_rmcp())
        .expect("tools serialize");
    println!("tools/list shows:\n{listed}\n");
    for call in [
        json!({"city": "Lyon"}),
        json!({"city": "Atlantis"}),
        json!({"town": "Lyon"}),
    ] {
        let result = GetWeatherTool.call(call.as_object().cloned()).await;
        println!("call {call}\nisError: {}", result.is_error());
        println!("{}\n", result.text());
    }
}
