//! Middleware: tower's own layers and the built-in ones, server-wide and per item, in both eras
//! and over stdio and HTTP.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hyper::StatusCode;
use mcp_runtime::middleware::{
    self, CacheLayer, CacheVary, ErrorMaskingLayer, Extension, McpRequest, McpResponse, Next,
    RateKey, RateLimitLayer,
};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorObject;
use mcp_runtime::testing::Client;
use mcp_runtime::tool::{ToolBuilder, ToolDef};
use mcp_tests::http::{self, body_json, post, send, stateless_post};
use serde_json::{Value, json};
use tower::ServiceBuilder;
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::timeout::TimeoutLayer;

/// A tool that sleeps `ms` milliseconds, counting the calls running at once.
fn sleeper(name: &'static str, running: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> ToolDef {
    let mut builder = ToolBuilder::new(name, move |mut call: mcp_runtime::tool::ToolCall| {
        let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
        let ms = call
            .take_arguments()
            .get("ms")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Box::pin(async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            CallToolResult::success([Content::text("slept")])
        })
    });
    builder.raw_input_schema(json!({"type": "object"}));
    builder.build()
}

fn counters() -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
    (Arc::default(), Arc::default())
}

/// Sends `calls` at once on one connection and waits for every answer.
async fn call_at_once(client: &Arc<Client>, tool: &str, calls: usize, ms: u64) -> Vec<Value> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..calls {
        let client = Arc::clone(client);
        let params = json!({"name": tool, "arguments": {"ms": ms}});
        set.spawn(async move { client.request_raw("tools/call", params).await.unwrap() });
    }
    tokio::time::timeout(Duration::from_secs(20), set.join_all())
        .await
        .expect("every call is answered")
}

#[tokio::test]
async fn a_concurrency_limit_on_the_server_holds_every_tool_to_it() {
    let (running, peak) = counters();
    let server = Server::builder()
        .tool_def(sleeper("slow", Arc::clone(&running), Arc::clone(&peak)))
        .layer(ConcurrencyLimitLayer::new(2));
    let client = Arc::new(Client::connect(server).await.unwrap());
    let answers = call_at_once(&client, "slow", 6, 40).await;
    assert!(
        answers
            .iter()
            .all(|a| a["result"]["content"][0]["text"] == "slept")
    );
    assert_eq!(
        peak.load(Ordering::SeqCst),
        2,
        "never more than the limit at once"
    );
}

#[tokio::test]
async fn a_per_tool_layer_does_not_touch_other_tools() {
    let (running, limited_peak) = counters();
    let (free_running, free_peak) = counters();
    let server = Server::builder()
        .tool_def(
            sleeper("limited", Arc::clone(&running), Arc::clone(&limited_peak))
                .layer(ConcurrencyLimitLayer::new(1)),
        )
        .tool_def(
            sleeper("free", Arc::clone(&free_running), Arc::clone(&free_peak))
                .layer(TimeoutLayer::new(Duration::from_secs(5))),
        );
    let client = Arc::new(Client::connect(server).await.unwrap());
    let limited = call_at_once(&client, "limited", 4, 30);
    let free = call_at_once(&client, "free", 4, 60);
    let (limited, free) = tokio::join!(limited, free);
    assert!(
        limited
            .iter()
            .chain(&free)
            .all(|a| a["result"]["content"][0]["text"] == "slept")
    );
    assert_eq!(limited_peak.load(Ordering::SeqCst), 1);
    assert_eq!(
        free_peak.load(Ordering::SeqCst),
        4,
        "the other tool runs unlimited"
    );
}

#[tokio::test]
async fn a_server_timeout_cuts_a_slow_tool_call_in_both_eras_and_the_connection_goes_on() {
    let server = || {
        let (running, peak) = counters();
        Server::builder()
            .tool_def(sleeper("slow", running, peak))
            .layer(TimeoutLayer::new(Duration::from_millis(50)))
    };
    for client in [
        Client::connect(server()).await.unwrap(),
        Client::builder()
            .stateless()
            .connect(server())
            .await
            .unwrap(),
    ] {
        let late = client
            .call_tool("slow", json!({"ms": 2_000}))
            .await
            .unwrap();
        assert!(late.is_error);
        assert_eq!(late.text(), "tool `slow` timed out");
        let quick = client.call_tool("slow", json!({"ms": 1})).await.unwrap();
        assert_eq!(quick.text(), "slept");
        // The connection goes on serving.
        assert_eq!(client.list_tools().await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn a_timeout_on_one_tool_leaves_the_others_alone() {
    /// Sleeps half a second.
    #[tool(layer = TimeoutLayer::new(Duration::from_millis(50)))]
    async fn hurried() -> String {
        tokio::time::sleep(Duration::from_millis(500)).await;
        "done".into()
    }
    /// Sleeps a tenth of a second.
    #[tool]
    async fn patient() -> String {
        tokio::time::sleep(Duration::from_millis(100)).await;
        "done".into()
    }
    let client = Client::connect(Server::builder().tool(hurried).tool(patient))
        .await
        .unwrap();
    let cut = client.call_tool("hurried", json!({})).await.unwrap();
    assert!(cut.is_error && cut.text() == "tool `hurried` timed out");
    assert_eq!(
        client.call_tool("patient", json!({})).await.unwrap().text(),
        "done"
    );
}

#[tokio::test]
async fn load_shedding_refuses_with_the_busy_error() {
    let (running, peak) = counters();
    let server = Server::builder()
        .tool_def(sleeper("slow", running, peak))
        .layer(
            ServiceBuilder::new()
                .layer(LoadShedLayer::new())
                .layer(ConcurrencyLimitLayer::new(1)),
        );
    let client = Arc::new(Client::connect(server).await.unwrap());
    let answers = call_at_once(&client, "slow", 3, 200).await;
    let shed: Vec<&Value> = answers
        .iter()
        .filter(|a| a.get("error").is_some())
        .collect();
    assert_eq!(shed.len(), 2, "{answers:?}");
    // Unavailable (the error-condition-registry draft): transient, with when to retry.
    assert_eq!(shed[0]["error"]["code"], -32024);
    assert_eq!(
        shed[0]["error"]["data"],
        json!({"reason": "overloaded", "retryAfterMs": 1000})
    );
    assert_eq!(
        shed[0]["error"]["message"],
        "the server is busy: try again shortly"
    );
}

#[derive(Clone, Hash)]
struct Tenant(String);

/// Who is calling?
#[tool]
async fn whoami(Extension(tenant): Extension<Tenant>, ctx: Context) -> String {
    let again = ctx.extensions().get::<Tenant>().map(|t| t.0.clone());
    format!("{} {}", tenant.0, again.unwrap_or_default())
}

async fn tenant(mut request: McpRequest, next: Next) -> McpResponse {
    let tenant = request
        .meta()
        .and_then(|meta| meta.get("tenant"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(tenant) = tenant else {
        let error = ErrorObject::invalid_params("`_meta.tenant` is required");
        return McpResponse::error(request.id().clone(), error);
    };
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}

#[tokio::test]
async fn a_layer_adds_extensions_a_handler_reads_and_can_answer_on_its_own() {
    for stateless in [false, true] {
        let server = Server::builder()
            .tool(whoami)
            .layer(middleware::from_fn(tenant));
        let builder = if stateless {
            Client::builder().stateless()
        } else {
            Client::builder()
        };
        let client = builder.connect(server).await.unwrap();
        let call = json!({"name": "whoami", "arguments": {}, "_meta": {"tenant": "acme"}});
        let result = client.request("tools/call", call).await.unwrap();
        assert_eq!(result["content"][0]["text"], "acme acme");
        let refused = client
            .request("tools/call", json!({"name": "whoami"}))
            .await
            .unwrap_err();
        assert_eq!(refused.rpc().unwrap().code, -32602);
        assert_eq!(refused.rpc().unwrap().message, "`_meta.tenant` is required");
    }
}

#[tokio::test]
async fn a_handler_without_the_extension_gets_a_tool_error_naming_it() {
    let client = Client::connect(Server::builder().tool(whoami))
        .await
        .unwrap();
    let result = client.call_tool("whoami", json!({})).await.unwrap();
    assert!(result.is_error);
    assert!(result.text().contains("Tenant"), "{}", result.text());
}

#[tokio::test]
async fn a_layer_sees_what_the_request_is() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = {
        let seen = Arc::clone(&seen);
        move |request: McpRequest, next: Next| {
            let seen = Arc::clone(&seen);
            async move {
                let line = format!(
                    "{} {:?} {:?} {:?} {:?} {}",
                    request.method(),
                    request.era(),
                    request.transport(),
                    request.protocol_version().map(|v| v.to_string()),
                    request.target(),
                    request
                        .session_id()
                        .is_some_and(|s| s.starts_with("stdio-")),
                );
                seen.lock().unwrap().push(line);
                let response = next.run(request).await;
                seen.lock()
                    .unwrap()
                    .push(format!("error {}", response.is_error()));
                response
            }
        }
    };
    let server = || {
        Server::builder()
            .tool(whoami)
            .layer(middleware::from_fn(record.clone()))
    };
    let client = Client::connect(server()).await.unwrap();
    client.list_tools().await.unwrap();
    let stateless = Client::builder()
        .stateless()
        .connect(server())
        .await
        .unwrap();
    stateless.call_tool("whoami", json!({})).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "tools/list Handshake Stdio Some(\"2025-11-25\") None true",
            "error false",
            "tools/call Stateless Stdio Some(\"2026-07-28\") Some(\"whoami\") true",
            "error false",
        ]
    );
}

/// Echoes its text.
#[tool]
async fn echo_text(text: String, times: Option<u32>) -> String {
    text.repeat(times.unwrap_or(1) as usize)
}

/// Reads the params whole, then changes the arguments: upper-cases `text` and sets `times`.
async fn shout(mut request: McpRequest, next: Next) -> McpResponse {
    let before = Value::Object(request.params().clone());
    let arguments = request
        .params_mut()
        .get_mut("arguments")
        .and_then(Value::as_object_mut);
    if let Some(arguments) = arguments {
        let text = arguments.get("text").and_then(Value::as_str).unwrap_or("");
        let text = text.to_uppercase();
        arguments.insert("text".into(), json!(text));
        arguments.insert("times".into(), json!(2));
    }
    let after = Value::Object(request.params().clone());
    let id = request.id().clone();
    let response = next.run(request).await;
    match response.to_result() {
        Some(mut result) => {
            result["content"][0]["seen"] = json!({"before": before, "after": after});
            McpResponse::result(id, result)
        }
        None => response,
    }
}

#[tokio::test]
async fn a_layer_reads_the_params_whole_and_the_tool_gets_what_it_changed() {
    let server = || {
        Server::builder()
            .tool(echo_text)
            .layer(middleware::from_fn(shout))
    };
    for stateless in [false, true] {
        let builder = if stateless {
            Client::builder().stateless()
        } else {
            Client::builder()
        };
        let client = builder.connect(server()).await.unwrap();
        let call = json!({"name": "echo_text", "arguments": {"text": "hi"}});
        let result = client.request("tools/call", call).await.unwrap();
        assert_eq!(
            result["content"][0]["text"], "HIHI",
            "stateless {stateless}"
        );
        let seen = &result["content"][0]["seen"];
        assert_eq!(seen["before"]["name"], "echo_text");
        assert_eq!(seen["before"]["arguments"], json!({"text": "hi"}));
        assert_eq!(
            seen["after"]["arguments"],
            json!({"text": "HI", "times": 2})
        );
    }
    // Over HTTP, where the params are read from the body the same way.
    let addr = http::start(server()).await;
    let session = http::initialize(&addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo_text", "arguments": {"text": "ok", "times": 5}}});
    let reply = http::response_of(&addr, post(&addr, Some(&session), call)).await;
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"]["content"][0]["text"], "OKOK");
    assert_eq!(
        reply["result"]["content"][0]["seen"]["before"]["arguments"],
        json!({"text": "ok", "times": 5})
    );
}

static RATE_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Reads a number, the same every time.
#[tool(read_only, idempotent)]
async fn lookup(key: String) -> String {
    RATE_CALLS.fetch_add(1, Ordering::SeqCst);
    format!("value of {key}")
}

#[tokio::test]
async fn the_cache_answers_a_repeated_read_only_call_without_the_handler_within_its_bound() {
    let cache = CacheLayer::new().max_entries(2);
    let client = Client::connect(Server::builder().tool(lookup).layer(cache.clone()))
        .await
        .unwrap();
    let before = RATE_CALLS.load(Ordering::SeqCst);
    let first = client
        .request_raw(
            "tools/call",
            json!({"name": "lookup", "arguments": {"key": "a"}}),
        )
        .await
        .unwrap();
    let again = client
        .request_raw(
            "tools/call",
            json!({"name": "lookup", "arguments": {"key": "a"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        RATE_CALLS.load(Ordering::SeqCst) - before,
        1,
        "the second call ran no handler"
    );
    assert_eq!(first["result"], again["result"]);
    assert_ne!(
        first["id"], again["id"],
        "each answer carries its own request's id"
    );
    for key in ["b", "c", "d"] {
        client
            .call_tool("lookup", json!({"key": key}))
            .await
            .unwrap();
    }
    assert_eq!(cache.usage().0, 2, "at most the bound");
    // `a` was the oldest: dropped, so it runs again.
    let calls = RATE_CALLS.load(Ordering::SeqCst);
    client
        .call_tool("lookup", json!({"key": "a"}))
        .await
        .unwrap();
    assert_eq!(RATE_CALLS.load(Ordering::SeqCst), calls + 1);
}

#[tokio::test]
async fn the_cache_keeps_no_tool_that_is_not_read_only_and_idempotent() {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    /// Counts.
    #[tool(read_only)]
    async fn count() -> usize {
        CALLS.fetch_add(1, Ordering::SeqCst) + 1
    }
    let client = Client::connect(Server::builder().tool(count).layer(CacheLayer::new()))
        .await
        .unwrap();
    let one = client.call_tool("count", json!({})).await.unwrap();
    let two = client.call_tool("count", json!({})).await.unwrap();
    assert_ne!(one.text(), two.text());
}

// The cache never serves one caller's answer to another: without OAuth, the tenants a layer
// reads from `_meta` and the clients behind one address are told apart.

/// The tenant from `_meta.tenant`, `none` without one (as a layer that lets anonymous calls
/// through would).
async fn tenant_from_meta(mut request: McpRequest, next: Next) -> McpResponse {
    let tenant = request
        .meta()
        .and_then(|meta| meta.get("tenant")?.as_str())
        .unwrap_or("none")
        .to_owned();
    request.extensions_mut().insert(Tenant(tenant));
    next.run(request).await
}

static REPORT_RUNS: AtomicUsize = AtomicUsize::new(0);

/// The tenant's report, numbered by run: a cached answer repeats its number.
#[tool(read_only, idempotent)]
async fn report(Extension(tenant): Extension<Tenant>) -> String {
    let run = REPORT_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    format!("report of {} (run {run})", tenant.0)
}

/// The client's own name, numbered by run.
#[tool(read_only, idempotent)]
async fn my_name(ctx: Context) -> String {
    let run = REPORT_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
    format!("{} (run {run})", ctx.client().implementation.name)
}

/// A session at 2025-11-25 from 127.0.0.1 whose client calls itself `name`.
async fn session_named(addr: &str, name: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}}});
    let response = send(addr, post(addr, None, init)).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    send(addr, post(addr, Some(&session), note)).await;
    session
}

/// The text of a `tools/call` of `tool` in `session` with `_meta`.
async fn call_text(addr: &str, session: &str, tool: &str, meta: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta}});
    let reply = body_json(send(addr, post(addr, Some(session), body)).await).await;
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text: {reply}"))
        .to_owned()
}

#[tokio::test]
async fn the_cache_never_serves_one_tenant_or_client_the_answer_of_another() {
    // The cache outside the tenant layer (added after it): it sees `_meta`, which is in its key.
    let addr = http::start(
        Server::builder()
            .tool(report)
            .tool(my_name)
            .layer(middleware::from_fn(tenant_from_meta))
            .layer(CacheLayer::new()),
    )
    .await;
    let session = session_named(&addr, "agent").await;
    let acme = call_text(&addr, &session, "report", json!({"tenant": "acme"})).await;
    assert!(acme.starts_with("report of acme"), "{acme}");
    assert_eq!(
        call_text(&addr, &session, "report", json!({"tenant": "acme"})).await,
        acme,
        "acme's second call is acme's cached answer"
    );
    let globex = call_text(&addr, &session, "report", json!({"tenant": "globex"})).await;
    assert!(globex.starts_with("report of globex"), "{globex}");
    let nobody = call_text(&addr, &session, "report", json!({})).await;
    assert!(nobody.starts_with("report of none"), "{nobody}");

    // Two clients behind one address, each in its own session: each its own answer.
    let alice = session_named(&addr, "alice").await;
    let bob = session_named(&addr, "bob").await;
    let first = call_text(&addr, &alice, "my_name", json!({})).await;
    assert!(first.starts_with("alice (run "), "{first}");
    assert_eq!(call_text(&addr, &alice, "my_name", json!({})).await, first);
    let bobs = call_text(&addr, &bob, "my_name", json!({})).await;
    assert!(
        bobs.starts_with("bob (run "),
        "never alice's answer: {bobs}"
    );
    // Stateless calls carry the client's info in `_meta`: told apart by it too.
    let stateless = |name: &str| {
        let params = json!({"name": "my_name", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}}});
        stateless_post(&addr, 9, "tools/call", params)
    };
    let text = |v: Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let carol = text(body_json(send(&addr, stateless("carol")).await).await);
    assert!(carol.starts_with("carol (run "), "{carol}");
    let dave = text(body_json(send(&addr, stateless("dave")).await).await);
    assert!(dave.starts_with("dave (run "), "{dave}");
    assert_eq!(
        text(body_json(send(&addr, stateless("carol")).await).await),
        carol
    );
}

#[tokio::test]
async fn the_cache_keys_what_a_layer_put_in_the_extensions_only_when_told() {
    // The cache inside the tenant layer (added before it): it sees the tenant only as an
    // extension. Undeclared, the call is not cached at all.
    let serve = |cache: CacheLayer| {
        http::start(
            Server::builder()
                .tool(report)
                .layer(cache)
                .layer(middleware::from_fn(tenant_from_meta)),
        )
    };
    let addr = serve(CacheLayer::new()).await;
    let session = session_named(&addr, "agent").await;
    let acme = || call_text(&addr, &session, "report", json!({"tenant": "acme"}));
    let (one, two) = (acme().await, acme().await);
    assert_ne!(one, two, "an undeclared extension: not cached");
    // Declared: keyed by the tenant (and the client), never by `_meta` or the session.
    let addr =
        serve(CacheLayer::new().vary("report", CacheVary::client().extension::<Tenant>())).await;
    let first = session_named(&addr, "agent").await;
    let second = session_named(&addr, "agent").await;
    let acme = call_text(&addr, &first, "report", json!({"tenant": "acme"})).await;
    assert_eq!(
        call_text(&addr, &second, "report", json!({"tenant": "acme"})).await,
        acme,
        "shared by the sessions of one client, as declared"
    );
    let globex = call_text(&addr, &second, "report", json!({"tenant": "globex"})).await;
    assert!(globex.starts_with("report of globex"), "{globex}");
}

#[tokio::test]
async fn error_masking_hides_internal_details_behind_a_reference() {
    /// Reads a secret file.
    #[resource("secret://file")]
    async fn secret() -> Result<String, ResourceError> {
        Err(ResourceError::Internal(
            "connection to db.internal:5432 refused".into(),
        ))
    }
    let client = Client::connect(
        Server::builder()
            .resource(secret)
            .layer(ErrorMaskingLayer::new()),
    )
    .await
    .unwrap();
    let error = client
        .request("resources/read", json!({"uri": "secret://file"}))
        .await
        .unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32603);
    assert!(!error.message.contains("db.internal"), "{}", error.message);
    let reference = error.data.as_ref().unwrap()["correlationId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(reference.len(), 16);
    assert_eq!(
        error.message,
        format!("internal error (reference {reference})")
    );
}

#[tokio::test]
async fn a_rate_limit_refuses_one_session_over_its_rate_on_stdio_while_another_is_served() {
    let service = Server::builder()
        .tool(lookup)
        .layer(
            RateLimitLayer::per_second(3)
                .key(RateKey::session())
                .methods(["tools/call"]),
        )
        .build()
        .unwrap();
    let greedy = Client::builder().connect_service(&service).await.unwrap();
    let other = Client::builder().connect_service(&service).await.unwrap();
    let mut refused = None;
    for _ in 0..4 {
        match greedy
            .request(
                "tools/call",
                json!({"name": "lookup", "arguments": {"key": "x"}}),
            )
            .await
        {
            Ok(_) => {}
            Err(error) => refused = Some(error.rpc().unwrap().clone()),
        }
    }
    let refused = refused.expect("the fourth call within a second is over the rate");
    // RateLimited (SEP-3304): an integer number of milliseconds, within the second a call
    // takes to come back.
    assert_eq!(refused.code, -32023);
    let retry = refused.data.as_ref().unwrap()["retryAfterMs"]
        .as_u64()
        .unwrap();
    assert!((1..=1000).contains(&retry), "{refused:?}");
    // Lists are not counted, and the other session has its own rate.
    greedy.list_tools().await.unwrap();
    for _ in 0..3 {
        other
            .call_tool("lookup", json!({"key": "y"}))
            .await
            .unwrap();
    }
}

/// How many of `requests`, each sent on a connection of its own from `from`, are answered 200
/// and how many 429.
async fn served_and_limited(
    addr: &str,
    from: &str,
    requests: Vec<hyper::Request<String>>,
) -> (usize, usize) {
    let (mut served, mut limited) = (0, 0);
    for request in requests {
        match http::send_from(addr, from, request).await.status() {
            StatusCode::OK => served += 1,
            StatusCode::TOO_MANY_REQUESTS => limited += 1,
            other => panic!("neither served nor limited: {other}"),
        }
    }
    (served, limited)
}

#[tokio::test]
async fn ten_sessions_from_one_address_share_one_rate_limit() {
    // The default key: the client (its address, without OAuth), whatever its sessions.
    let addr = http::start(
        Server::builder()
            .tool(lookup)
            .layer(RateLimitLayer::new(3, Duration::from_secs(60)).methods(["tools/call"])),
    )
    .await;
    let call = |session: &str, id: u32| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"key": "k"}}});
        post(&addr, Some(session), body)
    };
    let mut sessions = Vec::new();
    for _ in 0..10 {
        sessions.push(http::initialize_from(&addr, "127.0.0.2").await);
    }
    let calls = sessions
        .iter()
        .zip(1..)
        .map(|(s, id)| call(s, id))
        .collect();
    assert_eq!(
        served_and_limited(&addr, "127.0.0.2", calls).await,
        (3, 7),
        "ten sessions of one client get the client's three calls a minute, not thirty"
    );
    // Stateless requests from the same address are the same client.
    let stateless = (20..22)
        .map(|id| stateless_lookup(&addr, id, "s"))
        .collect();
    assert_eq!(
        served_and_limited(&addr, "127.0.0.2", stateless).await,
        (0, 2)
    );
    // Another address is another client, with a rate of its own.
    let other = http::initialize_from(&addr, "127.0.0.3").await;
    let calls = (30..34).map(|id| call(&other, id)).collect();
    assert_eq!(served_and_limited(&addr, "127.0.0.3", calls).await, (3, 1));
}

#[tokio::test]
async fn a_rate_limit_per_session_still_counts_against_the_client() {
    let per_session = |client: Option<u32>| {
        let layer = RateLimitLayer::new(2, Duration::from_secs(60))
            .key(RateKey::session())
            .methods(["tools/call"]);
        match client {
            Some(calls) => layer.client_limit(calls, Duration::from_secs(60)),
            None => layer,
        }
    };
    let call = |addr: &str, session: &str, id: u32| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"key": "k"}}});
        post(addr, Some(session), body)
    };
    // Unless told otherwise, the client's sessions together get the layer's rate.
    let addr = http::start(Server::builder().tool(lookup).layer(per_session(None))).await;
    let mut calls = Vec::new();
    for id in 0..5 {
        let session = http::initialize_from(&addr, "127.0.0.2").await;
        calls.push(call(&addr, &session, id));
    }
    assert_eq!(served_and_limited(&addr, "127.0.0.2", calls).await, (2, 3));
    // With a client limit of 5, each session has its 2 and all of them 5.
    let addr = http::start(Server::builder().tool(lookup).layer(per_session(Some(5)))).await;
    let first = http::initialize_from(&addr, "127.0.0.2").await;
    let calls = (0..3).map(|id| call(&addr, &first, id)).collect();
    assert_eq!(
        served_and_limited(&addr, "127.0.0.2", calls).await,
        (2, 1),
        "a session has its own rate"
    );
    let mut calls = Vec::new();
    for id in 10..14 {
        let session = http::initialize_from(&addr, "127.0.0.2").await;
        calls.push(call(&addr, &session, id));
    }
    assert_eq!(
        served_and_limited(&addr, "127.0.0.2", calls).await,
        (3, 1),
        "the client's sessions together have the client limit"
    );
}

#[tokio::test]
async fn a_rate_limit_answers_429_with_retry_after_over_http_per_session() {
    let addr = http::start(
        Server::builder().tool(lookup).layer(
            RateLimitLayer::per_second(2)
                .key(RateKey::session())
                .client_limit(20, Duration::from_secs(1))
                .methods(["tools/call"]),
        ),
    )
    .await;
    let greedy = http::initialize(&addr).await;
    let other = http::initialize(&addr).await;
    let call = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "lookup", "arguments": {"key": "k"}}});
    for id in 1..=2 {
        let response = send(&addr, post(&addr, Some(&greedy), call(id))).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let refused = send(&addr, post(&addr, Some(&greedy), call(3))).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=30).contains(&retry_after),
        "one call comes back every 30 s"
    );
    let body = body_json(refused).await;
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -32023);
    // `Retry-After` is the body's milliseconds in whole seconds, rounded up.
    let millis = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!((1..=30_000).contains(&millis), "{body}");
    assert_eq!(millis.div_ceil(1000), retry_after, "{body}");
    for id in 4..=5 {
        let response = send(&addr, post(&addr, Some(&other), call(id))).await;
        assert_eq!(
            response.status(),
            StatusCode::OK,
            "the other session has its own rate"
        );
        assert_eq!(
            body_json(response).await["result"]["content"][0]["text"],
            "value of k"
        );
    }
    // Stateless requests have no session: with a key of sessions only, they share one rate.
    let stateless_call = |id: u32| {
        let params = json!({"name": "lookup", "arguments": {"key": "s"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}});
        stateless_post(&addr, id, "tools/call", params)
    };
    let mut statuses = Vec::new();
    for id in 10..13 {
        statuses.push(send(&addr, stateless_call(id)).await.status());
    }
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
}

// Middleware and the fair shares (issue 26): layers see a request once the transport has
// admitted it and charged its bytes, read the client as the shares do, and whatever a layer
// answers, the charge comes back.

/// A 2026-07-28 `tools/call` of `lookup` with the key `key`.
fn stateless_lookup(addr: &str, id: u32, key: &str) -> hyper::Request<String> {
    let params = json!({"name": "lookup", "arguments": {"key": key}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}});
    stateless_post(addr, id, "tools/call", params)
}

#[tokio::test]
async fn a_rate_limit_per_address_counts_the_client_a_trusted_proxy_names() {
    let peers = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = {
        let peers = Arc::clone(&peers);
        move |request: McpRequest, next: Next| {
            peers.lock().unwrap().push(request.peer_addr());
            next.run(request)
        }
    };
    let addr = http::start(
        Server::builder()
            .tool(lookup)
            .trusted_proxies(["127.0.0.2"])
            .layer(middleware::from_fn(record))
            // Two a minute: nothing refills while the test runs.
            .layer(
                RateLimitLayer::new(2, Duration::from_secs(60))
                    .key(RateKey::peer())
                    .methods(["tools/call"]),
            ),
    )
    .await;
    let via_proxy = |id: u32, client: &str| {
        let mut request = stateless_lookup(&addr, id, "p");
        request
            .headers_mut()
            .insert("x-forwarded-for", client.parse().unwrap());
        request
    };
    let status = |response: hyper::Response<hyper::body::Incoming>| response.status();
    // Through the proxy, 203.0.113.1 has its own rate...
    for id in 1..=2 {
        let served = http::send_from(&addr, "127.0.0.2", via_proxy(id, "203.0.113.1")).await;
        assert_eq!(status(served), StatusCode::OK);
    }
    let refused = http::send_from(&addr, "127.0.0.2", via_proxy(3, "203.0.113.1")).await;
    assert_eq!(status(refused), StatusCode::TOO_MANY_REQUESTS);
    // ... and 203.0.113.2, behind the same proxy, another.
    for id in 4..=5 {
        let served = http::send_from(&addr, "127.0.0.2", via_proxy(id, "203.0.113.2")).await;
        assert_eq!(
            status(served),
            StatusCode::OK,
            "not the proxy's rate, the client's"
        );
    }
    // From an address that is not a trusted proxy the header is ignored: 127.0.0.3 is its own
    // caller, though it claims to be 203.0.113.2, whose rate is spent.
    let served = http::send_from(&addr, "127.0.0.3", via_proxy(6, "203.0.113.2")).await;
    assert_eq!(status(served), StatusCode::OK);

    // The recorder is inside the rate limiter (added before it): it saw what was served.
    let peers = peers.lock().unwrap().clone();
    assert_eq!(peers.len(), 5, "{peers:?}");
    let proxied: std::net::SocketAddr = "203.0.113.1:0".parse().unwrap();
    assert_eq!(peers[0], Some(proxied), "the forwarded client, no port");
    let direct = peers[4].expect("the connection's address");
    assert_eq!(direct.ip().to_string(), "127.0.0.3");
    assert_ne!(direct.port(), 0);
}

/// Sleeps a second, within a 20 ms deadline of its own.
#[tool(layer = TimeoutLayer::new(Duration::from_millis(20)))]
async fn napping() -> String {
    tokio::time::sleep(Duration::from_secs(1)).await;
    "rested".to_owned()
}

/// Answers once a minute.
#[tool(layer = RateLimitLayer::new(1, Duration::from_secs(60)))]
async fn scarce() -> String {
    "here".to_owned()
}

/// Refuses `refused`, panics on `boom`, lets the rest through.
async fn gatekeeper(request: McpRequest, next: Next) -> McpResponse {
    match request.target() {
        Some("refused") => {
            let id = request.id().clone();
            McpResponse::error(id, ErrorObject::invalid_params("not today"))
        }
        Some("boom") => panic!("a layer that panics"),
        _ => next.run(request).await,
    }
}

#[tokio::test]
async fn the_request_budget_comes_back_whatever_a_layer_answers() {
    // 64 KiB messages and a budget for about one more than the largest message at its peak
    // (its text, its string and that string's copy): requests that left even a few of their
    // charges behind would soon find no room, and get 503.
    let addr = http::start(
        Server::builder()
            .tool(lookup)
            .tool(napping)
            .tool(scarce)
            .max_message_size(64 * 1024)
            .request_bytes_total(300 * 1024)
            .client_share(100)
            .layer(middleware::from_fn(gatekeeper)),
    )
    .await;
    let session = http::initialize(&addr).await;
    let call = |id: u32, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let mut id = 0;
    for round in 0..40 {
        for (name, expected) in [
            ("refused", StatusCode::OK),
            ("boom", StatusCode::OK),
            ("napping", StatusCode::OK),
            ("scarce", StatusCode::OK),
        ] {
            id += 1;
            let response = send(
                &addr,
                post(&addr, Some(&session), call(id, name, json!({}))),
            )
            .await;
            let status = response.status();
            let body = body_json(response).await;
            let expected = match name {
                "scarce" if round > 0 => StatusCode::TOO_MANY_REQUESTS,
                _ => expected,
            };
            assert_eq!(status, expected, "round {round}, {name}: {body}");
            match name {
                "refused" => assert_eq!(body["error"]["message"], "not today"),
                "boom" => assert_eq!(body["error"]["code"], -32603),
                "napping" => assert_eq!(body["result"]["isError"], true, "{body}"),
                _ => {}
            }
        }
        // The stateless era holds its charge on a task of its own.
        id += 1;
        let refused = {
            let params = json!({"name": "refused", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}});
            send(&addr, stateless_post(&addr, id, "tools/call", params)).await
        };
        // An error of the stateless era is its HTTP status too (-32602: 400).
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "round {round}");
        assert_eq!(body_json(refused).await["error"]["message"], "not today");
    }
    // All of it came back: the largest message the server takes still fits.
    let key = "k".repeat(60 * 1024);
    let response = send(
        &addr,
        post(
            &addr,
            Some(&session),
            call(9_999, "lookup", json!({"key": key})),
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body = body_json(response).await;
    assert!(
        body["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("value of kkk")),
        "{body}"
    );
}
