//! The `issues` operations of GitHub's REST API description (`@octokit/openapi` 23.0.2 from npm,
//! installed by scripts/openapi.sh), as MCP tools: `openapi-github --base-url URL`.

mod serve;

mod github {
    mcp_runtime::openapi!(
        "../../.cache/openapi/node_modules/@octokit/openapi/generated/api.github.com.json",
        include_tags = ["issues"],
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    serve::serve("github-issues", &github::API).await
}
