use mcp_runtime::prelude::*;

#[derive(JsonSchema)]
struct Forecast {
    temp_c: f64,
}

/// Tomorrow's weather.
#[tool]
async fn forecast(city: String) -> Forecast {
    let _ = city;
    Forecast { temp_c: 21.5 }
}

fn main() {}
