//! Testing your server.

use mcp_runtime::prelude::*;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The server under test, as `main` builds it.
fn server() -> Server {
    Server::builder().name("calc").version("1.2.0").tool(add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    // ANCHOR: eras
    #[tokio::test]
    async fn adds_in_both_eras() -> Result<(), Box<dyn std::error::Error>> {
        for client in [
            Client::connect(server()).await?,
            Client::builder().stateless().connect(server()).await?,
        ] {
            let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
            assert_eq!(result.structured_content, Some(json!({"result": 5})));
        }
        Ok(())
    }
    // ANCHOR_END: eras

    // ANCHOR: revision
    #[tokio::test]
    async fn an_older_client_gets_no_structured_content() -> Result<(), Box<dyn std::error::Error>>
    {
        let client = Client::builder()
            .protocol_version("2025-03-26")
            .connect(server())
            .await?;
        let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
        assert_eq!(result.structured_content, None);
        assert_eq!(result.text(), "5");
        Ok(())
    }
    // ANCHOR_END: revision

    // ANCHOR: surface
    #[tokio::test]
    async fn surface() {
        mcp_runtime::testing::assert_surface(server(), "tests/mcp-surface.json").await;
    }
    // ANCHOR_END: surface
}
