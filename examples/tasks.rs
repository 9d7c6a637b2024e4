//! Long-running tools as tasks: one key on `#[tool]`, the handler unchanged.
//!
//! - `build` is a long job with progress: run as a task, its progress becomes the task's
//!   `statusMessage`;
//! - `deploy` asks a question halfway: the task turns `input_required` until the client answers
//!   (`tasks/update` in 2026-07-28; in 2025-11-25 the question reaches it through `tasks/result`);
//! - `crawl` runs until cancelled (`tasks/cancel` stops it);
//! - `release` asks for a version before the task exists (`ctx.before_task`: an input-required
//!   round on the `tools/call` itself), then runs as a task.
//!
//! Run with: `cargo run -p mcp-examples --example tasks` (stdio). A 2026-07-28 client that
//! declares the extension gets a task back at once and polls it:
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","arguments":{"steps":5},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}
//! {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"<the taskId>","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}
//! ```
//!
//! A client that did not declare the extension gets `build` as an ordinary call (it is
//! `optional`) and a -32021 error for `release` (it is `required`).

use std::time::Duration;

use mcp_runtime::prelude::*;

/// Builds the project in `steps` steps of half a second, reporting each.
#[tool(task = "optional")]
async fn build(
    /// How many steps.
    #[arg(default = 10)]
    steps: u32,
    ctx: Context,
) -> String {
    for step in 1..=steps {
        tokio::time::sleep(Duration::from_millis(500)).await;
        ctx.progress(
            f64::from(step),
            f64::from(steps),
            format!("step {step} of {steps}"),
        )
        .await;
    }
    format!("built in {steps} steps")
}

/// Yes or no.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Prepares a deployment to `target`, asks for a go-ahead halfway, then deploys (or not).
#[tool(task = "optional")]
async fn deploy(target: String, ctx: Context) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let answer = ctx
        .elicit::<Confirm>(format!("Everything is ready. Deploy to {target}?"))
        .await?;
    if !matches!(answer, Elicitation::Accept(Confirm { confirm: true })) {
        return Ok(format!("deployment to {target} called off"));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(format!("deployed to {target}"))
}

/// Crawls `site` page after page until cancelled.
#[tool(task = "required")]
async fn crawl(site: String, ctx: Context) -> String {
    let mut pages = 0u64;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        pages += 1;
        ctx.progress(pages as f64, None, format!("{pages} pages of {site}"))
            .await;
    }
}

/// The version to release.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct Version {
    /// For example 1.2.0
    version: String,
}

/// Asks which version to release before it starts, then releases it as a task.
#[tool(task = "required")]
async fn release(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx
        .before_task(ctx.input("version").elicit::<Version>("Which version?"))
        .await?;
    let Elicitation::Accept(Version { version }) = answer else {
        return Err(ToolError::new("no version, no release"));
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(format!("released {version}"))
}

/// What `--help` prints.
const USAGE: &str = "\
usage: tasks [--help]

Long-running tools as tasks, served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    Server::new("tasks", "1.0.0")
        // At most 1,000 tasks at once, each kept for 10 minutes.
        .max_live_tasks(1_000)
        .task_ttl(Duration::from_secs(600))
        .serve_stdio()
        .await
}
