//! `openapi!` tools against a real HTTP server on 127.0.0.1 (tests/support/echo.rs, which
//! answers tests/openapi/echo.yaml with the request it saw): every parameter style laid out as
//! OpenAPI says, JSON, form and text bodies, the arguments checked before anything is sent,
//! error bodies trimmed to their bound, the response bound, the timeout, redirects to another
//! origin refused, and each way of authenticating.
//!
//! Each module generates the same description with its own `API` (configured once per process)
//! and its own tool prefix; each test serves the tools it needs with `Server::builder().tool(..)`.

use std::sync::OnceLock;
use std::time::Duration;

use mcp_runtime::openapi::{Api, Upstream};
use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use serde_json::{Value, json};

mod plain {
    mcp_runtime::openapi!("openapi/echo.yaml", prefix = "plain_");
}

mod bounded {
    mcp_runtime::openapi!(
        "openapi/echo.yaml",
        prefix = "bounded_",
        include_operations = ["status", "big", "slow", "away"]
    );
}

mod keyed {
    mcp_runtime::openapi!(
        "openapi/echo.yaml",
        prefix = "keyed_",
        include_operations = ["echoJson"]
    );
}

mod hooked {
    mcp_runtime::openapi!(
        "openapi/echo.yaml",
        prefix = "hooked_",
        include_operations = ["echoJson"]
    );
}

mod forwarded {
    mcp_runtime::openapi!(
        "openapi/echo.yaml",
        prefix = "forwarded_",
        include_operations = ["echoJson"]
    );
}

/// The echo server, on a runtime of its own that outlives every test, and the APIs configured
/// to it once.
fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().expect("a runtime");
            runtime.block_on(async {
                tx.send(mcp_tests::echo::start().await)
                    .expect("send the address");
                std::future::pending::<()>().await;
            });
        });
        let addr = rx.recv().expect("the echo server's address");
        let base = format!("http://{addr}/");
        let configure =
            |api: &Api, upstream: Upstream| api.configure(upstream).expect("configure once");
        configure(&plain::API, Upstream::new(&base).unwrap());
        configure(
            &bounded::API,
            Upstream::new(&base)
                .unwrap()
                .max_error_bytes(100)
                .max_response_bytes(32 * 1024)
                .timeout(Duration::from_millis(500)),
        );
        let keyed = Upstream::new(&base)
            .unwrap()
            .header("X-Api-Key", "k-123")
            .unwrap();
        configure(&keyed::API, keyed);
        configure(
            &hooked::API,
            Upstream::new(&base)
                .unwrap()
                .authorize_with(|ctx: Context| {
                    Box::pin(
                        async move { Ok(Some(format!("Token for-{}", ctx.protocol_version()))) },
                    )
                }),
        );
        configure(
            &forwarded::API,
            Upstream::new(&base)
                .unwrap()
                .forward_caller_token("https://api.example.com"),
        );
    });
}

async fn client(server: Server) -> Client {
    setup();
    Client::connect(server).await.expect("connect")
}

/// The echo of a successful call: what the server received.
fn echo(result: &CallToolResult) -> Value {
    assert!(!result.is_error, "{}", result.text());
    serde_json::from_str(&result.text()).expect("the echo is JSON")
}

#[tokio::test]
async fn parameters_are_laid_out_as_their_styles_say() {
    let client = client(Server::builder().tool(plain::echo_query)).await;
    let arguments = json!({
        "segment": "a b/c",
        "tags": ["x", "y"],
        "ids": [1, 2, 3],
        "words": ["hello", "world"],
        "flags": [true, false],
        "filter": {"color": "red", "size": "m"},
        "where": {"id": {"$gt": 1}},
        "limit": 5,
        "X-Trace": "t-1",
    });
    let result = client
        .call_tool("plain_echo_query", arguments)
        .await
        .unwrap();
    let seen = echo(&result);
    assert_eq!(seen["method"], "GET");
    let target = seen["target"].as_str().unwrap();
    let (path, query) = target.split_once('?').unwrap();
    assert_eq!(path, "/echo/a%20b%2Fc");
    let pairs: Vec<(String, String)> = url_pairs(query);
    let expected = [
        ("tags", "x"),
        ("tags", "y"),
        ("ids", "1,2,3"),
        ("words", "hello world"),
        ("flags", "true|false"),
        ("filter[color]", "red"),
        ("filter[size]", "m"),
        ("where", "{\"id\":{\"$gt\":1}}"),
        ("limit", "5"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    assert_eq!(pairs, expected);
    assert_eq!(seen["headers"]["x-trace"], "t-1");
    // The success response's schema is an object's: the JSON is the structured content.
    assert_eq!(result.structured_content.as_ref(), Some(&seen));
}

/// The pairs of a query string, percent- and `+`-decoded.
fn url_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |text: &str| -> String {
        let text = text.replace('+', " ");
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    query
        .split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

#[tokio::test]
async fn bodies_are_json_form_or_text() {
    let client = client(
        Server::builder()
            .tool(plain::echo_json)
            .tool(plain::echo_list)
            .tool(plain::echo_form)
            .tool(plain::echo_text),
    )
    .await;
    // An object body taken apart: each property an argument.
    let seen = echo(
        &client
            .call_tool("plain_echo_json", json!({"name": "n", "size": 2}))
            .await
            .unwrap(),
    );
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["headers"]["content-type"], "application/json");
    let body: Value = serde_json::from_str(seen["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"name": "n", "size": 2}));
    // Any other body is the argument `body`.
    let seen = echo(
        &client
            .call_tool("plain_echo_list", json!({"body": ["a", "b"]}))
            .await
            .unwrap(),
    );
    assert_eq!(seen["body"], "[\"a\",\"b\"]");
    let seen = echo(
        &client
            .call_tool("plain_echo_form", json!({"name": "a b", "size": 3}))
            .await
            .unwrap(),
    );
    assert_eq!(
        seen["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(seen["body"], "name=a+b&size=3");
    let seen = echo(
        &client
            .call_tool("plain_echo_text", json!({"body": "plain words"}))
            .await
            .unwrap(),
    );
    assert_eq!(seen["method"], "DELETE");
    assert_eq!(seen["headers"]["content-type"], "text/plain");
    assert_eq!(seen["body"], "plain words");
}

#[tokio::test]
async fn schemas_come_from_the_description() {
    let client = client(
        Server::builder()
            .tool(plain::echo_query)
            .tool(plain::echo_json)
            .tool(plain::numbers),
    )
    .await;
    let tools = client.list_tools().await.unwrap();
    let query = tools
        .iter()
        .find(|t| t["name"] == "plain_echo_query")
        .unwrap();
    assert_eq!(
        query["inputSchema"]["required"],
        json!(["segment", "limit"])
    );
    assert_eq!(
        query["inputSchema"]["properties"]["ids"]["items"]["type"],
        "integer"
    );
    assert_eq!(query["annotations"]["readOnlyHint"], true);
    assert_eq!(query["annotations"]["idempotentHint"], true);
    assert_eq!(query["annotations"]["openWorldHint"], true);
    // `$ref`s are inlined in the portable style.
    assert_eq!(
        query["outputSchema"]["properties"]["method"]["type"],
        "string"
    );
    let json_tool = tools
        .iter()
        .find(|t| t["name"] == "plain_echo_json")
        .unwrap();
    assert_eq!(json_tool["inputSchema"]["required"], json!(["name"]));
    assert_eq!(json_tool["annotations"]["readOnlyHint"], false);
    assert_eq!(json_tool["annotations"]["idempotentHint"], false);
    // A list is wrapped, as a hand-written tool's `Vec` return is.
    let numbers = tools.iter().find(|t| t["name"] == "plain_numbers").unwrap();
    assert_eq!(numbers["outputSchema"]["required"], json!(["result"]));
    let result = client.call_tool("plain_numbers", json!({})).await.unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": [1, 2, 3]}))
    );
}

#[tokio::test]
async fn arguments_are_checked_before_anything_is_sent() {
    let client = client(
        Server::builder()
            .tool(plain::echo_query)
            .tool(plain::echo_json),
    )
    .await;
    let result = client
        .call_tool("plain_echo_query", json!({"segment": 1, "limitt": 5}))
        .await
        .unwrap();
    assert!(result.is_error);
    let text = result.text();
    assert!(text.contains("unknown argument `limitt`"), "{text}");
    assert!(
        text.contains("argument `segment` must be a string"),
        "{text}"
    );
    assert!(
        text.contains("missing argument `limit` (an integer)"),
        "{text}"
    );
    let result = client
        .call_tool("plain_echo_json", json!({"size": 1}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        result.text().contains("missing argument `name`"),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn errors_bounds_and_redirects() {
    let client = client(
        Server::builder()
            .tool(bounded::status)
            .tool(bounded::big)
            .tool(bounded::slow)
            .tool(bounded::away),
    )
    .await;
    // A non-2xx answer: the status and the API's body, cut at 100 bytes on a character boundary.
    let result = client
        .call_tool("bounded_status", json!({"code": 404}))
        .await
        .unwrap();
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text.starts_with("GET /status/{code} answered 404 Not Found: {\"error\":\"status 404\""),
        "{text}"
    );
    assert!(text.ends_with('…'), "{text}");
    assert!(text.len() < 200, "{}", text.len());
    let result = client.call_tool("bounded_big", json!({})).await.unwrap();
    assert!(result.is_error);
    assert!(
        result.text().contains("over the bound of 32768"),
        "{}",
        result.text()
    );
    let result = client.call_tool("bounded_slow", json!({})).await.unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("timed out"), "{}", result.text());
    // A redirect to another origin is not followed: it is the answer.
    let result = client.call_tool("bounded_away", json!({})).await.unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("answered 302"), "{}", result.text());
}

#[tokio::test]
async fn credentials_go_with_each_request() {
    let client = client(
        Server::builder()
            .tool(keyed::echo_json)
            .tool(hooked::echo_json)
            .tool(forwarded::echo_json),
    )
    .await;
    let seen = echo(
        &client
            .call_tool("keyed_echo_json", json!({"name": "n"}))
            .await
            .unwrap(),
    );
    assert_eq!(seen["headers"]["x-api-key"], "k-123");
    assert!(seen["headers"].get("authorization").is_none());
    let seen = echo(
        &client
            .call_tool("hooked_echo_json", json!({"name": "n"}))
            .await
            .unwrap(),
    );
    assert_eq!(seen["headers"]["authorization"], "Token for-2025-11-25");
    // Over stdio there is no caller token to forward: a tool error, no request.
    let result = client
        .call_tool("forwarded_echo_json", json!({"name": "n"}))
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("carries none"), "{}", result.text());
}

#[test]
fn configuring_twice_is_an_error() {
    setup();
    let again = plain::API.configure(Upstream::new("http://127.0.0.1:9").unwrap());
    assert!(
        again
            .unwrap_err()
            .to_string()
            .contains("configured already")
    );
    assert!(Upstream::new("ftp://example.com").is_err());
    assert!(Upstream::new("http://example.com/?key=1").is_err());
    assert!(
        Upstream::new("http://127.0.0.1:9")
            .unwrap()
            .bearer_from_env("MCP_OPENAPI_TEST_UNSET")
            .is_err()
    );
}
