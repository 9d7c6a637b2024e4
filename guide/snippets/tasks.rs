//! Long-running tools as tasks.

use std::time::Duration;

use mcp_runtime::prelude::*;

// ANCHOR: build
/// Builds the project, reporting each step.
#[tool(task = "optional")]
async fn build(steps: u32, ctx: Context) -> String {
    for step in 1..=steps {
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.progress(f64::from(step), f64::from(steps), format!("step {step}"))
            .await;
    }
    format!("built in {steps} steps")
}
// ANCHOR_END: build

// ANCHOR: crawl
/// Crawls a site, page after page, until cancelled.
#[tool(task = "required")]
async fn crawl(site: String, ctx: Context) -> String {
    let mut pages = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        pages += 1;
        ctx.progress(f64::from(pages), None, format!("{pages} pages of {site}"))
            .await;
    }
}

fn server() -> Server {
    Server::builder()
        .tool(build)
        .tool(crawl)
        .max_live_tasks(100)
}
// ANCHOR_END: crawl

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;
    use serde_json::json;

    #[tokio::test]
    async fn an_ordinary_call_for_other_clients() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::connect(server()).await?;
        assert_eq!(
            client.call_tool("build", json!({"steps": 2})).await?.text(),
            "built in 2 steps"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_task_polled_and_cancelled() -> Result<(), Box<dyn std::error::Error>> {
        let client = Client::builder()
            .stateless()
            .capabilities(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
            .connect(server())
            .await?;
        let task = client
            .request(
                "tools/call",
                json!({"name": "crawl", "arguments": {"site": "example.org"}}),
            )
            .await?;
        assert_eq!(task["resultType"], "task");
        let id = task["taskId"].clone();
        client
            .request("tasks/cancel", json!({"taskId": id}))
            .await?;
        let got = client.request("tasks/get", json!({"taskId": id})).await?;
        assert_eq!(got["status"], "cancelled");
        Ok(())
    }
}
