//! The catalogue of the official MCP conformance suite (`@modelcontextprotocol/conformance`),
//! written with the framework's macros the way a user would write them.
//!
//! Run with: `cargo run -p mcp-examples --example everything` (serves stdio), or
//! `cargo run -p mcp-examples --example everything -- --port 3000` (Streamable HTTP on
//! `http://127.0.0.1:3000/mcp`, and the deprecated HTTP+SSE transport of 2024-11-05 at
//! `http://127.0.0.1:3000/sse` for clients that speak only it). `--redis redis://127.0.0.1:6379`
//! beside `--port` shares the sessions with other replicas through that Redis (`--redis-prefix
//! PREFIX` puts its keys under another prefix than `mcp`); `--issuer URL --resource URL` makes
//! it an OAuth 2.1 resource server for that issuer's tokens (what `scripts/hostile.sh` uses to
//! key the fair shares by principal); `--trusted-proxy ADDRESS` believes that reverse proxy's
//! `X-Forwarded-For` (HAProxy in front of replicas); `--json-response` answers every POST with
//! `application/json`, never an SSE stream. `/healthz` and `/readyz` are the probes. `--unix
//! PATH` instead of `--port` serves the same on a Unix domain socket (mode 0600, removed at
//! shutdown). `--help` lists every flag.
//!
//! Production settings, on either transport: `--metrics-port M` keeps the OpenTelemetry
//! conventions' metrics and serves them as Prometheus text at `http://127.0.0.1:M/metrics` (an
//! HTTP server has them at `/metrics` on its own port too); `--rate-limit N` allows N
//! `tools/call` a second per client (the OAuth principal when there is one, else the client's
//! address; on stdio the connection), however many sessions it opens, refusing the rest with
//! -32023 and `retryAfterMs` (HTTP 429 with `Retry-After`). `--cache` adds a response cache behind a tenant layer
//! (the tenant from `_meta.tenant`, as the README's middleware example reads it) and a tool
//! whose answer names the tenant and the client, `cached_report`, both off otherwise. With the
//! `otel-context` feature, `--otel` has request spans continue the trace a client sends in
//! `params._meta` (W3C Trace Context, exported nowhere).

use std::time::Duration;

use mcp_runtime::ServerCard;
use mcp_runtime::middleware::RateLimitLayer;
use mcp_runtime::prelude::*;
use mcp_runtime::telemetry::Telemetry;
use mcp_runtime::tool::ToolDef;

/// A 1×1 PNG.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn png() -> Image {
    Image::from_base64(PNG_BASE64, "image/png")
}

/// A tiny WAV file: 8 kHz, 8-bit mono, eight samples of silence.
fn wav() -> Vec<u8> {
    let samples = [128u8; 8];
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&8u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// Answers with plain text.
#[tool]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Answers with an image.
#[tool]
async fn test_image_content() -> Image {
    png()
}

/// Answers with audio.
#[tool]
async fn test_audio_content() -> Audio {
    Audio::new(wav(), "audio/wav")
}

/// Answers with an embedded resource.
#[tool]
async fn test_embedded_resource() -> EmbeddedResource {
    EmbeddedResource::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Answers with text, an image and a resource.
#[tool]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        png().into(),
        EmbeddedResource::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )
        .into(),
    ]
}

/// Logs three messages while it works.
#[tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.info("Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.info("Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.info("Tool execution completed").await;
    "Tool with logging executed successfully"
}

/// Reports progress three times.
#[tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(done, 100.0, format!("Completed step {} of 3", i + 1))
            .await;
    }
    "Tool with progress executed successfully"
}

/// Always fails, as a tool error.
#[tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Asks the client's model.
#[tool]
async fn test_sampling(
    /// The prompt to send to the model.
    prompt: String,
    ctx: Context,
) -> Result<String, ToolError> {
    let answer = ctx
        .sample(mcp_runtime::context::SamplingRequest::new(100).user(prompt))
        .await?;
    Ok(format!("LLM response: {}", answer.text()))
}

/// What `test_elicitation` asks for.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct UserResponse {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the user for information.
#[tool]
async fn test_elicitation(
    /// What to ask the user.
    message: String,
    ctx: Context,
) -> Result<String, ToolError> {
    let (action, content) = match ctx.elicit::<UserResponse>(message).await? {
        Elicitation::Accept(response) => (
            "accept",
            serde_json::to_string(&response).unwrap_or_default(),
        ),
        Elicitation::Decline => ("decline", "null".to_owned()),
        Elicitation::Cancel => ("cancel", "null".to_owned()),
    };
    Ok(format!("User response: action={action}, content={content}"))
}

/// A status with a default.
#[derive(Debug, Serialize, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// Every primitive with a default (SEP-1034).
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct WithDefaults {
    /// User name
    #[elicit(default = "John Doe")]
    name: Option<String>,
    /// User age
    #[elicit(default = 30)]
    age: Option<i64>,
    /// User score
    #[elicit(default = 95.5)]
    score: Option<f64>,
    /// User status
    #[elicit(default = "active")]
    status: Option<Status>,
    /// Verification status
    #[elicit(default = true)]
    verified: Option<bool>,
}

/// Elicits a form whose every field has a default.
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, ToolError> {
    let (action, content) = match ctx
        .elicit::<WithDefaults>("Please review and update the form fields with defaults")
        .await?
    {
        Elicitation::Accept(form) => ("accept", serde_json::to_string(&form).unwrap_or_default()),
        Elicitation::Decline => ("decline", "null".to_owned()),
        Elicitation::Cancel => ("cancel", "null".to_owned()),
    };
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

#[derive(Debug, Serialize, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
enum Untitled {
    Option1,
    Option2,
    Option3,
}

#[derive(Debug, Serialize, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
enum TitledSingle {
    #[elicit(title = "First Option")]
    Value1,
    #[elicit(title = "Second Option")]
    Value2,
    #[elicit(title = "Third Option")]
    Value3,
}

#[derive(Debug, Serialize, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(enum_names)]
enum Legacy {
    #[elicit(title = "Option One")]
    Opt1,
    #[elicit(title = "Option Two")]
    Opt2,
    #[elicit(title = "Option Three")]
    Opt3,
}

#[derive(Debug, Serialize, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
enum TitledMulti {
    #[elicit(title = "First Choice")]
    Value1,
    #[elicit(title = "Second Choice")]
    Value2,
    #[elicit(title = "Third Choice")]
    Value3,
}

/// Every enum shape of SEP-1330.
#[derive(Debug, Serialize, Deserialize, Elicit)]
#[serde(rename_all = "camelCase")]
struct EnumForms {
    /// Untitled single-select
    untitled_single: Option<Untitled>,
    /// Titled single-select
    titled_single: Option<TitledSingle>,
    /// Legacy titled enum
    legacy_enum: Option<Legacy>,
    /// Untitled multi-select
    untitled_multi: Option<Vec<Untitled>>,
    /// Titled multi-select
    titled_multi: Option<Vec<TitledMulti>>,
}

/// Elicits every enum shape.
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, ToolError> {
    let (action, content) = match ctx
        .elicit::<EnumForms>("Please select options from the enum fields")
        .await?
    {
        Elicitation::Accept(form) => ("accept", serde_json::to_string(&form).unwrap_or_default()),
        Elicitation::Decline => ("decline", "null".to_owned()),
        Elicitation::Cancel => ("cancel", "null".to_owned()),
    };
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Ends its SSE response mid-call; the result arrives when the client resumes the stream.
#[tool]
async fn test_reconnection(ctx: Context) -> &'static str {
    ctx.close_sse_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully"
}

/// What `test_structured_content` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    /// The city reported on.
    city: String,
    /// Degrees Celsius.
    temperature: f64,
    /// The sky, in a word or two.
    conditions: String,
}

/// Answers with structured content that validates against the tool's `outputSchema`.
#[tool]
async fn test_structured_content(
    /// The city to report on.
    city: String,
) -> Forecast {
    Forecast {
        city,
        temperature: 21.5,
        conditions: "sunny".to_owned(),
    }
}

/// Announces that `test://watched-resource` changed (`notifications/resources/updated`, to
/// subscribers) and that the resource list changed.
#[tool]
async fn test_trigger_resource_update(ctx: Context) -> &'static str {
    ctx.server().resource_updated("test://watched-resource");
    ctx.server().resources_list_changed();
    "Announced an update of test://watched-resource and a resource list change"
}

/// A tool that comes and goes: `test_trigger_tool_change` hides it and shows it again.
#[tool]
async fn test_dynamic_tool() -> &'static str {
    "I come and go"
}

/// A prompt that comes and goes: `test_trigger_prompt_change` hides it and shows it again.
#[prompt(title = "Dynamic Prompt")]
fn test_dynamic_prompt() -> &'static str {
    "I come and go"
}

/// Test hook of the conformance suite, not for models: hides `test_dynamic_tool`, or shows it
/// again when it is hidden, so the tool list changes and `notifications/tools/list_changed`
/// reaches sessions and `subscriptions/listen` streams.
#[tool]
async fn test_trigger_tool_change(ctx: Context) -> &'static str {
    if ctx.server().disable_tool("test_dynamic_tool") {
        "Hid test_dynamic_tool"
    } else {
        ctx.server().enable_tool("test_dynamic_tool");
        "Showed test_dynamic_tool again"
    }
}

/// Test hook of the conformance suite, not for models: hides `test_dynamic_prompt`, or shows it
/// again when it is hidden, so the prompt list changes and `notifications/prompts/list_changed`
/// reaches sessions and `subscriptions/listen` streams.
#[tool]
async fn test_trigger_prompt_change(ctx: Context) -> &'static str {
    if ctx.server().disable_prompt("test_dynamic_prompt") {
        "Hid test_dynamic_prompt"
    } else {
        ctx.server().enable_prompt("test_dynamic_prompt");
        "Showed test_dynamic_prompt again"
    }
}

/// Logs once at `info`; a 2026-07-28 client that sets no log level must see no message.
#[tool]
async fn test_logging_tool(ctx: Context) -> &'static str {
    ctx.info("test_logging_tool ran").await;
    "Logged one message"
}

/// Needs the client's `sampling` capability: a client without it gets -32021.
#[tool]
async fn test_missing_capability(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx
        .sample(mcp_runtime::context::SamplingRequest::new(10).user("Say hello"))
        .await?;
    Ok(format!("LLM response: {}", answer.text()))
}

/// Reports progress while it asks the user: the response stream carries only notifications.
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> Result<String, ToolError> {
    ctx.progress(0.0, 1.0, "asking the user").await;
    let name = ask_name(&ctx, "user_name").await?;
    Ok(format!("Hello, {name}!"))
}

/// What the input-required fixtures ask the user.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct NameForm {
    /// Your name
    name: String,
}

/// A yes/no question.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct ConfirmForm {
    /// Whether it is all right
    ok: bool,
}

/// The second question of the multi-round fixture.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct ColorForm {
    /// Your favorite color
    color: String,
}

/// What the input-required prompt asks.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct ContextForm {
    /// The context the prompt should use
    context: String,
}

/// What the user typed as their name, asked under `key` (the suite answers `user_name`); a
/// declined or cancelled form counts as "there".
async fn ask_name(ctx: &Context, key: &str) -> Result<String, ToolError> {
    let form = ctx
        .input(key)
        .elicit::<NameForm>("What is your name?")
        .await?;
    Ok(match form {
        Elicitation::Accept(form) => form.name,
        Elicitation::Decline | Elicitation::Cancel => "there".to_owned(),
    })
}

/// Asks the user's name (an `elicitation/create` input request, `user_name`), then greets them.
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, ToolError> {
    let name = ask_name(&ctx, "user_name").await?;
    Ok(format!("Hello, {name}!"))
}

/// Asks the client's model (a `sampling/createMessage` input request, `capital_question`).
#[tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ToolError> {
    let question =
        mcp_runtime::context::SamplingRequest::new(100).user("What is the capital of France?");
    let answer = ctx.input("capital_question").sample(question).await?;
    Ok(format!("Sampling result: {}", answer.text()))
}

/// Asks the client's roots (a `roots/list` input request, `client_roots`).
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.input("client_roots").roots().await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Roots: {}", uris.join(", ")))
}

/// Asks for a confirmation (`confirm`); the signed `requestState` carries the answer across the
/// retry.
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, ToolError> {
    let confirmed = matches!(
        ctx.input("confirm")
            .elicit::<ConfirmForm>("Please confirm")
            .await?,
        Elicitation::Accept(ConfirmForm { ok: true })
    );
    Ok(format!("state-ok: confirmed={confirmed}"))
}

/// Asks the user, the client's model and its roots, all in one round (`user_name`, `greeting`,
/// `client_roots`).
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, ToolError> {
    let greeting = mcp_runtime::context::SamplingRequest::new(50).user("Generate a greeting");
    let (name, answer, roots) = tokio::join!(
        ask_name(&ctx, "user_name"),
        ctx.input("greeting").sample(greeting),
        ctx.input("client_roots").roots()
    );
    let (name, answer, roots) = (name?, answer?, roots?);
    Ok(format!(
        "Hello, {name}! Greeting: {}; {} root(s)",
        answer.text(),
        roots.len()
    ))
}

/// Two rounds: the user's name (`step1`), then their favorite color (`step2`).
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, ToolError> {
    let name = match ctx
        .input("step1")
        .elicit::<NameForm>("Step 1: What is your name?")
        .await?
    {
        Elicitation::Accept(form) => form.name,
        Elicitation::Decline | Elicitation::Cancel => "there".to_owned(),
    };
    let color = match ctx
        .input("step2")
        .elicit::<ColorForm>("Step 2: What is your favorite color?")
        .await?
    {
        Elicitation::Accept(form) => form.color,
        Elicitation::Decline | Elicitation::Cancel => "none".to_owned(),
    };
    Ok(format!("Both steps done, {name} likes {color}"))
}

/// Asks for a confirmation (`confirm`); a retry whose `requestState` was altered is refused.
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, ToolError> {
    ctx.input("confirm")
        .elicit::<ConfirmForm>("Please confirm")
        .await?;
    Ok("state-ok".to_owned())
}

/// Asks the user's name where the client can elicit; with only sampling declared it asks the
/// model instead, so no `elicitation/create` is requested of a client that cannot answer it.
#[tool]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, ToolError> {
    if ctx.client().capabilities.elicitation_form() {
        let name = ask_name(&ctx, "user_name").await?;
        return Ok(format!("Hello, {name}!"));
    }
    let answer = ctx
        .sample(mcp_runtime::context::SamplingRequest::new(20).user("Pick a name"))
        .await?;
    Ok(format!("Hello, {}!", answer.text()))
}

/// Echoes a string argument that HTTP clients also send in the `Mcp-Param-Region` header.
#[tool]
async fn test_header_echo(
    /// A region name, mirrored in the `Mcp-Param-Region` header.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("Region: {region}")
}

/// A tool whose input schema is raw JSON Schema 2020-12, sent exactly as written.
fn json_schema_2020_12_tool() -> ToolDef {
    use mcp_runtime::tool::{ToolBuilder, ToolCall};
    let mut builder = ToolBuilder::new("json_schema_2020_12_tool", |mut call: ToolCall| {
        Box::pin(async move {
            let arguments = serde_json::Value::Object(call.take_arguments());
            CallToolResult::success([Content::text(format!("Received: {arguments}"))])
        })
    });
    builder.description(
        "Tool with a JSON Schema 2020-12 input schema: $schema, $defs with $anchor, composition, \
         conditionals and additionalProperties.",
    );
    builder.raw_input_schema(serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }));
    builder.build()
}

/// A static text resource.
#[resource(
    "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource.
#[resource(
    "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
async fn static_binary() -> ResourceContents {
    ResourceContents::Blob(mcp_runtime::protocol::BlobResourceContents {
        uri: "test://static-binary".to_owned(),
        mime_type: Some("image/png".to_owned()),
        blob: PNG_BASE64.to_owned(),
        meta: None,
    })
}

/// Template data.
#[derive(Serialize)]
struct TemplateData {
    id: String,
    #[serde(rename = "templateTest")]
    template_test: bool,
    data: String,
}

/// A resource template with an id.
#[resource(
    "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
async fn template(
    /// Any id.
    id: String,
) -> TemplateData {
    TemplateData {
        data: format!("Data for ID: {id}"),
        id,
        template_test: true,
    }
}

/// A resource clients may subscribe to.
#[resource(
    "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain"
)]
async fn watched() -> &'static str {
    "Watched resource content"
}

/// A prompt without arguments.
#[prompt(title = "Simple Prompt")]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

fn complete_arg1(prefix: &str, _: &CompletionContext) -> Vec<String> {
    ["paris", "park", "parrot", "test", "testing"]
        .into_iter()
        .filter(|v| v.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// A prompt with two arguments.
#[prompt(title = "Prompt With Arguments")]
fn test_prompt_with_arguments(
    /// First test argument
    #[arg(complete = complete_arg1)]
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds a resource.
#[prompt(title = "Prompt With Embedded Resource")]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(EmbeddedResource::text(
            resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt(title = "Prompt With Image")]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(png()),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Asks the user for context (an input request on `prompts/get`, `user_context`), then returns
/// the prompt.
#[prompt(title = "Input Required Prompt")]
async fn test_input_required_result_prompt(ctx: Context) -> Result<String, String> {
    let form = ctx
        .input("user_context")
        .elicit::<ContextForm>("What context should the prompt use?")
        .await;
    let context = match form {
        Ok(Elicitation::Accept(form)) => form.context,
        Ok(Elicitation::Decline | Elicitation::Cancel) => "nobody".to_owned(),
        Err(e) => return Err(e.to_string()),
    };
    Ok(format!("A prompt for {context}."))
}

// The tasks extension's fixtures (`tasks-*` scenarios): tools that may, or must, run as tasks.

/// Greets `name`; never a task.
#[tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` seconds, then reports on `label`; a task for clients that take one.
#[tool(task = "optional")]
async fn slow_compute(ctx: Context, seconds: f64, label: Option<String>) -> String {
    let label = label.unwrap_or_else(|| "job".to_owned());
    let total = Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
    let step = Duration::from_millis(100);
    let mut done = Duration::ZERO;
    while done < total {
        let next = step.min(total - done);
        tokio::time::sleep(next).await;
        done += next;
        ctx.progress(
            done.as_secs_f64(),
            total.as_secs_f64(),
            format!("{label}: working"),
        )
        .await;
    }
    format!("{label}: computed for {seconds} s")
}

/// Always fails as a tool (`isError`), after about a second; only as a task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("the job failed, as it always does"))
}

/// Panics after a moment: the task ends `failed`, the server lives on.
#[tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job fails at the protocol level on purpose")
}

/// A yes/no confirmation.
#[derive(Debug, Serialize, Deserialize, Elicit)]
struct DeleteForm {
    /// Delete it?
    confirm: bool,
}

/// Asks before deleting `filename` (one `elicitation/create` while the task runs).
#[tool(task = "optional")]
async fn confirm_delete(ctx: Context, filename: String) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<DeleteForm>(format!("Delete {filename}?"))
        .await?;
    Ok(match answer {
        Elicitation::Accept(DeleteForm { confirm: true }) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// Asks two questions at once (two `elicitation/create` input requests pending together).
#[tool(task = "optional")]
async fn multi_input(ctx: Context) -> Result<String, ToolError> {
    let (name, confirm) = tokio::join!(
        ctx.elicit::<NameForm>("What is your name?"),
        ctx.elicit::<DeleteForm>("Go ahead?")
    );
    let name = match name? {
        Elicitation::Accept(form) => form.name,
        _ => "nobody".to_owned(),
    };
    let confirmed = matches!(confirm?, Elicitation::Accept(DeleteForm { confirm: true }));
    Ok(format!("name={name}, confirmed={confirmed}"))
}

/// Asks the user's name before the task exists (an input-required round on `tools/call`), then
/// runs as a task that greets them.
#[tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, ToolError> {
    let name = ctx.before_task(ask_name(&ctx, "user_name")).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}! (from a task)"))
}

/// The tenant a request's `_meta.tenant` names (`none` without one).
#[derive(Clone, Hash)]
struct Tenant(String);

/// Puts the request's tenant in its extensions, as the README's middleware example does.
async fn tenant_from_meta(
    mut request: mcp_runtime::middleware::McpRequest,
    next: mcp_runtime::middleware::Next,
) -> mcp_runtime::middleware::McpResponse {
    let tenant = request
        .meta()
        .and_then(|meta| meta.get("tenant")?.as_str())
        .unwrap_or("none")
        .to_owned();
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}

/// `cached_report` (with `--cache`): read-only and idempotent, so the cache keeps its answers;
/// the answer names the tenant and the client, and counts the runs, so one caller's answer
/// served to another shows.
fn cached_report() -> ToolDef {
    use std::sync::atomic::{AtomicU64, Ordering};
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let mut builder = mcp_runtime::tool::ToolBuilder::new(
        "cached_report",
        |call: mcp_runtime::tool::ToolCall| {
            let ctx = call.context().clone();
            Box::pin(async move {
                let tenant = ctx
                    .extensions()
                    .get::<Tenant>()
                    .map_or("none".to_owned(), |t| t.0.clone());
                let client = ctx.client().implementation.name.clone();
                let run = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
                CallToolResult::success([Content::text(format!(
                    "tenant={tenant} client={client} run={run}"
                ))])
            })
        },
    );
    builder
        .description("The caller's report: names its tenant and its client.")
        .raw_input_schema(serde_json::json!({"type": "object"}))
        .annotations(mcp_runtime::tool::ToolAnnotations {
            read_only_hint: Some(true),
            idempotent_hint: Some(true),
            ..Default::default()
        });
    builder.build()
}

/// `--otel` (feature `otel-context`): W3C Trace Context read from `params._meta` and spans made
/// by the OpenTelemetry SDK, exported nowhere.
#[cfg(feature = "otel-context")]
fn with_trace_context<S>(otel: bool) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::Layer as _;
    if otel {
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
    }
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("everything"))
        .with_filter(tracing_subscriber::filter::filter_fn(move |_| otel))
}

/// What `--help` prints.
const USAGE: &str = "\
usage: everything [--port PORT | --unix PATH] [--redis URL [--redis-prefix PREFIX]]
                  [--issuer URL --resource URL] [--trusted-proxy ADDRESS] [--rate-limit N]
                  [--metrics-port PORT] [--cache] [--otel] [--json-response] [--help]

The catalogue of the MCP conformance suite. Serves stdio, or with --port Streamable HTTP on
http://127.0.0.1:PORT/mcp (and the deprecated HTTP+SSE transport on /sse), or with --unix
the same on a Unix domain socket at PATH (mode 0600; clients post to http://localhost/mcp).
  --redis URL            share sessions with other replicas through that Redis
  --redis-prefix PREFIX  the replicas' keys under PREFIX (mcp by default)
  --issuer, --resource   an OAuth 2.1 resource server for that issuer's tokens
  --trusted-proxy ADDR   believe that reverse proxy's Forwarded / X-Forwarded-For
  --rate-limit N         N tools/call a second per client
  --metrics-port PORT    Prometheus metrics on http://127.0.0.1:PORT/metrics
  --cache                a response cache behind a tenant layer, and the cached_report tool
  --otel                 spans continue the client's trace context (the otel-context feature)
  --json-response        every POST answered with application/json, never an SSE stream
";

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    use tracing_subscriber::prelude::*;
    mcp_examples::help(USAGE);
    // `RUST_LOG` picks what is logged; without it, warnings and the server's own `info` lines
    // (what it serves, shutdown and what it abandoned).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,mcp_runtime=info"));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter);
    #[cfg(feature = "otel-context")]
    let logs = logs.and_then(with_trace_context(
        std::env::args().any(|arg| arg == "--otel"),
    ));
    tracing_subscriber::registry().with(logs).init();
    let server = Server::new("mcp-conformance-everything", env!("CARGO_PKG_VERSION"))
        .description("Every tool, resource and prompt the MCP conformance suite checks.")
        .instructions("The catalogue of the MCP conformance suite.")
        .tool_def(json_schema_2020_12_tool())
        // The skills of the suite's sep-2640 scenarios (two, one with a nested skill), checked
        // and embedded when this example compiles.
        .skills(mcp_runtime::skills!("skills"));
    // `--port PORT` serves Streamable HTTP; `--redis URL` beside it shares the sessions with
    // the other replicas using the same Redis.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args.get(i + 1).cloned())
    };
    let redis = match flag("--redis") {
        Some(Some(url)) => Some(url),
        Some(None) => return Err(std::io::Error::other("--redis takes a URL").into()),
        None => None,
    };
    // `--issuer URL --resource URL` beside `--port`: an OAuth 2.1 resource server, every request
    // with a token the issuer made for the resource (the hostile runs keyed by principal).
    let oauth = match (flag("--issuer"), flag("--resource")) {
        (Some(Some(issuer)), Some(Some(resource))) => Some(
            mcp_runtime::OAuth::new(resource)
                .authorization_server(issuer)
                .scopes_supported(["notes:read", "notes:write", "admin"]),
        ),
        (None, None) => None,
        _ => {
            return Err(std::io::Error::other("--issuer and --resource take a URL each").into());
        }
    };
    // `--trusted-proxy ADDRESS`: a reverse proxy whose `Forwarded` / `X-Forwarded-For` names the
    // client (HAProxy in front of replicas), for the fair shares.
    let server = match flag("--trusted-proxy") {
        Some(Some(proxy)) => server.trusted_proxies([proxy]),
        Some(None) => {
            return Err(
                std::io::Error::other("--trusted-proxy takes an address or a range").into(),
            );
        }
        None => server,
    };
    // `--redis-prefix PREFIX`: the replicas' keys (`mcp` by default), for several servers
    // sharing one Redis.
    let server = match flag("--redis-prefix") {
        Some(Some(prefix)) => server.redis_prefix(prefix),
        Some(None) => return Err(std::io::Error::other("--redis-prefix takes a prefix").into()),
        None => server,
    };
    // `--rate-limit N`: N `tools/call` a second per client.
    let server = match flag("--rate-limit") {
        Some(Some(rate)) => {
            let rate: u32 = rate
                .parse()
                .map_err(|_| std::io::Error::other("--rate-limit takes calls per second"))?;
            server.layer(RateLimitLayer::per_second(rate).methods(["tools/call"]))
        }
        Some(None) => return Err(std::io::Error::other("--rate-limit takes a number").into()),
        None => server,
    };
    // `--cache`: the response cache, outside a tenant layer, and a cacheable tool whose
    // answer is the caller's.
    let server = match flag("--cache") {
        Some(_) => server
            .tool_def(cached_report())
            .layer(mcp_runtime::middleware::from_fn(tenant_from_meta))
            .layer(mcp_runtime::middleware::CacheLayer::new()),
        None => server,
    };
    // `--json-response`: every POST answered with `application/json`, never SSE.
    let server = server.json_response(flag("--json-response").is_some());
    // `--metrics-port M`: the conventions' metrics as Prometheus text on that port.
    let metrics_port = match flag("--metrics-port") {
        Some(port) => Some(
            port.and_then(|p| p.parse::<u16>().ok())
                .ok_or_else(|| std::io::Error::other("--metrics-port takes a port number"))?,
        ),
        None => None,
    };
    let server = match metrics_port {
        Some(_) => server.telemetry(Telemetry::new()),
        None => server,
    };
    let port = match flag("--port") {
        Some(port) => Some(
            port.and_then(|p| p.parse::<u16>().ok())
                .ok_or_else(|| std::io::Error::other("--port takes a port number"))?,
        ),
        None => None,
    };
    // `--unix PATH`: Streamable HTTP on a Unix domain socket (mode 0600) instead of a port.
    let unix = match flag("--unix") {
        Some(Some(path)) if port.is_none() => Some(path),
        Some(Some(_)) => {
            return Err(std::io::Error::other("--unix and --port exclude each other").into());
        }
        Some(None) => return Err(std::io::Error::other("--unix takes a path").into()),
        None => None,
    };
    if port.is_none() && unix.is_none() && (redis.is_some() || oauth.is_some()) {
        return Err(std::io::Error::other(
            "--redis and --issuer need --port or --unix (they concern HTTP)",
        )
        .into());
    }
    let server = match &redis {
        Some(url) => server.redis(url.clone()),
        None => server,
    };
    let server = match oauth {
        Some(oauth) => server.oauth(oauth),
        None => server,
    };
    let service = match port {
        // The Server Card at /mcp/server-card, listed by /.well-known/ai-catalog.json.
        Some(port) => server
            .legacy_sse(true)
            .server_card(
                ServerCard::new("com.example/everything")
                    .remote(format!("http://127.0.0.1:{port}/mcp")),
            )
            .build()?,
        None if unix.is_some() => server.legacy_sse(true).build()?,
        None => server.build()?,
    };
    if let Some(metrics_port) = metrics_port {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", metrics_port)).await?;
        eprintln!("serving metrics on http://127.0.0.1:{metrics_port}/metrics");
        tokio::spawn(mcp_runtime::telemetry::serve_metrics_on(
            service.clone(),
            listener,
        ));
    }
    match port {
        Some(port) => {
            eprintln!(
                "serving Streamable HTTP on http://127.0.0.1:{port}/mcp, and the deprecated \
                 HTTP+SSE transport on http://127.0.0.1:{port}/sse{}",
                match &redis {
                    Some(url) => format!(", sessions shared through Redis at {url}"),
                    None => String::new(),
                }
            );
            service.serve_http(("127.0.0.1", port)).await
        }
        None => match unix {
            Some(path) => {
                eprintln!(
                    "serving Streamable HTTP on the Unix socket {path} (endpoint /mcp, \
                     deprecated HTTP+SSE on /sse)"
                );
                service.serve_unix(path).await
            }
            None => service.serve_stdio().await,
        },
    }
}
