use mcp_runtime::prelude::*;

#[derive(Serialize)]
struct Forecast {
    temp_c: f64,
}

/// Tomorrow's weather.
#[tool]
async fn forecast(city: String) -> Result<Forecast, ToolError> {
    let _ = city;
    Ok(Forecast { temp_c: 21.5 })
}

fn main() {}
