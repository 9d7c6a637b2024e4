//! Prompts: typed arguments (parsed from the strings on the wire), defaults, optional
//! arguments, completion, and several messages.
//!
//! Run with: `cargo run -p mcp-examples --example prompts`
//!
//! It serves stdio; for example:
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"explain","arguments":{"topic":"monads","audience":"children"}}}
//! ```

use mcp_runtime::prelude::*;

/// How strict a review should be.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Strictness {
    Gentle,
    Thorough,
}

// Prompt arguments are strings on the wire, parsed with `FromStr`.
impl std::str::FromStr for Strictness {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gentle" => Ok(Self::Gentle),
            "thorough" => Ok(Self::Thorough),
            other => Err(format!("`{other}` is neither `gentle` nor `thorough`")),
        }
    }
}

/// Say hello: the simplest prompt, one user message.
#[prompt]
fn greet(
    /// Whom to greet.
    name: String,
) -> String {
    format!("Say hello to {name}.")
}

/// Explain a topic to an audience.
#[prompt(title = "Explain a topic")]
fn explain(
    /// What to explain.
    topic: String,
    /// Who will read the explanation.
    #[arg(complete = audiences)]
    audience: Option<String>,
    /// How many paragraphs.
    #[arg(default = 2)]
    paragraphs: u8,
) -> Vec<PromptMessage> {
    let audience = audience.unwrap_or_else(|| "a curious adult".to_owned());
    vec![
        PromptMessage::user(format!("Explain {topic} to {audience}.")),
        PromptMessage::assistant("Sure. How long should it be?"),
        PromptMessage::user(format!("{paragraphs} short paragraphs.")),
    ]
}

/// Review a piece of code. `strictness` completes from the enum's values with no code.
#[prompt(title = "Code review")]
fn review(
    /// The code to review.
    code: String,
    /// How strict to be.
    strictness: Strictness,
) -> String {
    let how = match strictness {
        Strictness::Gentle => "Point out only real bugs.",
        Strictness::Thorough => "Point out bugs, style and naming.",
    };
    format!("Review this code. {how}\n\n{code}")
}

/// Audiences starting with what the client typed so far.
fn audiences(prefix: &str, _: &CompletionContext) -> Vec<&'static str> {
    ["beginners", "children", "experts", "managers"]
        .into_iter()
        .filter(|a| a.starts_with(prefix))
        .collect()
}

/// What `--help` prints.
const USAGE: &str = "\
usage: prompts [--help]

Prompts with typed arguments and completion, served over stdio.
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_examples::help(USAGE);
    Server::new("prompts", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
