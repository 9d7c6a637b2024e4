//! `openapi!`: an existing HTTP API's operations as tools.

use mcp_runtime::openapi::Upstream;
use mcp_runtime::prelude::*;

// ANCHOR: openapi
mod bookshelf {
    // The examples' bookshelf API, relative to this file (like `include_bytes!`).
    mcp_runtime::openapi!(
        "../../examples/openapi/openapi.yaml",
        replace = ["removeBook"]
    );
}

/// Take a book off the shelf, saying why (replaces the generated `remove_book` tool).
#[tool(destructive, idempotent, open_world)]
async fn remove_book_politely(
    book_id: i64,
    reason: String,
    ctx: Context,
) -> Result<String, ToolError> {
    let response = bookshelf::remove_book(&ctx, book_id, Some(reason)).await?;
    Ok(format!("book {book_id} removed ({})", response.status()))
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let upstream = Upstream::new("http://127.0.0.1:4010")?.bearer_from_env("BOOKSHELF_TOKEN")?;
    bookshelf::API.configure(upstream)?;
    Server::new("bookshelf", "1.0.0").serve_stdio().await?;
    Ok(())
}
// ANCHOR_END: openapi

// ANCHOR: select
mod bookshelf_read_only {
    mcp_runtime::openapi!(
        "../../examples/openapi/openapi.yaml",
        include_operations = ["listBooks", "getBook"],
        prefix = "shelf_",
    );
}
// ANCHOR_END: select

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_runtime::testing::Client;

    #[tokio::test]
    async fn one_tool_per_operation() -> Result<(), Box<dyn std::error::Error>> {
        let server = Server::builder()
            .tool(bookshelf::list_books)
            .tool(remove_book_politely)
            .tool(bookshelf_read_only::list_books);
        let client = Client::connect(server).await?;
        let tools = client.list_tools().await?;
        let names: Vec<_> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            names,
            ["list_books", "remove_book_politely", "shelf_list_books"]
        );
        assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
        Ok(())
    }
}
