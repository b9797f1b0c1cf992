#![deny(warnings, missing_docs, unused_qualifications)]
//! A tool with one action, made from an async fn, compiled under
//! `deny(warnings, missing_docs, unused_qualifications)`.

use mcp_fusion::{Context, Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The arguments of `get_weather`.
#[derive(Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// The city, such as `Lisbon`.
    pub city: String,
}

/// The weather in a city.
#[derive(Serialize)]
pub struct Weather {
    /// The city.
    pub city: String,
    /// Degrees Celsius.
    pub celsius: f64,
}

/// Today's weather for a city.
#[tool(
    read_only,
    idempotent,
    open_world,
    timeout = "5s",
    rate_limit(max = 60, window = "1m")
)]
pub async fn get_weather(args: WeatherArgs, f: Context) -> Result<Weather, ToolError> {
    let _ = f.action();
    Ok(Weather {
        city: args.city,
        celsius: 21.5,
    })
}

/// The time of day, as text.
#[tool(name = "clock")]
pub async fn what_time() -> Result<String, ToolError> {
    Ok(String::from("noon"))
}

fn main() {
    let def = GetWeatherTool.definition();
    assert_eq!(def.name(), "get_weather");
    assert_eq!(def.discriminator(), None);
    assert_eq!(def.actions().len(), 1);
    assert_eq!(GetWeatherTool::ACTIONS.get_weather.as_str(), "get_weather");
    let actions: GetWeatherToolActions = GetWeatherTool::ACTIONS;
    let _ = actions;

    assert_eq!(WhatTimeTool.definition().name(), "clock");
    assert_eq!(WhatTimeTool::ACTIONS.what_time.as_str(), "clock");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let result = runtime.block_on(WhatTimeTool.call(None));
    assert!(!result.is_error());
}
