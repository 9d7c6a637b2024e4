//! Every accepted `#[prompt]` shape.

use mcp_runtime::prelude::*;

/// No arguments.
#[prompt]
fn plain() -> String {
    String::new()
}

/// A static string.
#[prompt(name = "static-text", title = "Static")]
fn static_text() -> &'static str {
    "hi"
}

fn languages(_: &str, _: &CompletionContext) -> [&'static str; 2] {
    ["rust", "go"]
}

/// Typed arguments.
#[prompt(icons = ["https://example.com/p.png"])]
async fn typed(
    /// How many.
    count: u32,
    /// Which language.
    #[arg(complete = languages)]
    language: Option<String>,
    #[arg(default = 2, rename = "maxLines")] max_lines: u8,
    ctx: Context,
) -> Vec<PromptMessage> {
    let _ = ctx;
    vec![PromptMessage::user(format!("{count} {language:?} {max_lines}"))]
}

/// One message.
#[prompt]
fn message() -> PromptMessage {
    PromptMessage::assistant(Content::text("x"))
}

/// A whole result.
#[prompt]
fn result() -> Result<GetPromptResult, String> {
    Ok(GetPromptResult::new([PromptMessage::user("x")]))
}

fn main() {
    Server::builder().prompt(plain).prompt(static_text).prompt(typed).prompt(message).prompt(result).build().unwrap();
}
