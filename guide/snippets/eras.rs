//! Both protocol eras from one handler.

use mcp_runtime::prelude::*;

// ANCHOR: wipe
#[derive(Deserialize, Elicit)]
struct Confirm {
    /// Really delete?
    sure: bool,
}

/// Delete everything, after asking.
#[tool(destructive)]
async fn wipe(ctx: Context) -> Result<&'static str, ToolError> {
    match ctx.elicit::<Confirm>("Delete everything?").await? {
        Elicitation::Accept(Confirm { sure: true }) => Ok("wiped"),
        _ => Ok("kept"),
    }
}
// ANCHOR_END: wipe

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    // ANCHOR: both
    #[tokio::test]
    async fn one_handler_both_eras() -> Result<(), Box<dyn std::error::Error>> {
        let service = Server::builder().tool(wipe).build()?;
        let yes = |_: &str, _: &serde_json::Value| {
            Ok(json!({"action": "accept", "content": {"sure": true}}))
        };

        // The handshake era: `initialize`, then an `elicitation/create` request to the client.
        let handshake = Client::builder()
            .capabilities(json!({"elicitation": {}}))
            .on_request(yes)
            .connect_service(&service)
            .await?;
        assert_eq!(
            handshake.call_tool("wipe", json!({})).await?.text(),
            "wiped"
        );

        // The stateless era: an `input_required` result, answered and retried by the client.
        let stateless = Client::builder()
            .stateless()
            .capabilities(json!({"elicitation": {}}))
            .on_request(yes)
            .connect_service(&service)
            .await?;
        let first = stateless
            .request_raw("tools/call", json!({"name": "wipe", "arguments": {}}))
            .await?;
        assert_eq!(first["result"]["resultType"], "input_required");
        assert!(first["result"]["inputRequests"]["elicit-1"].is_object());
        assert_eq!(
            stateless.call_tool("wipe", json!({})).await?.text(),
            "wiped"
        );
        Ok(())
    }
    // ANCHOR_END: both

    #[tokio::test]
    async fn discover() -> Result<(), Box<dyn std::error::Error>> {
        let stateless = Client::builder()
            .stateless()
            .connect(Server::builder().tool(wipe))
            .await?;
        let discover = stateless.request("server/discover", json!({})).await?;
        assert_eq!(
            discover["supportedVersions"],
            json!([
                "2026-07-28",
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ])
        );
        Ok(())
    }
}
