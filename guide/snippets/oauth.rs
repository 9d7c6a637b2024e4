//! OAuth: an OAuth 2.1 resource server.

use mcp_runtime::OAuth;
use mcp_runtime::prelude::*;

// ANCHOR: oauth
/// Add a note.
#[tool(scopes = ["notes:write"])]
async fn add_note(text: String, caller: Principal) -> String {
    format!("{} wrote {text}", caller.subject().unwrap_or("-"))
}

async fn serve() -> mcp_runtime::Result<()> {
    Server::new("notes", "1.0.0")
        .oauth(
            OAuth::new("https://notes.example.com/mcp") // this server's canonical URI
                .authorization_server("https://auth.example.com") // the issuer
                .scopes_supported(["notes:read", "notes:write"]),
        )
        .serve_http("0.0.0.0:8000")
        .await
}
// ANCHOR_END: oauth

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn the_scope_is_checked_where_there_is_a_principal()
    -> Result<(), Box<dyn std::error::Error>> {
        // stdio has no OAuth, so no principal: the parameter says why it is missing.
        let client = Client::connect(Server::builder().tool(add_note)).await?;
        let result = client.call_tool("add_note", json!({"text": "hi"})).await?;
        assert!(result.is_error, "{}", result.text());
        Ok(())
    }
}
