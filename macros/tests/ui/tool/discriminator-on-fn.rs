use mcp_fusion::{Tool, ToolError, tool};

/// Today's weather.
#[tool(discriminator = "op")]
pub async fn get_weather() -> Result<String, ToolError> {
    Ok(String::from("sunny"))
}

fn main() {
    let _ = GetWeatherTool.definition();
    let _ = GetWeatherTool::ACTIONS.get_weather;
}
