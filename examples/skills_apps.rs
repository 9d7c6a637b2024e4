//! Skills and an app page, checked when this example compiles.
//!
//! - Two skills from `examples/skills/` (SEP-2640): `pdf-processing` (with a reference and a
//!   script) and `code-review`, which holds the nested skill `code-review/rust-review`. The
//!   `skills!` macro reads the directory when the crate compiles; a missing `SKILL.md`, a bad
//!   name or a link out of the directory is a compile error, and changing a file rebuilds.
//! - One MCP Apps page (`ui://weather/view`, `examples/skills_apps/weather.html`), linked from
//!   the `weather` tool with `#[tool(ui = ..)]`; the server refuses to build if the page is
//!   not served.
//!
//! ```text
//! cargo run -p mcp-examples --example skills_apps            # stdio
//! ```
//!
//! Then, for example: `skills/list`, `skills/get {"uri": "skill://code-review/rust-review/SKILL.md"}`,
//! `resources/directory/read {"uri": "skill://pdf-processing"}`,
//! `resources/read {"uri": "ui://weather/view"}`, `tools/call weather {"city": "Oslo"}`.

use mcp_runtime::app::UiResource;
use mcp_runtime::prelude::*;

/// Today's weather for a city, shown on the weather page by hosts that render MCP Apps.
#[tool(ui = "ui://weather/view", read_only)]
async fn weather(
    /// The city.
    city: String,
) -> String {
    format!("{city}: 18 °C, light wind, no rain")
}

/// The server: the skills, the page and the tool.
fn server() -> Server {
    let page = UiResource::new(
        "ui://weather/view",
        "weather-view",
        include_str!("skills_apps/weather.html"),
    )
    .description("Today's weather, drawn")
    .prefers_border(true)
    // The page loads nothing from the network; it reaches the host by postMessage only.
    .connect_domains(Vec::<String>::new());
    Server::builder()
        .name("skills-apps")
        .version(env!("CARGO_PKG_VERSION"))
        .skills(mcp_runtime::skills!("skills"))
        .tool(weather)
        .resource_def(page.build())
}

/// What `--help` prints.
const USAGE: &str = "\
usage: skills_apps [--help]

Two skills and an MCP Apps page, served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    server().serve_stdio().await
}

#[cfg(test)]
mod tests {
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn serves_two_skills_one_nested_and_a_linked_page() {
        let client = Client::connect(super::server()).await.unwrap();
        let list = client.request("skills/list", json!({})).await.unwrap();
        let uris: Vec<&str> = list["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "skill://code-review/SKILL.md",
                "skill://code-review/rust-review/SKILL.md",
                "skill://pdf-processing/SKILL.md"
            ]
        );
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0]["_meta"]["ui"]["resourceUri"], "ui://weather/view");
        let page = client
            .request("resources/read", json!({"uri": "ui://weather/view"}))
            .await
            .unwrap();
        assert_eq!(page["contents"][0]["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(page["contents"][0]["_meta"]["ui"]["prefersBorder"], true);
    }
}
