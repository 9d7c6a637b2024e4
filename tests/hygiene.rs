//! `#[tool]` expands correctly where the prelude's names mean something else: the generated code
//! names every std item by its full path. Like serde's `test_gen.rs`, this only has to compile
//! (warnings denied) and then run.

#![deny(warnings)]
#![allow(non_snake_case, dead_code)]

use mcp_runtime::prelude::{
    Args, Content, Context, Deserialize, JsonSchema, Server, ToolError, tool,
};
use mcp_runtime::testing::Client;
use serde_json::json;

// The prelude's names, shadowed.
struct Result;
struct Option;
struct String;
struct Vec;
struct Box;
fn Some() {}
fn None() {}
fn Ok() {}
fn Err() {}

/// Arguments, an optional one with a default, a doc comment and an example.
#[tool(read_only, title = "Add")]
async fn add(
    /// The first addend.
    a: i64,
    #[arg(default = 1, example = 2)] b: i64,
    c: ::std::option::Option<i64>,
) -> i64 {
    a + b + c.unwrap_or(0)
}

/// A sync tool with text in and out and a context parameter.
#[tool(name = "echo-text")]
fn echo(text: ::std::string::String, ctx: Context) -> ::std::string::String {
    let _ = ctx.request_id();
    text
}

/// A `Result` with `ToolError`, and a list argument.
#[tool]
async fn first(items: ::std::vec::Vec<u32>) -> ::std::result::Result<u32, ToolError> {
    items
        .first()
        .copied()
        .ok_or_else(|| ToolError::new("no items"))
}

#[derive(Deserialize, JsonSchema)]
struct Query {
    word: ::std::string::String,
}

/// `Args<T>` in, content blocks out, with an error type of std's own.
#[tool(meta = serde_json::json!({ "k": 1 }), icons = ["https://example.com/i.png"])]
fn lookup(
    Args(query): Args<Query>,
) -> ::std::result::Result<::std::vec::Vec<Content>, ::std::io::Error> {
    ::std::result::Result::Ok(::std::vec![Content::text(query.word)])
}

/// No parameters, no return value.
#[tool]
async fn noop() {}

/// `openapi!`'s functions, statics and registrations, with the same names shadowed (and
/// warnings denied: every generated item is documented).
mod bookshelf {
    struct Result;
    struct Option;
    struct String;
    struct Vec;
    mcp_runtime::openapi!("../examples/openapi/openapi.yaml");
}

#[test]
fn tools_expand_and_run_with_the_prelude_shadowed() {
    let runtime = ::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let books = Server::builder()
            .tool(bookshelf::list_books)
            .tool(bookshelf::add_book);
        let client = Client::connect(books).await.expect("the server builds");
        assert_eq!(client.list_tools().await.expect("tools/list").len(), 2);
        let server = Server::builder()
            .tool(add)
            .tool(echo)
            .tool(first)
            .tool(lookup)
            .tool(noop);
        let client = Client::connect(server).await.expect("the server builds");
        let names: ::std::vec::Vec<_> = client
            .list_tools()
            .await
            .expect("tools/list")
            .into_iter()
            .map(|tool| tool["name"].clone())
            .collect();
        assert_eq!(
            names,
            [
                json!("add"),
                json!("echo-text"),
                json!("first"),
                json!("lookup"),
                json!("noop")
            ]
        );
        let call = |name: &'static str, arguments| {
            let client = &client;
            async move { client.call_tool(name, arguments).await.expect(name) }
        };
        assert_eq!(call("add", json!({"a": 2})).await.text(), "3");
        assert_eq!(call("echo-text", json!({"text": "hi"})).await.text(), "hi");
        let empty = call("first", json!({"items": []})).await;
        assert!(empty.is_error);
        assert_eq!(empty.text(), "no items");
        assert_eq!(call("lookup", json!({"word": "w"})).await.text(), "w");
        assert!(!call("noop", json!({})).await.is_error);
    });
}
