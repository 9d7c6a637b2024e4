//! What a handler can ask for: the context.

use mcp_runtime::prelude::*;

// ANCHOR: book
#[derive(Deserialize, Elicit)]
struct Contact {
    /// Your name.
    #[elicit(min_length = 1)]
    name: String,
    /// Where to send the confirmation.
    #[elicit(format = "email")]
    email: String,
}

/// Book a table.
#[tool]
async fn book(guests: u8, ctx: Context) -> Result<String, ToolError> {
    ctx.info("looking for a table").await; // notifications/message, at or above the client's level
    ctx.progress(1.0, 2.0, "found one").await; // only when the request sent a progressToken
    let Elicitation::Accept(who) = ctx.elicit::<Contact>("Who is booking?").await? else {
        return Err(ToolError::new("booking cancelled"));
    };
    let dish = ctx
        .sample(SamplingRequest::new(50).user("Suggest a dish"))
        .await?;
    let roots = ctx.roots().await?;
    Ok(format!(
        "{guests} for {} <{}>: try {} ({} roots)",
        who.name,
        who.email,
        dish.text(),
        roots.len()
    ))
}
// ANCHOR_END: book

// ANCHOR: tracing
/// Index a folder; plain `tracing` events reach the client through `ClientLogLayer`.
#[tool]
async fn index(folder: String, ctx: Context) -> String {
    tracing::info!(%folder, "indexing");
    if ctx.is_cancelled() {
        return "cancelled".to_owned();
    }
    format!("indexed {folder}")
}
// ANCHOR_END: tracing

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn asks_the_client() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::builder()
            .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
            .on_request(|method, _params| match method {
                "elicitation/create" => Ok(json!({
                    "action": "accept", "content": {"name": "Ada", "email": "ada@example.com"}
                })),
                "sampling/createMessage" => Ok(json!({
                    "role": "assistant", "model": "m", "content": {"type": "text", "text": "soup"}
                })),
                _ => Ok(json!({"roots": [{"uri": "file:///work"}]})),
            })
            .connect(Server::builder().tool(book))
            .await?;
        let call =
            json!({"name": "book", "arguments": {"guests": 2}, "_meta": {"progressToken": 1}});
        let result = client.request("tools/call", call).await?;
        assert_eq!(
            result["content"][0]["text"],
            "2 for Ada <ada@example.com>: try soup (1 roots)"
        );
        assert_eq!(
            client.next_message().await?["method"],
            "notifications/message"
        );
        assert_eq!(
            client.next_message().await?["method"],
            "notifications/progress"
        );
        Ok(())
    }

    #[tokio::test]
    async fn without_the_capability_it_is_a_tool_error() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().tool(book)).await?;
        let result = client.call_tool("book", json!({"guests": 2})).await?;
        assert!(result.is_error);
        let plain = Client::connect(Server::builder().tool(index)).await?;
        assert_eq!(
            plain
                .call_tool("index", json!({"folder": "docs"}))
                .await?
                .text(),
            "indexed docs"
        );
        Ok(())
    }
}
