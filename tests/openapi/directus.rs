//! Directus's API (`@directus/specs` 15.2.0 from npm, OpenAPI 3.0.1, installed by
//! scripts/openapi.sh), as MCP tools: `openapi-directus --base-url URL`. Its file uploads
//! (`multipart/form-data` bodies) are left out: `openapi!` does not send those.

mod serve;

mod directus {
    mcp_runtime::openapi!(
        "../../.cache/openapi/node_modules/@directus/specs/dist/openapi.json",
        exclude_tags = ["Files"],
        exclude_operations = ["importBatch", "import"],
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    serve::serve("directus", &directus::API).await
}
