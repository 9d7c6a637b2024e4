//! Resources and templates.

use mcp_runtime::prelude::*;

// ANCHOR: resources
/// The application's settings.
#[resource("config://app", mime_type = "application/json")]
async fn settings() -> serde_json::Value {
    serde_json::json!({"theme": "dark"})
}

/// One day of the application log.
#[resource("logs://{day}{?level}", mime_type = "text/plain", list = known_days)]
async fn day_log(day: u32, level: Option<String>) -> Result<String, ResourceError> {
    if day == 0 || day > 31 {
        return Err(ResourceError::NotFound);
    }
    Ok(format!(
        "log of day {day} at level {}",
        level.as_deref().unwrap_or("info")
    ))
}

/// The concrete log resources, for `resources/list`.
fn known_days() -> Vec<ResourceInfo> {
    vec![ResourceInfo::new("logs://1", "day-1")]
}
// ANCHOR_END: resources

// ANCHOR: files
/// A file under the served directory.
#[resource("files://{+path}", mime_type = "text/plain")]
async fn file(path: String) -> Result<String, ResourceError> {
    // `path` is percent-decoded; a value with `..`, an absolute path or NUL never gets here.
    Ok(format!("contents of {path}"))
}

/// A photo's bytes: sent as a base64 `blob`.
#[resource("photos://{id}/full", mime_type = "image/png")]
async fn photo(id: u32) -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G', id.to_le_bytes()[0]]
}
// ANCHOR_END: files

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn static_templates_and_lists() -> Result<(), Box<dyn std::error::Error>> {
        let client =
            Client::connect(Server::builder().resource(settings).resource(day_log)).await?;
        let read = client
            .request("resources/read", json!({"uri": "logs://3?level=debug"}))
            .await?;
        assert_eq!(read["contents"][0]["text"], "log of day 3 at level debug");
        assert_eq!(read["contents"][0]["mimeType"], "text/plain");
        let missing = client
            .request("resources/read", json!({"uri": "logs://40"}))
            .await
            .unwrap_err();
        assert_eq!(missing.rpc().map(|e| e.code), Some(-32002));
        let bad = client
            .request("resources/read", json!({"uri": "logs://monday"}))
            .await
            .unwrap_err();
        assert_eq!(bad.rpc().map(|e| e.code), Some(-32602));
        let list = client.request("resources/list", json!({})).await?;
        let uris: Vec<_> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r["uri"].clone())
            .collect();
        assert_eq!(uris, [json!("config://app"), json!("logs://1")]);
        let templates = client
            .request("resources/templates/list", json!({}))
            .await?;
        assert_eq!(
            templates["resourceTemplates"][0]["uriTemplate"],
            "logs://{day}{?level}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn decoding_traversal_and_blobs() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Server::builder().resource(file).resource(photo)).await?;
        let read = client
            .request("resources/read", json!({"uri": "files://notes/a%20b.txt"}))
            .await?;
        assert_eq!(read["contents"][0]["text"], "contents of notes/a b.txt");
        let escape = client
            .request(
                "resources/read",
                json!({"uri": "files://notes/../../etc/passwd"}),
            )
            .await;
        assert!(escape.is_err());
        let blob = client
            .request("resources/read", json!({"uri": "photos://7/full"}))
            .await?;
        assert!(blob["contents"][0]["blob"].is_string());
        Ok(())
    }
}
