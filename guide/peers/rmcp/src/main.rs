//! The guide's comparison server, written with rmcp 3.11: two tools, one prompt, one resource.

// ANCHOR: server
use rmcp::{
    ErrorData as McpError, Json, RoleServer, ServerHandler, ServiceExt,
    handler::server::{
        router::prompt::PromptRouter, router::tool::ToolRouter, wrapper::Parameters,
    },
    model::*,
    prompt, prompt_handler, prompt_router, schemars,
    service::RequestContext,
    tool, tool_handler, tool_router,
    transport::stdio,
};
use serde::{Deserialize, Serialize};

#[derive(Clone)]
pub struct DemoServer {
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
}

/// Input for `add`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// First addend
    pub a: i64,
    /// Second addend
    pub b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct StatsArgs {
    /// Text to analyse
    pub text: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct TextStats {
    pub words: usize,
    pub chars: usize,
    pub longest_word: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct ReviewArgs {
    /// Code to review
    pub code: String,
    /// Optional language hint
    pub language: Option<String>,
}

#[tool_router]
impl DemoServer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }

    /// Add two integers.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    /// Count words and characters; returns structured output.
    #[tool(title = "Text statistics")]
    async fn text_stats(
        &self,
        Parameters(StatsArgs { text }): Parameters<StatsArgs>,
    ) -> Result<Json<TextStats>, String> {
        if text.is_empty() {
            return Err("text must not be empty".into()); // -> isError: true
        }
        let longest = text.split_whitespace().max_by_key(|w| w.len());
        Ok(Json(TextStats {
            words: text.split_whitespace().count(),
            chars: text.chars().count(),
            longest_word: longest.map(str::to_owned),
        }))
    }
}

#[prompt_router]
impl DemoServer {
    /// Ask the model to review a piece of code.
    #[prompt(name = "code_review")]
    async fn code_review(&self, Parameters(args): Parameters<ReviewArgs>) -> Vec<PromptMessage> {
        let lang = args.language.unwrap_or_else(|| "unknown".into());
        vec![PromptMessage::new_text(
            Role::User,
            format!("Review this {lang} code:\n\n{}", args.code),
        )]
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for DemoServer {
    // Hand-written: the generated one would enable tools and prompts only, and would name the
    // server after rmcp itself.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("config://app", "app-config")
                .with_description("Application configuration")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match request.uri.as_str() {
            "config://app" => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(r#"{"debug":false}"#, request.uri.clone())
                    .with_mime_type("application/json"),
            ])
            .into()),
            _ => Err(McpError::resource_not_found(
                "resource not found",
                Some(serde_json::json!({ "uri": request.uri })),
            )),
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let service = DemoServer::new().serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
// ANCHOR_END: server
