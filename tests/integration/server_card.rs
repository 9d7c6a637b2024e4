//! The Server Card on the wire (`Server::server_card`): `<path>/server-card` and
//! `/.well-known/ai-catalog.json`, validated against the extension's published schema (vendored
//! with cargo-mcp), on an in-process server and on the three HTTP examples as child processes.

use std::process::Stdio;

use hyper::{Request, StatusCode};
use mcp_runtime::prelude::*;
use mcp_runtime::{OAuth, ServerCard};
use mcp_tests::example_binary;
use mcp_tests::http::{WAIT, body_json, send, start};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Every way `card` breaks the Server Card schema of SEP-2127.
fn schema_errors(card: &Value) -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cargo-mcp/schemas/server-card/schema.json"
    );
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    schema["$ref"] = json!("#/$defs/ServerCard");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the vendored Server Card schema compiles");
    validator
        .iter_errors(card)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn get(addr: &str, path: &str) -> hyper::http::request::Builder {
    Request::get(path).header("host", addr)
}

/// The card and the catalog of a server at `addr`, checked as a client would read them.
async fn read_card(addr: &str, card_path: &str) -> (Value, Value) {
    let request = get(addr, card_path)
        .header("accept", "application/mcp-server-card+json")
        .body(String::new())
        .unwrap();
    let response = send(addr, request).await;
    assert_eq!(response.status(), StatusCode::OK, "{card_path}");
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "application/mcp-server-card+json");
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(headers["access-control-expose-headers"], "ETag");
    assert_eq!(headers["cache-control"], "public, max-age=3600");
    let etag = headers["etag"].to_str().unwrap().to_owned();
    let card = body_json(response).await;
    assert_eq!(schema_errors(&card), Vec::<String>::new(), "{card}");

    // Revalidation: the same ETag is 304 with no body; another is the card again.
    let again = get(addr, card_path)
        .header("if-none-match", &etag)
        .body(String::new())
        .unwrap();
    let response = send(addr, again).await;
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(response.headers()["etag"], etag.as_str());
    let stale = get(addr, card_path)
        .header("if-none-match", "\"something-else\"")
        .body(String::new())
        .unwrap();
    assert_eq!(send(addr, stale).await.status(), StatusCode::OK);

    let catalog = send(
        addr,
        get(addr, "/.well-known/ai-catalog.json")
            .body(String::new())
            .unwrap(),
    )
    .await;
    assert_eq!(catalog.status(), StatusCode::OK);
    assert_eq!(
        catalog.headers()["content-type"],
        "application/ai-catalog+json"
    );
    assert_eq!(catalog.headers()["access-control-allow-origin"], "*");
    (card, body_json(catalog).await)
}

#[tokio::test]
async fn the_card_and_the_catalog_describe_the_server_and_validate() {
    let server = Server::builder()
        .tool(add)
        .name("calc")
        .version("2.1.0")
        .title("Calculator")
        .description("Adds integers.")
        .website_url("https://calc.example.com")
        .server_card(
            ServerCard::new("com.example/calc")
                .remote("https://calc.example.com/mcp")
                .repository("github", "https://github.com/example/calc"),
        );
    let addr = start(server).await;
    let (card, catalog) = read_card(&addr, "/mcp/server-card").await;
    assert_eq!(
        card["$schema"],
        "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
    );
    assert_eq!(card["name"], "com.example/calc");
    assert_eq!(card["version"], "2.1.0");
    assert_eq!(card["title"], "Calculator");
    assert_eq!(card["description"], "Adds integers.");
    assert_eq!(card["websiteUrl"], "https://calc.example.com");
    assert_eq!(
        card["remotes"],
        json!([{"type": "streamable-http", "url": "https://calc.example.com/mcp",
                "supportedProtocolVersions": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]}])
    );
    assert_eq!(
        catalog,
        json!({"specVersion": "1.0", "entries": [{
            "identifier": "urn:air:example.com:mcp:calc",
            "type": "application/mcp-server-card+json",
            "url": "https://calc.example.com/mcp/server-card"}]})
    );

    // Public metadata, like the OAuth metadata: any Host, and a CORS preflight.
    let foreign = Request::get("/mcp/server-card")
        .header("host", "evil.example.com")
        .header("origin", "https://evil.example.com")
        .body(String::new())
        .unwrap();
    assert_eq!(send(&addr, foreign).await.status(), StatusCode::OK);
    let preflight = Request::options("/.well-known/ai-catalog.json")
        .header("host", &addr)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "if-none-match")
        .body(String::new())
        .unwrap();
    let response = send(&addr, preflight).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(response.headers()["access-control-allow-methods"], "GET");
    assert_eq!(
        response.headers()["access-control-allow-headers"],
        "Content-Type, If-None-Match"
    );
    // Not a way around the MCP endpoint's own Host check.
    let rebinding = Request::post("/mcp")
        .header("host", "evil.example.com")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .unwrap();
    assert_eq!(send(&addr, rebinding).await.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn without_a_card_the_routes_do_not_exist() {
    let addr = start(Server::builder().tool(add)).await;
    for path in ["/mcp/server-card", "/.well-known/ai-catalog.json"] {
        let response = send(&addr, get(&addr, path).body(String::new()).unwrap()).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn the_card_follows_the_endpoint_path_and_needs_no_token() {
    let server = Server::builder()
        .tool(add)
        .description("Adds integers.")
        .http_path("/tenant/mcp")
        .oauth(
            OAuth::new("http://127.0.0.1:1/tenant/mcp").authorization_server("http://127.0.0.1:1"),
        )
        .server_card(ServerCard::new("com.example/calc"));
    let addr = start(server).await;
    // The MCP endpoint wants a token; the card does not.
    let call = Request::post("/tenant/mcp")
        .header("host", &addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .unwrap();
    assert_eq!(send(&addr, call).await.status(), StatusCode::UNAUTHORIZED);
    let (card, catalog) = read_card(&addr, "/tenant/mcp/server-card").await;
    assert!(card.get("remotes").is_none());
    // With no remote to point at, the catalog carries the card itself.
    assert_eq!(catalog["entries"][0]["data"], card);
}

#[test]
fn a_card_the_schema_would_refuse_fails_the_build() {
    let built = Server::builder()
        .tool(add)
        .server_card(ServerCard::new("calc").remote("ftp://calc.example.com"))
        .build();
    let Err(error) = built else {
        panic!("a card without a reverse-DNS name or a description must fail the build");
    };
    let error = error.to_string();
    assert!(error.contains("Server::server_card"), "{error}");
    assert!(error.contains("Server Card name `calc`"), "{error}");
    assert!(error.contains("set `Server::description`"), "{error}");
    assert!(error.contains("ftp://calc.example.com"), "{error}");
}

/// Starts an HTTP example and waits for the line that says it listens (`serve_http`'s own
/// "listening on http://..." at info, or the example's line printed after it bound).
async fn start_example(name: &str, args: &[&str], wanted: &str) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(example_binary(name))
        .args(args)
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn the {name} example: {e}"));
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    tokio::time::timeout(WAIT, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains(wanted) {
                return;
            }
        }
        panic!("the {name} example ended before it listened");
    })
    .await
    .unwrap_or_else(|_| panic!("the {name} example did not say it listens on {wanted}"));
    // Keep draining its logs so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    child
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_http_examples_serve_their_cards() {
    for (name, extra, wanted) in [
        (
            "everything",
            vec![],
            "listening on http://127.0.0.1:PORT/mcp",
        ),
        ("http", vec![], "serving MCP on http://127.0.0.1:PORT/mcp"),
        (
            "auth",
            vec!["--issuer", "http://127.0.0.1:1", "--resource", "RESOURCE"],
            "serving MCP on http://127.0.0.1:PORT/mcp",
        ),
    ] {
        let port = free_port();
        let port_text = port.to_string();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let args: Vec<&str> = ["--port", port_text.as_str()]
            .into_iter()
            .chain(extra.iter().map(|a| {
                if *a == "RESOURCE" {
                    resource.as_str()
                } else {
                    a
                }
            }))
            .collect();
        let wanted = wanted.replace("PORT", &port_text);
        let _child = start_example(name, &args, &wanted).await;
        let addr = format!("127.0.0.1:{port}");
        let (card, catalog) = read_card(&addr, "/mcp/server-card").await;
        assert_eq!(card["remotes"][0]["url"], resource, "{name}");
        assert_eq!(
            catalog["entries"][0]["url"],
            format!("{resource}/server-card"),
            "{name}"
        );
    }
}
