//! Tools the behaviour tests serve. Each test selects the ones it needs with
//! `Server::builder().tool(..)`, since every `#[tool]` in this binary is registered.

use std::time::Duration;

use mcp_runtime::prelude::*;

/// Add two integers.
#[tool(read_only, idempotent)]
pub(crate) async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// A colour the painter knows.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Colour {
    /// Warm.
    Red,
    /// Calm.
    Blue,
}

/// Where to paint.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Wall {
    /// Width in metres.
    pub(crate) width: f64,
    /// Height in metres.
    pub(crate) height: Option<f64>,
}

/// What a paint job costs.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Quote {
    /// The colour.
    pub(crate) colour: Colour,
    /// Square metres.
    pub(crate) area: f64,
    /// Litres of paint needed.
    pub(crate) litres: f64,
    /// A note, when there is one.
    pub(crate) note: Option<String>,
}

/// Quote a paint job.
///
/// The price depends on the wall and the number of coats.
#[tool(title = "Paint quote", icons = ["https://example.com/paint.png"], meta = serde_json::json!({"example.com/tier": "free"}))]
pub(crate) async fn paint(
    /// The colour to paint with.
    colour: Colour,
    /// The wall.
    wall: Wall,
    /// How many coats.
    #[arg(default = 2)]
    coats: u32,
    /// Who is asking.
    #[arg(rename = "customerName", example = "Ada")]
    customer: Option<String>,
) -> Quote {
    let area = wall.width * wall.height.unwrap_or(2.5);
    Quote {
        colour,
        area,
        litres: area * f64::from(coats) / 10.0,
        note: customer.map(|c| format!("for {c}")),
    }
}

/// Greet someone.
#[tool]
pub(crate) fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Fail on purpose.
#[tool(destructive)]
pub(crate) async fn fail(reason: String) -> Result<String, ToolError> {
    Err(ToolError::new(format!("failed because {reason}")))
}

/// Panic on purpose.
#[tool]
pub(crate) async fn explode() -> String {
    panic!("secret internal detail at /home/build/src/lib.rs")
}

/// Sleep, then answer.
#[tool]
pub(crate) async fn slow(
    /// How long to sleep, in milliseconds.
    millis: u64,
) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "done".to_owned()
}

/// A filter for a search.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Search {
    /// What to look for.
    pub(crate) query: String,
    /// At most this many hits.
    pub(crate) limit: Option<u32>,
}

/// Search, taking the whole input as one struct.
#[tool]
pub(crate) async fn search(Args(search): Args<Search>) -> Vec<String> {
    vec![search.query; search.limit.unwrap_or(1) as usize]
}

/// Report what the context knows.
#[tool]
pub(crate) async fn whoami(ctx: Context, version: ProtocolVersion) -> String {
    format!(
        "{} {} {}",
        ctx.client().implementation.name,
        version,
        ctx.request_id()
    )
}

/// Mixed content blocks.
#[tool]
pub(crate) async fn gallery() -> Vec<Content> {
    vec![
        Content::text("a picture"),
        Image::png([137, 80, 78, 71]).into(),
        ResourceLink::new("file:///pic.png", "pic.png").into(),
    ]
}

/// Do nothing.
#[tool]
pub(crate) async fn noop() {}

/// Two tools may not share a name: these two collide on purpose.
pub(crate) mod clash {
    use mcp_runtime::prelude::*;

    /// One.
    #[tool(name = "same")]
    pub(crate) async fn first() -> String {
        String::new()
    }

    /// Two.
    #[tool(name = "same")]
    pub(crate) async fn second() -> String {
        String::new()
    }
}

/// Not a tool.
pub(crate) async fn plain() {}

/// Plain text.
#[resource("test://static", mime_type = "text/plain", audience = ["user"], priority = 0.5)]
pub(crate) async fn static_text() -> String {
    "hello".to_owned()
}

/// Some bytes.
#[resource("test://binary", mime_type = "image/png", size = 4)]
pub(crate) fn binary() -> Vec<u8> {
    vec![137, 80, 78, 71]
}

/// Settings, as JSON.
#[resource("test://config", title = "Configuration")]
pub(crate) fn config() -> Quote {
    Quote {
        colour: Colour::Blue,
        area: 1.0,
        litres: 0.1,
        note: None,
    }
}

fn note_ids() -> Vec<ResourceInfo> {
    vec![
        ResourceInfo::new("notes://1", "note-1"),
        ResourceInfo::new("notes://2", "note-2"),
    ]
}

fn complete_ids(prefix: &str, context: &CompletionContext) -> Vec<String> {
    let base = context.argument("base").unwrap_or("");
    (1..=150)
        .map(|i| format!("{base}{i}"))
        .filter(|id| id.starts_with(prefix))
        .collect()
}

/// A note by number.
#[resource("notes://{id}", mime_type = "text/plain", list = note_ids)]
pub(crate) async fn note(
    /// The note's number.
    #[arg(complete = complete_ids)]
    id: u32,
) -> Result<String, ResourceError> {
    if id > 100 {
        return Err(ResourceError::NotFound);
    }
    Ok(format!("note {id}"))
}

/// A file under the root.
#[resource("files://{+path}")]
pub(crate) fn file(path: String) -> String {
    format!("file {path}")
}

/// Anything, unchecked.
#[resource("raw://{+path}", allow_traversal)]
pub(crate) fn raw(path: String) -> String {
    format!("raw {path}")
}

/// Search with query parameters.
#[resource("search://items{?q,limit}")]
pub(crate) fn search_items(q: Option<String>, #[arg(default = 10)] limit: u32) -> String {
    format!("q={q:?} limit={limit}")
}

/// A tree path.
#[resource("tree://root{/segments*}")]
pub(crate) fn tree(segments: Vec<String>, version: ProtocolVersion) -> String {
    format!(
        "{} segments at {version}: {}",
        segments.len(),
        segments.join("|")
    )
}

impl std::str::FromStr for Colour {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "red" => Ok(Self::Red),
            "blue" => Ok(Self::Blue),
            other => Err(format!("unknown colour `{other}`")),
        }
    }
}

/// A prompt with no arguments.
#[prompt]
pub(crate) fn simple() -> String {
    "Say hello.".to_owned()
}

/// Count things.
#[prompt(title = "Counter")]
pub(crate) fn counter(
    /// How many.
    count: u32,
    /// What to call them.
    label: Option<String>,
    /// The colour.
    colour: Option<Colour>,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!(
            "{count} {}",
            label.unwrap_or_else(|| "things".to_owned())
        )),
        PromptMessage::assistant(format!("{colour:?}")),
    ]
}

fn languages(prefix: &str, _: &CompletionContext) -> [&'static str; 3] {
    let _ = prefix;
    ["python", "rust", "typescript"]
}

/// Review code.
#[prompt]
pub(crate) fn review(
    /// The code.
    code: String,
    /// Its language.
    #[arg(complete = languages)]
    language: Option<String>,
) -> GetPromptResult {
    let mut result = GetPromptResult::new([
        PromptMessage::user(EmbeddedResource::text("file:///code", "text/plain", code)),
        PromptMessage::user(Image::png([1, 2])),
        PromptMessage::user(ResourceLink::new("file:///code", "code")),
    ]);
    result.description = language;
    result
}

/// Refuse.
#[prompt]
pub(crate) fn refuse(reason: String) -> Result<String, String> {
    Err(format!("refused: {reason}"))
}

/// Report progress three times.
#[tool]
pub(crate) async fn three_steps(ctx: Context) -> String {
    for step in 1..=3 {
        ctx.progress(f64::from(step), 3.0, format!("step {step}"))
            .await;
        // Going backwards is not progress: never sent.
        ctx.progress(0.5, 3.0, "backwards").await;
    }
    "done".to_owned()
}

/// Log at every interesting level.
#[tool]
pub(crate) async fn chatty(ctx: Context) -> String {
    ctx.debug("a debug line").await;
    ctx.info(serde_json::json!({"event": "info"})).await;
    ctx.warning("a warning").await;
    ctx.log_from("db", mcp_runtime::protocol::LoggingLevel::Error, "an error")
        .await;
    "logged".to_owned()
}

/// Set when `patient` ran to the end.
pub(crate) static PATIENT_FINISHED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Wait, then record that the work finished.
#[tool]
pub(crate) async fn patient(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    PATIENT_FINISHED.store(true, std::sync::atomic::Ordering::SeqCst);
    "finished".to_owned()
}

/// A way to reach someone.
#[derive(Debug, Deserialize, Elicit)]
pub(crate) struct Contact {
    /// Your name.
    #[elicit(title = "Name", min_length = 1)]
    pub(crate) name: String,
    /// Your email address.
    #[elicit(format = "email")]
    pub(crate) email: String,
    /// How old you are.
    #[elicit(minimum = 0, maximum = 150)]
    pub(crate) age: Option<u32>,
    /// Whether to send news.
    #[elicit(default = true)]
    pub(crate) newsletter: bool,
    /// Preferred colour.
    pub(crate) colour: Shade,
    /// Interests.
    pub(crate) topics: Vec<Topic>,
}

/// A shade.
#[derive(Debug, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Shade {
    /// Light.
    #[elicit(title = "Light shade")]
    Light,
    /// Dark.
    #[elicit(title = "Dark shade")]
    Dark,
}

/// A topic.
#[derive(Debug, Deserialize, Elicit)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Topic {
    /// Rust.
    RustLang,
    /// Go.
    GoLang,
}

/// Ask who is there.
#[tool]
pub(crate) async fn who(ctx: Context) -> Result<String, ToolError> {
    Ok(match ctx.elicit::<Contact>("Who are you?").await? {
        Elicitation::Accept(contact) => format!(
            "{} <{}> {:?} {:?} {:?} {}",
            contact.name,
            contact.email,
            contact.colour,
            contact.topics,
            contact.age,
            contact.newsletter
        ),
        Elicitation::Decline => "declined".to_owned(),
        Elicitation::Cancel => "cancelled".to_owned(),
    })
}

/// Ask the client's model.
#[tool]
pub(crate) async fn ask(question: String, ctx: Context) -> Result<String, ToolError> {
    let request = mcp_runtime::context::SamplingRequest::new(50)
        .user(question)
        .system_prompt("Be brief.");
    let answer = ctx.sample(request).await?;
    Ok(format!("{} said: {}", answer.model, answer.text()))
}

/// List the client's roots, twice.
#[tool]
pub(crate) async fn workspace(ctx: Context) -> Result<String, ToolError> {
    let first = ctx.roots().await?;
    let second = ctx.roots().await?;
    Ok(format!(
        "{} {}",
        first.len(),
        second
            .iter()
            .map(|r| r.uri.as_str())
            .collect::<Vec<_>>()
            .join(",")
    ))
}

/// A name, asked for.
#[derive(Debug, Deserialize, Elicit)]
pub(crate) struct Name {
    /// Your name.
    pub(crate) name: String,
}

/// Ask a name, then the model, then the roots: three questions, one at a time.
#[tool]
pub(crate) async fn interview(ctx: Context) -> Result<String, ToolError> {
    let name = match ctx.elicit::<Name>("Your name?").await? {
        Elicitation::Accept(form) => form.name,
        Elicitation::Decline | Elicitation::Cancel => return Ok("no name".to_owned()),
    };
    let request = mcp_runtime::context::SamplingRequest::new(20).user(format!("Greet {name}"));
    let greeting = ctx.sample(request).await?.text();
    let roots = ctx.roots().await?;
    Ok(format!("{greeting} ({} roots)", roots.len()))
}

/// Set when `lingering` ran to the end.
pub(crate) static LINGERING_FINISHED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Wait a while, then record that the work finished (for cancellation by closing the stream).
#[tool]
pub(crate) async fn lingering(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    LINGERING_FINISHED.store(true, std::sync::atomic::Ordering::SeqCst);
    "finished".to_owned()
}

/// The forecast for a region, some days ahead.
#[tool]
pub(crate) async fn forecast(
    /// Where.
    #[arg(header = "Region")]
    region: String,
    /// How many days ahead.
    #[arg(header = "Days")]
    days: Option<u32>,
) -> String {
    format!("{region} in {} days: sunny", days.unwrap_or(1))
}

/// A shelf whose tool is named like `McpServer::items`.
pub(crate) struct Shelf {
    pub(crate) books: Vec<String>,
}

#[server(name = "shelf")]
impl Shelf {
    /// The books on the shelf.
    #[tool]
    fn items(&self) -> Vec<String> {
        self.books.clone()
    }
}

/// Never answer: a handler stuck on something that does not come.
#[tool]
pub(crate) async fn hang() -> String {
    std::future::pending::<()>().await;
    "unreachable".to_owned()
}

/// A resource that never loads.
#[resource("test://forever")]
pub(crate) async fn forever() -> String {
    std::future::pending::<()>().await;
    "unreachable".to_owned()
}

/// A long text, to be cut off while it is being sent.
#[tool]
pub(crate) async fn long_text(
    /// How many bytes.
    bytes: usize,
) -> String {
    "x".repeat(bytes)
}

/// How many `hang_counted` calls are running now.
pub(crate) static HANGING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Never answer, and count the calls still running (a call that is stopped stops counting).
#[tool]
pub(crate) async fn hang_counted() -> String {
    struct Running;
    impl Drop for Running {
        fn drop(&mut self) {
            HANGING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    HANGING.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _running = Running;
    std::future::pending::<()>().await;
    "unreachable".to_owned()
}
