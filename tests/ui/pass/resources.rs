//! Every accepted `#[resource]` shape.

use mcp_runtime::prelude::*;

/// Static text.
#[resource("test://text", mime_type = "text/plain", title = "Text", size = 5, audience = ["user", "assistant"], priority = 0.3, last_modified = "2025-01-01T00:00:00Z")]
async fn text() -> String {
    "hello".to_owned()
}

/// Static bytes.
#[resource("test://bytes", name = "bytes")]
fn bytes() -> Vec<u8> {
    vec![1, 2, 3]
}

/// A blob.
#[resource("test://blob", icons = ["https://example.com/i.png"], meta = serde_json::json!({"k": "v"}))]
fn blob() -> Blob {
    Blob(vec![0])
}

/// JSON.
#[resource("test://json")]
fn json() -> Vec<u32> {
    vec![1, 2]
}

/// Contents as they are.
#[resource("test://contents")]
fn contents() -> Vec<ResourceContents> {
    vec![ResourceContents::text("", "text/plain", "a")]
}

fn ids() -> Vec<ResourceInfo> {
    vec![ResourceInfo::new("notes://1", "one")]
}

async fn ids_later() -> Vec<String> {
    vec!["items://a".to_owned()]
}

fn complete_id(prefix: &str, _: &CompletionContext) -> Vec<String> {
    vec![prefix.to_owned()]
}

/// A note.
#[resource("notes://{id}", list = ids)]
async fn note(#[arg(complete = complete_id)] id: u64, ctx: Context) -> Result<String, ResourceError> {
    let _ = ctx;
    if id == 0 {
        return Err(ResourceError::NotFound);
    }
    Ok(id.to_string())
}

/// An item.
#[resource("items://{name}", list = ids_later)]
async fn item(name: String) -> Result<String, String> {
    Ok(name)
}

/// A file.
#[resource("files://{+path}", allow_traversal)]
fn file(path: String) -> String {
    path
}

/// Every level-4 operator.
#[resource("x://{a}-{+b}{#c}{.d}{/e*}{;f}{?g,h}{&i}")]
fn everything(a: String, b: String, c: Option<String>, d: Option<String>, e: Vec<String>, f: Option<u8>, g: Option<u32>, #[arg(default = 3)] h: u32, i: Vec<String>) -> String {
    format!("{a}{b}{c:?}{d:?}{e:?}{f:?}{g:?}{h}{i:?}")
}

/// A level the query may leave out.
type Level = Option<String>;

/// Tags, one path segment each.
type Tags = Vec<String>;

/// Optional and exploded variables are judged by type, so aliases work.
#[resource("logs://app{/tags*}{?level}")]
fn logs(tags: Tags, level: Level) -> String {
    format!("{tags:?}{level:?}")
}

fn main() {
    Server::builder()
        .resource(text)
        .resource(bytes)
        .resource(blob)
        .resource(json)
        .resource(contents)
        .resource(note)
        .resource(item)
        .resource(file)
        .resource(everything)
        .resource(logs)
        .build()
        .unwrap();
}
