//! Servers with state, and changing what is served while serving.

use std::sync::Mutex;

use mcp_runtime::prelude::*;
use mcp_runtime::tool::ToolDef;

// ANCHOR: server
#[derive(Default)]
pub struct Todo {
    items: Mutex<Vec<String>>,
}

#[server(
    name = "todo",
    instructions = "A to-do list: `add` items, read `todo://items`."
)]
impl Todo {
    /// Add an item; returns how many there are.
    #[tool]
    async fn add(&self, item: String, ctx: Context) -> Result<usize, ToolError> {
        let count = {
            let mut items = self
                .items
                .lock()
                .map_err(|_| ToolError::new("the list is broken"))?;
            items.push(item);
            items.len()
        };
        ctx.server().resource_updated("todo://items");
        Ok(count)
    }

    /// Every item, one per line.
    #[resource("todo://items", mime_type = "text/plain")]
    fn list(&self) -> Result<String, ResourceError> {
        let items = self
            .items
            .lock()
            .map_err(|_| ResourceError::Internal("the list is broken".into()))?;
        Ok(items.join("\n"))
    }

    /// Plan the day around the list.
    #[prompt]
    fn plan(&self) -> String {
        format!(
            "Plan my day around: {}",
            self.items.lock().map(|i| i.join(", ")).unwrap_or_default()
        )
    }
}

// Todo::default().into_server().serve_stdio().await
// ANCHOR_END: server

// ANCHOR: dynamic
/// Say hello.
#[tool]
fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

async fn add_later() -> Result<McpService, Box<dyn std::error::Error>> {
    // `dynamic_tools`: the server starts with no tools and says it may add some.
    let service = Server::builder().dynamic_tools().build()?;
    // Later, while serving (or from a handler: `ctx.server()`):
    service.handle().add_tool(ToolDef::of(hello)?)?; // clients hear `notifications/tools/list_changed`
    service.handle().disable_tool("hello");
    service.handle().enable_tool("hello");
    Ok(service)
}
// ANCHOR_END: dynamic

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn shares_self() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(Todo::default().into_server()).await?;
        let init = client.initialize_result().cloned().unwrap_or_default();
        assert_eq!(init["serverInfo"]["name"], "todo");
        client.call_tool("add", json!({"item": "milk"})).await?;
        let second = client.call_tool("add", json!({"item": "bread"})).await?;
        assert_eq!(second.structured_content, Some(json!({"result": 2})));
        let read = client
            .request("resources/read", json!({"uri": "todo://items"}))
            .await?;
        assert_eq!(read["contents"][0]["text"], "milk\nbread");
        Ok(())
    }

    #[tokio::test]
    async fn tools_added_while_serving() -> Result<(), Box<dyn std::error::Error>> {
        let service = Server::builder().dynamic_tools().build()?;
        let client = Client::builder().connect_service(&service).await?;
        client.request("ping", json!({})).await?;
        service.handle().add_tool(ToolDef::of(hello)?)?;
        assert_eq!(
            client.next_message().await?["method"],
            "notifications/tools/list_changed"
        );
        assert_eq!(
            client
                .call_tool("hello", json!({"name": "Ada"}))
                .await?
                .text(),
            "Hello, Ada!"
        );
        service.handle().disable_tool("hello");
        assert!(client.list_tools().await?.is_empty());
        assert!(add_later().await.is_ok());
        Ok(())
    }
}
