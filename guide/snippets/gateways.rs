//! Gateways and the client.

use mcp_runtime::gateway::Upstream;
use mcp_runtime::prelude::*;

// ANCHOR: mount
/// Tomorrow's weather in a city.
#[tool]
async fn forecast(city: String) -> String {
    format!("Sunny in {city}")
}

fn weather_inside() -> Server {
    // `weather_forecast`, served in-process.
    Server::builder().mount("weather", Server::builder().tool(forecast))
}
// ANCHOR_END: mount

// ANCHOR: proxy
async fn gateway(token: String) -> mcp_runtime::Result<()> {
    Server::new("gateway", "1.0.0") // your own #[tool]s, and:
        .mount("weather", Server::builder().tool(forecast)) // weather_forecast, in-process
        .proxy("time", Upstream::stdio("uvx", ["mcp-server-time"])) // time_get_current_time
        .proxy("local", Upstream::stdio("./my-server", [])) // no arguments: `[]`
        .proxy(
            "docs",
            Upstream::http("https://docs.example.com/mcp").bearer_token(token),
        )
        .serve_http("127.0.0.1:8000")
        .await
}
// ANCHOR_END: proxy

// ANCHOR: client
use mcp_runtime::client::{Client, StdioCommand};

async fn what_time_is_it(token: String) -> Result<String, mcp_runtime::client::ClientError> {
    let time = Client::builder()
        .stdio(StdioCommand::new("uvx").arg("mcp-server-time"))
        .await?;
    let now = time
        .call_tool(
            "get_current_time",
            serde_json::json!({"timezone": "Europe/Paris"}),
        )
        .await?;
    let remote = Client::builder()
        .bearer_token(token)
        .http("https://mcp.example.com/mcp")
        .await?;
    let tools = remote.list_tools().await?;
    Ok(format!("{} ({} remote tools)", now.text(), tools.len()))
}
// ANCHOR_END: client

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn mounted_under_a_namespace() -> Result<(), Box<dyn std::error::Error>> {
        let client = mcp_runtime::testing::Client::connect(weather_inside()).await?;
        let sunny = client
            .call_tool("weather_forecast", json!({"city": "Oslo"}))
            .await?;
        assert_eq!(sunny.text(), "Sunny in Oslo");
        Ok(())
    }
}
