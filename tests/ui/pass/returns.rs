//! Every accepted return type: structured values, text, content blocks, whole results, `Result`s
//! `Structured<T>` with the text block of its choice, and a user type implementing
//! `IntoCallToolResult`.

use mcp_runtime::IntoCallToolResult;
use mcp_runtime::prelude::*;

#[derive(Serialize, JsonSchema)]
struct Stats {
    count: usize,
    mean: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
enum Verdict {
    Pass,
    Fail,
}

#[tool]
async fn stats() -> Stats {
    Stats {
        count: 0,
        mean: None,
    }
}

#[tool]
fn scalar() -> f64 {
    1.5
}

#[tool]
fn list() -> Vec<u32> {
    vec![1, 2]
}

#[tool]
fn maybe() -> Option<Stats> {
    None
}

#[tool]
fn verdict() -> Verdict {
    if scalar() > 1.0 {
        Verdict::Pass
    } else {
        Verdict::Fail
    }
}

#[tool]
async fn text() -> String {
    String::new()
}

#[tool]
fn static_text() -> &'static str {
    "text"
}

#[tool]
async fn nothing() {}

#[tool]
fn unit() -> () {}

#[tool]
fn content() -> Content {
    Content::text("hi")
}

#[tool]
fn image() -> Image {
    Image::png([0u8; 4])
}

#[tool]
fn audio() -> Audio {
    Audio::new([0u8; 4], "audio/wav")
}

#[tool]
fn link() -> ResourceLink {
    ResourceLink::new("file:///a.txt", "a.txt")
}

#[tool]
fn embedded() -> EmbeddedResource {
    EmbeddedResource::text("file:///a.txt", "text/plain", "a")
}

#[tool]
fn contents() -> Vec<Content> {
    vec![Content::text("a"), Image::png([0u8; 4]).into()]
}

#[tool]
fn whole() -> CallToolResult {
    CallToolResult::error("no")
}

#[tool]
async fn fallible(ok: bool) -> Result<Stats, ToolError> {
    if ok {
        Ok(stats().await)
    } else {
        Err(ToolError::new("failed"))
    }
}

#[tool]
fn structured_indented() -> Structured<Stats> {
    Structured::indented(Stats {
        count: 1,
        mean: None,
    })
}

#[tool]
async fn structured_text(ok: bool) -> Result<Structured<Vec<u32>>, ToolError> {
    if ok {
        Ok(Structured::with_text(vec![1, 2], "one and two"))
    } else {
        Err(ToolError::new("failed"))
    }
}

#[tool]
fn fallible_text(ok: bool) -> Result<String, String> {
    if ok {
        Ok("yes".to_owned())
    } else {
        Err("no".to_owned())
    }
}

#[tool]
async fn read(path: String) -> Result<Vec<Content>, std::io::Error> {
    Ok(vec![Content::text(std::fs::read_to_string(path)?)])
}

struct Table(Vec<String>);

impl IntoCallToolResult for Table {
    fn into_call_tool_result(self) -> CallToolResult {
        CallToolResult::success(self.0.into_iter().map(Content::text))
    }
}

#[tool]
fn table() -> Table {
    Table(vec!["a".to_owned()])
}

#[tool]
fn fallible_table() -> Result<Table, ToolError> {
    Ok(table())
}

fn main() {
    Server::builder()
        .tool(stats)
        .tool(scalar)
        .tool(list)
        .tool(maybe)
        .tool(verdict)
        .tool(text)
        .tool(static_text)
        .tool(nothing)
        .tool(unit)
        .tool(content)
        .tool(image)
        .tool(audio)
        .tool(link)
        .tool(embedded)
        .tool(contents)
        .tool(whole)
        .tool(fallible)
        .tool(fallible_text)
        .tool(read)
        .tool(table)
        .tool(fallible_table)
        .build()
        .unwrap();
}
