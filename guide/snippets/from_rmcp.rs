//! Coming from rmcp: the same server as rmcp's two-tool, one-prompt, one-resource demo.

// ANCHOR: server
use mcp_runtime::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
async fn add(
    /// First addend
    a: i64,
    /// Second addend
    b: i64,
) -> i64 {
    a + b
}

#[derive(Serialize, JsonSchema)]
struct TextStats {
    words: usize,
    chars: usize,
    longest_word: Option<String>,
}

/// Count words and characters; returns structured output.
#[tool(title = "Text statistics")]
async fn text_stats(
    /// Text to analyse
    text: String,
) -> Result<TextStats, ToolError> {
    if text.is_empty() {
        return Err(ToolError::new("text must not be empty")); // -> isError: true
    }
    let longest = text.split_whitespace().max_by_key(|w| w.len());
    Ok(TextStats {
        words: text.split_whitespace().count(),
        chars: text.chars().count(),
        longest_word: longest.map(str::to_owned),
    })
}

/// Ask the model to review a piece of code.
#[prompt]
fn code_review(
    /// Code to review
    code: String,
    /// Optional language hint
    language: Option<String>,
) -> String {
    let lang = language.unwrap_or_else(|| "unknown".into());
    format!("Review this {lang} code:\n\n{code}")
}

/// Application configuration
#[resource("config://app", name = "app-config", mime_type = "application/json")]
fn app_config() -> &'static str {
    r#"{"debug":false}"#
}

async fn serve() -> mcp_runtime::Result<()> {
    // Over stdio; `.serve_http("127.0.0.1:8000")` for Streamable HTTP, sessions and all.
    Server::new("demo", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
// ANCHOR_END: server

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn the_same_surface() -> Result<(), Box<dyn std::error::Error>> {
        let server = Server::builder()
            .name("demo")
            .version("1.0.0")
            .tool(add)
            .tool(text_stats)
            .prompt(code_review)
            .resource(app_config);
        let client = Client::connect(server).await?;
        let init = client.initialize_result().cloned().unwrap_or_default();
        assert_eq!(init["serverInfo"]["name"], "demo");
        for capability in ["tools", "prompts", "resources"] {
            assert!(init["capabilities"][capability].is_object(), "{capability}");
        }
        let stats = client
            .call_tool("text_stats", json!({"text": "a bb"}))
            .await?;
        assert_eq!(
            stats.structured_content,
            Some(json!({"words": 2, "chars": 4, "longest_word": "bb"}))
        );
        assert!(
            client
                .call_tool("text_stats", json!({"text": ""}))
                .await?
                .is_error
        );
        let read = client
            .request("resources/read", json!({"uri": "config://app"}))
            .await?;
        assert_eq!(read["contents"][0]["text"], r#"{"debug":false}"#);
        let review = client
            .request(
                "prompts/get",
                json!({"name": "code_review", "arguments": {"code": "x"}}),
            )
            .await?;
        assert_eq!(
            review["messages"][0]["content"]["text"],
            "Review this unknown code:\n\nx"
        );
        Ok(())
    }
}
