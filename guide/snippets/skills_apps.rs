//! Skills and Apps.

use mcp_runtime::app::UiResource;
use mcp_runtime::prelude::*;

// ANCHOR: skills
fn with_skills() -> Server {
    // `skills/` next to this file, read and checked when the crate compiles.
    Server::builder().skills(mcp_runtime::skills!("skills"))
}
// ANCHOR_END: skills

// ANCHOR: app
/// Show the weather.
#[tool(ui = "ui://weather/view")]
async fn weather(city: String) -> String {
    format!("Sunny in {city}")
}

fn with_a_page() -> Server {
    let page = UiResource::new("ui://weather/view", "weather-view", WEATHER_HTML)
        .connect_domains(["https://api.example.com"])
        .prefers_border(true);
    Server::builder().tool(weather).resource_def(page.build())
}
// ANCHOR_END: app

const WEATHER_HTML: &str = "<!doctype html><title>Weather</title><p id=weather></p>";

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn skills_are_served() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(with_skills()).await?;
        let read = client
            .request(
                "resources/read",
                json!({"uri": "skill://release-notes/SKILL.md"}),
            )
            .await?;
        assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
        Ok(())
    }

    #[tokio::test]
    async fn the_page_is_linked() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(with_a_page()).await?;
        let tool = &client.list_tools().await?[0];
        assert_eq!(tool["_meta"]["ui"]["resourceUri"], "ui://weather/view");
        let page = client
            .request("resources/read", json!({"uri": "ui://weather/view"}))
            .await?;
        assert_eq!(page["contents"][0]["mimeType"], "text/html;profile=mcp-app");
        // A server whose tool names a page it does not serve is refused when built.
        assert!(Server::builder().tool(weather).build().is_err());
        Ok(())
    }
}
