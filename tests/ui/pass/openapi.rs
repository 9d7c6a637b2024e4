//! Every construct `openapi!` accepts: both versions, JSON and YAML, `$ref`s across files, every
//! parameter style, JSON, form and text bodies, every key of the macro.

use mcp_runtime::openapi::Upstream;
use mcp_runtime::prelude::*;

mod everything {
    mcp_runtime::openapi!(
        "openapi/everything.yaml",
        include_tags = ["items", "other"],
        include_paths = ["/items/*"],
        include_operations = ["legacy"],
        exclude_tags = ["admin"],
        exclude_paths = ["/ping"],
        exclude_operations = ["health"],
        prefix = "ev_",
        rename = [("getTree", "tree"), ("legacy", "legacy.v1")],
        replace = ["addNote"],
        crate = "::mcp_runtime",
    );
}

mod legacy {
    mcp_runtime::openapi!("openapi/legacy.json", output_schemas = false);
}

/// `$ref`-shaped data (examples, defaults, enums, extensions) is not a reference; a `$ref` to a
/// URL or an anchor is followed only where a selected operation needs it.
mod references {
    mcp_runtime::openapi!(
        "openapi/references.yaml",
        exclude_operations = ["remote"],
        prefix = "refs_",
    );
}

/// Add a note, by hand, through the generated function.
#[tool]
async fn add_note(id: i64, text: String, ctx: Context) -> Result<String, ToolError> {
    let response = everything::add_note(&ctx, id, Some(text)).await?;
    Ok(response.status().to_string())
}

fn main() {
    everything::API
        .configure(Upstream::new("http://127.0.0.1:9").unwrap())
        .unwrap();
    let service = Server::new("everything", "1.0").build().unwrap();
    let _ = service;
    // The typed functions are ordinary functions: they name each argument, typed.
    let _ = everything::list_items;
    let _ = everything::create_item;
    let _ = everything::replace_item;
    let _ = everything::patch_item;
    let _ = everything::tree;
    let _ = everything::legacy_v1;
    let _ = legacy::get_thing;
    let _ = legacy::undeclared;
    let _ = references::list_pets;
    let _: &mcp_runtime::openapi::Operation = &everything::__mcp_openapi::LIST_ITEMS;
    let _ = Server::builder().tool(everything::list_items).tool(add_note).build().unwrap();
}
