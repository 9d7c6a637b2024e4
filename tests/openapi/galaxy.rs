//! Scalar's Galaxy example API (`@scalar/galaxy` 0.6.12 from npm, OpenAPI 3.1.1, installed by
//! scripts/openapi.sh), as MCP tools: `openapi-galaxy --base-url URL`. Its image upload
//! (`multipart/form-data`) is left out: `openapi!` does not send those. `getPlanet` is replaced
//! by a hand-written tool that answers with the planet's name and kind only, calling the
//! generated function.

mod serve;

mod galaxy {
    mcp_runtime::openapi!(
        "../../.cache/openapi/node_modules/@scalar/galaxy/dist/3.1.yaml",
        exclude_operations = ["uploadImage"],
        replace = ["getPlanet"],
    );
}

use mcp_runtime::prelude::*;

/// A planet's name and kind, in a few words.
#[tool(read_only, open_world)]
async fn planet_summary(
    /// The planet's id.
    planet_id: i64,
    ctx: Context,
) -> Result<String, ToolError> {
    let planet = galaxy::get_planet(&ctx, planet_id).await?;
    let json = planet.json().ok_or("the planet is not JSON")?;
    let text = |key: &str| json[key].as_str().unwrap_or("?").to_owned();
    Ok(format!("{} ({})", text("name"), text("type")))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    serve::serve("galaxy", &galaxy::API).await
}
