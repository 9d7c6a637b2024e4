//! Tools and schemas.

use mcp_runtime::prelude::*;

// ANCHOR: convert
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

/// Convert a temperature.
#[tool(read_only, idempotent)]
fn convert(
    /// The temperature to convert.
    #[arg(example = 21.5)]
    value: f64,
    /// The unit to convert to.
    to: Unit,
    /// Decimal places.
    #[arg(default = 1)]
    precision: u8,
    /// Who asks; optional.
    #[arg(rename = "askedBy")]
    asked_by: Option<String>,
) -> String {
    let converted = match to {
        Unit::Celsius => (value - 32.0) / 1.8,
        Unit::Fahrenheit => value * 1.8 + 32.0,
    };
    let greeting = asked_by.map(|who| format!("{who}: ")).unwrap_or_default();
    format!("{greeting}{converted:.*}", usize::from(precision))
}
// ANCHOR_END: convert

// ANCHOR: forecast
/// A forecast.
#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    temp_c: f64,
}

/// Tomorrow's weather in a city.
#[tool]
async fn forecast(city: String) -> Result<Forecast, ToolError> {
    if city.is_empty() {
        return Err(ToolError::new("name a city, for example `Paris`"));
    }
    Ok(Forecast { city, temp_c: 21.5 })
}
// ANCHOR_END: forecast

// ANCHOR: args
/// A search, as one object.
#[derive(Deserialize, JsonSchema)]
struct Query {
    /// The words to look for.
    text: String,
    /// At most this many results.
    limit: Option<u32>,
}

/// Search the notes.
#[tool(name = "search_notes", title = "Search notes")]
async fn search(Args(query): Args<Query>) -> Vec<String> {
    let limit = query.limit.unwrap_or(10) as usize;
    std::iter::repeat_n(query.text, limit.min(2)).collect()
}
// ANCHOR_END: args

// ANCHOR: sync
/// Count the lines of a file on the server (a sync tool: it runs on tokio's blocking pool).
#[tool(read_only)]
fn count_lines(path: String) -> Result<usize, ToolError> {
    let text =
        std::fs::read_to_string(&path).map_err(|e| ToolError::new(format!("{path}: {e}")))?;
    Ok(text.lines().count())
}
// ANCHOR_END: sync

// ANCHOR: content
/// A thumbnail, and a link to the full-size picture.
#[tool]
async fn thumbnail() -> Vec<Content> {
    vec![
        Content::text("the thumbnail of photo 1"),
        Image::png(PIXEL_PNG).into(),
        ResourceLink::new("photos://1/full", "photo-1").into(),
    ]
}
// ANCHOR_END: content

/// A second tool named `convert`, in another module of a real server: refused when built.
#[tool(name = "convert")]
fn convert_twin(value: f64) -> f64 {
    value
}

const PIXEL_PNG: &[u8] = &[0x89, b'P', b'N', b'G'];

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn convert_schema_and_calls() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().tool(convert)).await?;
        let tool = &client.list_tools().await?[0];
        assert_eq!(tool["inputSchema"]["required"], json!(["value", "to"]));
        assert_eq!(tool["inputSchema"]["properties"]["precision"]["default"], 1);
        assert_eq!(
            tool["inputSchema"]["properties"]["to"]["enum"],
            json!(["celsius", "fahrenheit"])
        );
        assert_eq!(
            tool["inputSchema"]["properties"]["value"]["examples"],
            json!([21.5])
        );
        assert!(tool["inputSchema"]["properties"]["askedBy"].is_object());
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        let result = client
            .call_tool("convert", json!({"value": 100, "to": "celsius"}))
            .await?;
        assert_eq!(result.text(), "37.8");
        let wrong = client
            .call_tool("convert", json!({"value": 100, "to": "kelvin"}))
            .await?;
        assert!(wrong.is_error);
        assert!(wrong.text().contains("to"), "{}", wrong.text());
        let unknown = client
            .call_tool(
                "convert",
                json!({"value": 1, "to": "celsius", "colour": "red"}),
            )
            .await?;
        assert!(unknown.is_error);
        Ok(())
    }

    #[tokio::test]
    async fn structured_output_and_tool_errors() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().tool(forecast)).await?;
        assert_eq!(
            client.list_tools().await?[0]["outputSchema"]["type"],
            "object"
        );
        let ok = client
            .call_tool("forecast", json!({"city": "Paris"}))
            .await?;
        assert_eq!(
            ok.structured_content,
            Some(json!({"city": "Paris", "temp_c": 21.5}))
        );
        let err = client.call_tool("forecast", json!({"city": ""})).await?;
        assert!(err.is_error);
        assert_eq!(err.text(), "name a city, for example `Paris`");
        Ok(())
    }

    #[test]
    fn duplicate_names_are_refused_when_built() {
        let error = Server::builder()
            .tool(convert)
            .tool(convert_twin)
            .build()
            .err()
            .map(|e| e.to_string());
        let error = error.unwrap_or_default();
        assert!(
            error.starts_with("the server definition is invalid:\n"),
            "{error}"
        );
        assert!(
            error
                .contains("  - duplicate tool name `convert`: defined at guide/snippets/tools.rs:"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn args_name_sync_and_content() -> Result<(), Box<dyn std::error::Error>> {
        let server = Server::builder()
            .tool(search)
            .tool(count_lines)
            .tool(thumbnail);
        let client = Client::connect(server).await?;
        let tools = client.list_tools().await?;
        let names: Vec<_> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(names, ["count_lines", "search_notes", "thumbnail"]);
        assert_eq!(tools[1]["title"], "Search notes");
        assert_eq!(tools[1]["inputSchema"]["required"], json!(["text"]));
        let found = client
            .call_tool("search_notes", json!({"text": "mcp"}))
            .await?;
        assert_eq!(
            found.structured_content,
            Some(json!({"result": ["mcp", "mcp"]}))
        );
        let lines = client
            .call_tool(
                "count_lines",
                json!({"path": concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")}),
            )
            .await?;
        assert!(!lines.is_error, "{}", lines.text());
        let missing = client
            .call_tool("count_lines", json!({"path": "/nonexistent"}))
            .await?;
        assert!(missing.is_error);
        let picture = client
            .request("tools/call", json!({"name": "thumbnail", "arguments": {}}))
            .await?;
        assert_eq!(picture["content"][1]["type"], "image");
        assert_eq!(picture["content"][1]["mimeType"], "image/png");
        Ok(())
    }
}
