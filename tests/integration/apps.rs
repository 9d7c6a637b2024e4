//! MCP Apps (`io.modelcontextprotocol/ui`): an app page served as a `ui://` resource, a tool
//! linked to it, both checked against the Apps SDK's own JSON schemas
//! (`@modelcontextprotocol/ext-apps` 2.0.4, installed by `scripts/ext-apps.sh`).

use std::path::PathBuf;

use mcp_runtime::app::{Permission, UiResource};
use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use serde_json::{Value, json};

/// Show the weather for a city.
#[tool(ui = "ui://weather/view", read_only)]
pub(crate) async fn weather(
    /// The city.
    city: String,
) -> String {
    format!("Sunny in {city}")
}

/// A tool whose page this server forgot to serve.
#[tool(ui = "ui://weather/missing")]
pub(crate) async fn orphan() -> String {
    String::new()
}

const PAGE: &str = "<!doctype html><html><body><p id=\"weather\"></p></body></html>";

fn page() -> UiResource {
    UiResource::new("ui://weather/view", "weather-view", PAGE)
        .description("The weather, drawn.")
        .connect_domains(["https://api.weather.example"])
        .resource_domains(["https://cdn.weather.example"])
        .frame_domains(["https://maps.example"])
        .base_uri_domains(["https://weather.example"])
        .permission(Permission::Geolocation)
        .permission(Permission::ClipboardWrite)
        .domain("weather.example")
        .prefers_border(true)
}

fn server() -> Server {
    Server::builder()
        .name("apps")
        .version("1.0.0")
        .tool(weather)
        .resource_def(page().build())
}

/// The Apps SDK's JSON schemas: `$EXT_APPS_SCHEMA`, else where `scripts/ext-apps.sh` puts them.
fn apps_schemas() -> Value {
    if std::env::var_os("EXT_APPS_SCHEMA").is_none() {
        mcp_tests::install_component("ext-apps.sh");
    }
    let path = std::env::var_os("EXT_APPS_SCHEMA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
                "../.cache/apps/node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json",
            )
        });
    // schema.json sits in dist/src/generated/ of the package.
    let package = path
        .ancestors()
        .nth(4)
        .expect("the package's directory")
        .join("package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the MCP Apps SDK schemas are missing at {} ({e}): run scripts/ext-apps.sh",
            path.display()
        )
    });
    let version: Value =
        serde_json::from_str(&std::fs::read_to_string(package).expect("its package.json")).unwrap();
    assert_eq!(
        version["version"], "2.0.4",
        "scripts/ext-apps.sh installs 2.0.4"
    );
    serde_json::from_str(&text).unwrap()
}

fn assert_valid(schemas: &Value, definition: &str, instance: &Value) {
    let schema = &schemas["$defs"][definition];
    assert!(schema.is_object(), "the SDK has no `{definition}` schema");
    let validator = jsonschema::draft202012::new(schema).expect("a valid 2020-12 schema");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} is not a valid {definition}: {errors:?}"
    );
}

#[tokio::test]
async fn the_page_and_the_tool_validate_against_the_apps_sdk_schemas() {
    let schemas = apps_schemas();
    let client = Client::connect(server()).await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let tool = tools.iter().find(|t| t["name"] == "weather").unwrap();
    assert_eq!(
        tool["_meta"]["ui"],
        json!({"resourceUri": "ui://weather/view", "visibility": ["model", "app"]})
    );
    assert_valid(&schemas, "McpUiToolMeta", &tool["_meta"]["ui"]);

    let read = client
        .request("resources/read", json!({"uri": "ui://weather/view"}))
        .await
        .unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["text"], PAGE);
    let ui = &contents["_meta"]["ui"];
    assert_eq!(
        ui,
        &json!({
            "csp": {
                "connectDomains": ["https://api.weather.example"],
                "resourceDomains": ["https://cdn.weather.example"],
                "frameDomains": ["https://maps.example"],
                "baseUriDomains": ["https://weather.example"],
            },
            "permissions": {"geolocation": {}, "clipboardWrite": {}},
            "domain": "weather.example",
            "prefersBorder": true,
        })
    );
    assert_valid(&schemas, "McpUiResourceMeta", ui);
    assert_valid(&schemas, "McpUiResourceCsp", &ui["csp"]);
    assert_valid(&schemas, "McpUiResourcePermissions", &ui["permissions"]);

    let listed = client.request("resources/list", json!({})).await.unwrap();
    let entry = &listed["resources"][0];
    assert_eq!(entry["uri"], "ui://weather/view");
    assert_eq!(entry["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(&entry["_meta"]["ui"], ui);
}

#[tokio::test]
async fn the_schemas_catch_a_wrong_shape() {
    // The validation above can fail: the SDK's schemas refuse what the spec does not allow.
    let schemas = apps_schemas();
    let schema = &schemas["$defs"]["McpUiToolMeta"];
    let validator = jsonschema::draft202012::new(schema).unwrap();
    assert!(!validator.is_valid(&json!({"resourceUri": "ui://x", "visibility": ["everyone"]})));
    let schema = &schemas["$defs"]["McpUiResourceMeta"];
    let validator = jsonschema::draft202012::new(schema).unwrap();
    assert!(!validator.is_valid(&json!({"csp": {"connect": ["x"]}})));
}

#[tokio::test]
async fn an_unlisted_page_is_read_but_not_listed() {
    let client = Client::connect(
        Server::builder()
            .name("apps")
            .version("1.0.0")
            .tool(weather)
            .resource_def(page().unlisted().build()),
    )
    .await
    .unwrap();
    let listed = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(listed["resources"], json!([]));
    let read = client
        .request("resources/read", json!({"uri": "ui://weather/view"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["mimeType"], "text/html;profile=mcp-app");
}

#[tokio::test]
async fn a_tool_naming_an_unserved_page_fails_the_build() {
    let error = match Server::builder()
        .name("apps")
        .version("1.0.0")
        .tool(weather)
        .tool(orphan)
        .resource_def(page().build())
        .build()
    {
        Ok(_) => panic!("built a server whose tool links to a page it does not serve"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains("orphan"), "{error}");
    assert!(error.contains("ui://weather/missing"), "{error}");
    assert!(!error.contains("ui://weather/view"), "{error}");
    // A page at another scheme is refused too.
    let error = match Server::builder()
        .name("apps")
        .version("1.0.0")
        .resource_def(UiResource::new("https://example.com/view", "v", PAGE).build())
        .build()
    {
        Ok(_) => panic!("served an app page outside ui://"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains("`ui://` URI"), "{error}");
}
