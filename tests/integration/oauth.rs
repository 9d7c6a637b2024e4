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
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use hyper::{Request, Response, StatusCode};
use mcp_runtime::prelude::*;
use mcp_runtime::{OAuth, Principal};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

use mcp_tests::http::{body_json, post, response_of, send, stateless_post};

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
    if std::env::var_os("OIDC_CACHE").is_none() {
        mcp_tests::install_component("oidc.sh");
    }
    let node = mcp_tests::node22();
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

/// The provider's client that the tests' tokens are issued to, and its secret.
const AGENT: (&str, &str) = ("agent", "agent-secret");

/// A form POST to the provider, with HTTP Basic client credentials and a DPoP proof when given.
async fn form(
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

/// The provider's answer to a client-credentials grant to `client`, for `resource`, with
/// `scope`, bound to the DPoP key of `proof` when given.
async fn client_credentials(
    issuer: &str,
    client: (&str, &str),
    resource: &str,
    scope: &str,
    proof: Option<&str>,
) -> Value {
    let fields = [
        ("grant_type", "client_credentials"),
        ("scope", scope),
        ("resource", resource),
    ];
    form(issuer, "/token", client, &fields, proof).await
}

/// The `access_token` of a token endpoint's answer, which must have one.
fn access_token(answer: &Value) -> String {
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

/// A real access token from the provider: client credentials of [`AGENT`], for `resource`,
/// with `scope`.
async fn token(issuer: &str, resource: &str, scope: &str) -> String {
    token_of(issuer, AGENT, resource, scope).await
}

/// [`token`] from the client credentials of `client` (another principal than [`AGENT`]).
async fn token_of(issuer: &str, client: (&str, &str), resource: &str, scope: &str) -> String {
    access_token(&client_credentials(issuer, client, resource, scope, None).await)
}

/// The `Authorization` value that carries `token` as a bearer token.
fn bearer(token: &str) -> String {
    format!("Bearer {token}")
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

/// [`signed`] with the provider's own key and a plain header: a token it could have issued.
async fn own_signed(issuer: &str, claims: Value) -> String {
    signed(issuer, claims, "own", json!({})).await
}

/// The claims of a token issued by `issuer` for `aud` to the client `subject` (its own
/// principal) with `scope`, valid for ten minutes from now.
fn claims(issuer: &str, aud: impl serde::Serialize, subject: &str, scope: &str) -> Value {
    json!({"iss": issuer, "aud": aud, "sub": subject, "client_id": subject,
           "scope": scope, "iat": now(), "exp": now() + 600})
}

/// The `Authorization` value of a token the provider signs for `subject`, with `notes:read`.
async fn bearer_for(issuer: &str, resource: &str, subject: &str) -> String {
    bearer(&own_signed(issuer, claims(issuer, resource, subject, "notes:read")).await)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The server `server` makes (given the URL of the resource it protects, `http://{addr}{path}`)
/// served on a free port, once ready: its address and that URL.
async fn serve(path: &str, server: impl FnOnce(&str) -> Server) -> (String, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}{path}");
    let service = server(&resource).build().unwrap();
    service.ready().await;
    tokio::spawn(async move {
        service
            .serve_http_on(listener, std::future::pending())
            .await
    });
    (addr, resource)
}

/// An OAuth server on a free port, serving `/mcp` (or `path`) and the legacy transport.
async fn start(
    issuer: &str,
    path: &str,
    configure: impl FnOnce(OAuth) -> OAuth,
) -> (String, String) {
    serve(path, |resource| {
        let oauth = configure(
            OAuth::new(resource)
                .authorization_server(issuer)
                .scopes_supported(["notes:read", "notes:write"]),
        );
        Server::builder()
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
    })
    .await
}

/// An OAuth server with nothing beyond `oauth` for `issuer` and what `server` adds.
async fn serve_oauth(issuer: &str, server: impl FnOnce(Server) -> Server) -> (String, String) {
    serve("/mcp", |resource| {
        server(Server::builder()).oauth(OAuth::new(resource).authorization_server(issuer))
    })
    .await
}

/// How a request carries its token.
#[derive(Clone, Copy)]
enum Carry<'a> {
    None,
    Header(&'a str),
    Query(&'a str),
}

/// `request`, sent to `path` instead of `/mcp`, with its token carried as `carry` says.
fn carrying(mut request: Request<String>, path: &str, carry: Carry<'_>) -> Request<String> {
    let uri = match carry {
        Carry::Query(token) => format!("{path}?access_token={token}"),
        _ => path.to_owned(),
    };
    *request.uri_mut() = uri.parse().unwrap();
    if let Carry::Header(value) = carry {
        request
            .headers_mut()
            .insert("authorization", value.parse().unwrap());
    }
    request
}

/// A handshake-era `initialize` request.
fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "oauth-test", "version": "1"}}})
}

/// A JSON-RPC request.
fn rpc(id: u32, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A handshake-era `initialize` POST.
fn handshake(addr: &str, path: &str, carry: Carry<'_>) -> Request<String> {
    carrying(post(addr, None, initialize()), path, carry)
}

/// A 2026-07-28 stateless POST of `method` with `params`, to which the `_meta` envelope (no
/// client capabilities) is added unless they carry their own.
fn stateless(
    addr: &str,
    path: &str,
    carry: Carry<'_>,
    method: &str,
    mut params: Value,
) -> Request<String> {
    params
        .as_object_mut()
        .expect("params are an object")
        .entry("_meta")
        .or_insert_with(|| {
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {}})
        });
    carrying(stateless_post(addr, 1, method, params), path, carry)
}

/// A 2026-07-28 stateless `tools/call`.
fn stateless_call(addr: &str, path: &str, carry: Carry<'_>, tool: &str) -> Request<String> {
    let arguments = if tool == "whoami" {
        json!({})
    } else {
        json!({"text": "hi"})
    };
    let params = json!({"name": tool, "arguments": arguments});
    stateless(addr, path, carry, "tools/call", params)
}

/// The response to a stateless call of `tool` on `/mcp` with the `Authorization` value `auth`.
async fn call_as(addr: &str, auth: &str, tool: &str) -> Response<Incoming> {
    send(
        addr,
        stateless_call(addr, "/mcp", Carry::Header(auth), tool),
    )
    .await
}

/// A handshake-era request in `session` (or none) with `auth`.
fn in_session(addr: &str, session: Option<&str>, auth: &str, body: Value) -> Request<String> {
    let mut request = post(addr, session, body);
    let headers = request.headers_mut();
    headers.insert(
        "mcp-protocol-version",
        HeaderValue::from_static("2025-11-25"),
    );
    headers.insert("authorization", auth.parse().unwrap());
    request
}

/// The session a handshake-era `initialize` answered with.
fn session_id(response: &Response<Incoming>) -> String {
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// A GET of the legacy transport's `/sse` stream, with `auth` when given.
fn sse(addr: &str, auth: Option<&str>) -> Request<String> {
    let mut builder = Request::get("/sse")
        .header("host", addr)
        .header("accept", "text/event-stream");
    if let Some(auth) = auth {
        builder = builder.header("authorization", auth);
    }
    builder.body(String::new()).unwrap()
}

/// The first `WWW-Authenticate` challenge, or nothing.
fn challenge(response: &Response<Incoming>) -> String {
    challenges(response).into_iter().next().unwrap_or_default()
}

/// Every `WWW-Authenticate` challenge, in order.
fn challenges(response: &Response<Incoming>) -> Vec<String> {
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

/// The text of the first content block of a response's result.
async fn text_of(response: Response<Incoming>) -> Value {
    body_json(response).await["result"]["content"][0]["text"].clone()
}

#[tokio::test]
async fn the_hostile_token_table_in_both_eras() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", |o| o).await;
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");

    let good = token(issuer, &resource, "notes:read notes:write").await;
    let read_only = bearer(&token(issuer, &resource, "notes:read").await);
    let other_resource =
        bearer(&token(issuer, "http://127.0.0.1:9/mcp", "notes:read notes:write").await);
    let base = claims(issuer, &resource, "agent", "notes:read notes:write");
    let with = |patch: Value| {
        let mut claims = base.clone();
        for (k, v) in patch.as_object().unwrap() {
            claims[k] = v.clone();
        }
        claims
    };
    let own = async |claims: Value| bearer(&own_signed(issuer, claims).await);
    let expired = own(with(json!({"iat": now() - 7200, "exp": now() - 3600}))).await;
    let not_yet = own(with(json!({"nbf": now() + 3600}))).await;
    let wrong_issuer = own(with(json!({"iss": "http://127.0.0.1:1"}))).await;
    let wrong_audience = own(with(json!({"aud": "https://other.example/mcp"}))).await;
    let unknown_kid = bearer(
        &signed(
            issuer,
            base.clone(),
            "other",
            json!({"kid": "rotated-away"}),
        )
        .await,
    );
    let hs256 = bearer(&signed(issuer, base.clone(), "hs256-public", json!({})).await);
    // A control: the provider's key and these claims are accepted, so each row fails only on
    // what it changes.
    let control = own(base.clone()).await;
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let none = bearer(&format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "at+jwt"})),
        good.split('.').nth(1).unwrap()
    ));
    let tampered = {
        let (head, signature) = good.rsplit_once('.').unwrap();
        let mut signature: Vec<char> = signature.chars().collect();
        let middle = signature.len() / 2;
        signature[middle] = if signature[middle] == 'A' { 'B' } else { 'A' };
        bearer(&format!(
            "{head}.{}",
            signature.into_iter().collect::<String>()
        ))
    };
    let authorized = bearer(&good);

    // (row, how the token travels, status, the `error` of the challenge)
    type Row<'a> = (&'a str, Carry<'a>, StatusCode, Option<&'a str>);
    fn malformed<'a>(row: &'a str, header: &'a str) -> Row<'a> {
        let error = Some("invalid_request");
        (row, Carry::Header(header), StatusCode::BAD_REQUEST, error)
    }
    fn invalid<'a>(row: &'a str, header: &'a str) -> Row<'a> {
        let error = Some("invalid_token");
        (row, Carry::Header(header), StatusCode::UNAUTHORIZED, error)
    }
    let table: Vec<Row<'_>> = vec![
        ("no token", Carry::None, StatusCode::UNAUTHORIZED, None),
        malformed("malformed header: Bearer alone", "Bearer"),
        malformed("malformed header: two words", "Bearer a b"),
        invalid("expired", &expired),
        invalid("not yet valid", &not_yet),
        invalid("wrong issuer", &wrong_issuer),
        invalid("wrong audience", &wrong_audience),
        invalid("a token for another resource", &other_resource),
        invalid("alg none", &none),
        invalid("HS256 signed with the public key", &hs256),
        invalid("unknown kid", &unknown_kid),
        invalid("tampered signature", &tampered),
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
        let response = call_as(&addr, &authorized, "whoami").await;
        assert_eq!(response.status(), StatusCode::OK, "after {row}");
        assert_eq!(text_of(response).await, "agent");
    }

    // `subscriptions/listen` (2026-07-28) is a POST like any other: no token, no stream.
    let listen = |carry| {
        let params = json!({"notifications": {"toolsListChanged": true}});
        stateless(&addr, "/mcp", carry, "subscriptions/listen", params)
    };
    let response = send(&addr, listen(Carry::None)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("resource_metadata="));
    let response = send(&addr, listen(Carry::Header(&expired))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = send(&addr, listen(Carry::Header(&authorized))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");

    // The control token (same key, same claims as the forged rows) is accepted.
    let response = call_as(&addr, &control, "write_note").await;
    assert_eq!(response.status(), StatusCode::OK);

    // A missing scope: 403 naming the scope, in both eras, and the handler never ran.
    let response = call_as(&addr, &read_only, "write_note").await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let value = challenge(&response);
    assert!(value.contains("error=\"insufficient_scope\""), "{value}");
    assert!(value.contains("scope=\"notes:write\""), "{value}");
    assert!(
        value.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{value}"
    );

    let response = send(&addr, handshake(&addr, "/mcp", Carry::Header(&read_only))).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = session_id(&response);
    let call = |auth: &str| {
        let params = json!({"name": "write_note", "arguments": {"text": "hi"}});
        in_session(&addr, Some(&session), auth, rpc(2, "tools/call", params))
    };
    let response = send(&addr, call(&read_only)).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(challenge(&response).contains("scope=\"notes:write\""));
    // Step-up: the same session with a token that has the scope (the same principal).
    let response = send(&addr, call(&authorized)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        text_of(response).await,
        "agent wrote hi with notes:read,notes:write"
    );

    // The legacy HTTP+SSE transport is protected too.
    let response = send(&addr, sse(&addr, None)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("resource_metadata="));
    let response = send(&addr, sse(&addr, Some(&expired))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = send(&addr, sse(&addr, Some(&authorized))).await;
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
    let header = bearer(&opaque);
    let both_eras = || {
        [
            (
                "handshake era",
                handshake(&addr, "/opaque/mcp", Carry::Header(&header)),
            ),
            (
                "2026-07-28",
                stateless_call(&addr, "/opaque/mcp", Carry::Header(&header), "write_note"),
            ),
        ]
    };
    for (era, request) in both_eras() {
        let response = send(&addr, request).await;
        assert_eq!(response.status(), StatusCode::OK, "{era}");
    }
    // A token for another resource is active at the provider, but not for this server.
    let elsewhere = bearer(&token(issuer, "http://127.0.0.1:9/opaque/mcp", "notes:read").await);
    let response = send(
        &addr,
        handshake(&addr, "/opaque/mcp", Carry::Header(&elsewhere)),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    let revocation = [("token", opaque.as_str())];
    let revoked = form(issuer, "/token/revocation", AGENT, &revocation, None).await;
    assert_eq!(revoked["status"], 200, "{revoked}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (era, request) in both_eras() {
        let response = send(&addr, request).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{era}");
        assert!(
            challenge(&response).contains("error=\"invalid_token\""),
            "{era}"
        );
    }
}

#[tokio::test]
async fn server_resource_and_prompt_scopes_and_sessions_bound_to_their_principal() {
    let provider = provider().await;
    let issuer = &provider.issuer;
    let (addr, resource) = start(issuer, "/mcp", |o| o).await;
    let writer = bearer(&token(issuer, &resource, "notes:read notes:write").await);
    let admin = bearer(&token(issuer, &resource, "notes:read notes:write admin").await);
    let reader = bearer(&token(issuer, &resource, "notes:read").await);
    let mallory_claims = claims(issuer, &resource, "mallory", "notes:read notes:write admin");
    let mallory = bearer(&own_signed(issuer, mallory_claims).await);

    let response = send(&addr, in_session(&addr, None, &reader, initialize())).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = session_id(&response);
    let in_this_session = |auth: &str, body: Value| in_session(&addr, Some(&session), auth, body);

    // `#[server(scopes)]` adds to the item's own: the 403 names both.
    let purge = rpc(1, "tools/call", json!({"name": "purge", "arguments": {}}));
    let response = send(&addr, in_this_session(&writer, purge.clone())).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("scope=\"notes:write admin\""),
        "{}",
        challenge(&response)
    );
    let response = send(&addr, in_this_session(&admin, purge)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(text_of(response).await, "purged");

    // Resources and prompts declare theirs too.
    for (method, params) in [
        ("resources/read", json!({"uri": "notes://secret"})),
        ("prompts/get", json!({"name": "draft"})),
    ] {
        let response = send(
            &addr,
            in_this_session(&reader, rpc(2, method, params.clone())),
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{method}");
        assert!(
            challenge(&response).contains("scope=\"notes:write\""),
            "{method}"
        );
        let response = send(&addr, in_this_session(&writer, rpc(3, method, params))).await;
        assert_eq!(response.status(), StatusCode::OK, "{method}");
        assert!(body_json(response).await["result"].is_object(), "{method}");
    }

    // The session is the agent's: another principal's valid token does not find it.
    let ping = rpc(4, "ping", json!({}));
    let response = send(&addr, in_this_session(&mallory, ping.clone())).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = send(&addr, in_this_session(&reader, ping)).await;
    assert_eq!(response.status(), StatusCode::OK);

    // The legacy transport: the stream's session is bound the same way, and scopes are checked
    // on each POST.
    let response = send(&addr, sse(&addr, Some(&reader))).await;
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
    let write = rpc(
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
    // The names (or URIs) in a stateless `method` list's `key`, sorted.
    let listed = async |addr: &str, auth: &str, method: &str, key: &str, field: &str| {
        let request = stateless(addr, "/mcp", Carry::Header(auth), method, json!({}));
        let result = body_json(send(addr, request).await).await;
        let mut names: Vec<String> = result["result"][key]
            .as_array()
            .unwrap_or_else(|| panic!("{result}"))
            .iter()
            .map(|i| i[field].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let tools = async |addr, auth| listed(addr, auth, "tools/list", "tools", "name").await;
    let resources =
        async |addr, auth| listed(addr, auth, "resources/list", "resources", "uri").await;
    let reader = bearer(&token(issuer, &resource, "notes:read").await);
    let admin = bearer(&token(issuer, &resource, "notes:read notes:write admin").await);
    assert_eq!(tools(&addr, &reader).await, ["whoami"]);
    assert_eq!(
        tools(&addr, &admin).await,
        ["purge", "whoami", "write_note"]
    );
    let prompts = listed(&addr, &reader, "prompts/list", "prompts", "name").await;
    assert!(prompts.is_empty());
    assert!(resources(&addr, &reader).await.is_empty());
    assert_eq!(resources(&addr, &admin).await, ["notes://secret"]);
    // Off by default: the same token sees everything on a server that does not hide.
    let other = bearer(&token(issuer, &shown_resource, "notes:read").await);
    assert_eq!(
        tools(&shown, &other).await,
        ["purge", "whoami", "write_note"]
    );
    assert_eq!(resources(&shown, &other).await, ["notes://secret"]);
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
    let good = bearer(&token(issuer, &resource, "notes:read").await);
    assert_eq!(
        call_as(&addr, &good, "whoami").await.status(),
        StatusCode::OK
    );
    let claims = claims(issuer, &resource, "agent", "notes:read");
    let rotated = bearer(&signed(issuer, claims, "other", json!({"kid": "test-key-2"})).await);
    // Not published yet: refused; past the interval since the first fetch, this unknown kid
    // fetches the JWKS again, which has nothing new.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(
        call_as(&addr, &rotated, "whoami").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let request = Request::post("/test/rotate")
        .header("host", authority(issuer))
        .body(String::new())
        .unwrap();
    send(authority(issuer), request).await;
    // Published now, but the last fetch was moments ago: not fetched again yet.
    assert_eq!(
        call_as(&addr, &rotated, "whoami").await.status(),
        StatusCode::UNAUTHORIZED
    );
    tokio::time::sleep(Duration::from_millis(2200)).await;
    // Past the interval, the unknown kid fetches the JWKS again and the new key verifies.
    let response = call_as(&addr, &rotated, "whoami").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(text_of(response).await, "agent");
    // The old key still works.
    assert_eq!(
        call_as(&addr, &good, "whoami").await.status(),
        StatusCode::OK
    );
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
    let answer = client_credentials(issuer, AGENT, resource, scope, Some(&proof)).await;
    assert_eq!(answer["token_type"], "DPoP", "{answer}");
    access_token(&answer)
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
    let response = call_as(&addr, &bearer(&bound), "whoami").await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("error=\"invalid_token\""));
    let unbound = token(issuer, &resource, "notes:read notes:write").await;
    let response = send(&addr, with_dpop(call(), &unbound, Some(&proof(&unbound)))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenges(&response)[1].contains("error=\"invalid_token\""));
    // The unbound token is still good as a bearer token here.
    let response = call_as(&addr, &bearer(&unbound), "whoami").await;
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
    let response = call_as(&plain, &bearer(&bound), "whoami").await;
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
    let response = call_as(&addr, &bearer(&unbound), "whoami").await;
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
    let (addr, resource) = serve_oauth(issuer, |s| s.tool(chore).max_live_tasks(20)).await;
    let attacker = bearer_for(issuer, &resource, "attacker").await;
    let victim = bearer_for(issuer, &resource, "victim").await;
    let stateless = |auth: &str| {
        let params = json!({"name": "chore", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities":
                          {"extensions": {"io.modelcontextprotocol/tasks": {}}}}});
        stateless(&addr, "/mcp", Carry::Header(auth), "tools/call", params)
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
    let response = send(&addr, in_session(&addr, None, &attacker, initialize())).await;
    let session = session_id(&response);
    let task_call = rpc(
        2,
        "tools/call",
        json!({"name": "chore", "arguments": {}, "task": {}}),
    );
    let refused = response_of(
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
    let response = send(&addr, in_session(&addr, None, &victim, initialize())).await;
    let theirs = session_id(&response);
    let served = response_of(&addr, in_session(&addr, Some(&theirs), &victim, task_call)).await;
    assert_eq!(served["result"]["task"]["status"], "completed", "{served}");
    let list = rpc(3, "tasks/list", json!({}));
    let listed = response_of(&addr, in_session(&addr, Some(&theirs), &victim, list)).await;
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
    serve("/mcp", |resource| {
        let mut oauth = OAuth::new(resource).authorization_server(issuer);
        if expose {
            oauth = oauth.expose_access_token();
        }
        Server::builder().tool(forwarding::echo_json).oauth(oauth)
    })
    .await
}

/// What the forwarding tool answered for a stateless call carrying `token`.
async fn forwarded(addr: &str, token: &str) -> (bool, String) {
    let params = json!({"name": "forwarding_echo_json", "arguments": {"name": "n"}});
    let request = stateless(
        addr,
        "/mcp",
        Carry::Header(&bearer(token)),
        "tools/call",
        params,
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
    // A token issued for this server and the API.
    let for_both = async |resource: &str| {
        let claims = claims(issuer, [resource, API_AUDIENCE], "agent", "notes:read");
        own_signed(issuer, claims).await
    };
    let (addr, resource) = start_forwarding(issuer, true).await;
    // Issued for this server and the API: forwarded as it came.
    let both = for_both(&resource).await;
    let (failed, text) = forwarded(&addr, &both).await;
    assert!(!failed, "{text}");
    let seen: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(seen["headers"]["authorization"], bearer(&both));
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
    let both = for_both(&resource).await;
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

/// The caller's profile for the tenant its `_meta` names.
#[tool(read_only, idempotent)]
async fn tenant_profile(ctx: Context, caller: Principal) -> String {
    let run = PROFILE_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    let tenant = ctx
        .meta()
        .0
        .get("tenant")
        .and_then(Value::as_str)
        .unwrap_or("none");
    format!(
        "{} of {tenant} (run {run})",
        caller.subject().unwrap_or("?")
    )
}

#[tokio::test]
async fn a_rate_limit_per_principal_and_a_cache_that_never_crosses_principals() {
    use mcp_runtime::middleware::{CacheLayer, RateKey, RateLimitLayer};
    let provider = provider().await;
    let issuer = &provider.issuer;
    // A rate limit per principal and a response cache.
    let (addr, resource) = serve_oauth(issuer, |s| {
        s.tool(profile)
            .tool(tenant_profile)
            .tool(whoami)
            .layer(CacheLayer::new())
            .layer(
                // Three `whoami` a minute: nothing refills while the test runs, however slow
                // the machine.
                RateLimitLayer::new(3, std::time::Duration::from_secs(60))
                    .key(RateKey::principal())
                    .methods(["tools/call"]),
            )
    })
    .await;
    let alice = bearer_for(issuer, &resource, "alice").await;
    let bob = bearer_for(issuer, &resource, "bob").await;
    let ask = |tool, auth| call_as(&addr, auth, tool);

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

    // One principal's tenants (a `_meta` member a handler reads) are told apart too (carol's
    // calls, with a rate of her own).
    let carol = bearer_for(issuer, &resource, "carol").await;
    let tenant_call = |tenant: &str| {
        let params = json!({"name": "tenant_profile", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "tenant": tenant}});
        carrying(
            stateless_post(&addr, 1, "tools/call", params),
            "/mcp",
            Carry::Header(&carol),
        )
    };
    let acme = text(&body_json(send(&addr, tenant_call("acme")).await).await);
    assert!(acme.starts_with("carol of acme (run "), "{acme}");
    let globex = text(&body_json(send(&addr, tenant_call("globex")).await).await);
    assert!(
        globex.starts_with("carol of globex (run "),
        "never acme's answer: {globex}"
    );
    assert_eq!(
        text(&body_json(send(&addr, tenant_call("acme")).await).await),
        acme
    );

    // The rate: alice has used her three calls (the cached one counts: the limit is outside the
    // cache); bob has used one.
    assert_eq!(ask("whoami", &alice).await.status(), StatusCode::OK);
    let refused = ask("whoami", &alice).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(body_json(refused).await["error"]["code"], -32023);
    for _ in 0..2 {
        let served = ask("whoami", &bob).await;
        assert_eq!(
            served.status(),
            StatusCode::OK,
            "another principal at full rate"
        );
    }
}

#[tokio::test]
async fn with_oauth_the_fair_shares_are_a_principals_wherever_it_connects_from() {
    use mcp_tests::http::send_from;
    let provider = provider().await;
    let issuer = &provider.issuer;
    // Eight sessions in all: two for each principal.
    let (addr, resource) = serve_oauth(issuer, |s| s.tool(whoami).max_sessions(8)).await;
    let attacker = bearer(&token(issuer, &resource, "notes:read").await);
    let server_client = ("mcp-server", "mcp-server-secret");
    let victim = bearer(&token_of(issuer, server_client, &resource, "notes:read").await);
    let init = |auth: &str| in_session(&addr, None, auth, initialize());
    // The attacker's principal gets two sessions, from two addresses; from a third it is still
    // the same client, at its share.
    for from in ["127.0.0.2", "127.0.0.4"] {
        let response = send_from(&addr, from, init(&attacker)).await;
        assert_eq!(response.status(), StatusCode::OK, "{from}");
    }
    let refused = send_from(&addr, "127.0.0.5", init(&attacker)).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Another principal on the attacker's own address is another client: served.
    let response = send_from(&addr, "127.0.0.2", init(&victim)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = session_id(&response);
    let call = rpc(1, "tools/call", json!({"name": "whoami", "arguments": {}}));
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
    let everything =
        StdioCommand::new(mcp_tests::example_binary("everything")).stderr(Stderr::Null);
    let (addr, resource) = serve("/mcp", |resource| {
        Server::builder()
            .mount(
                "vault",
                Server::builder().tool(whoami).required_scopes(["admin"]),
            )
            .proxy("ev", Upstream::command(everything).scopes(["notes:write"]))
            .oauth(
                OAuth::new(resource)
                    .authorization_server(issuer)
                    .scopes_supported(["notes:read", "notes:write", "admin"]),
            )
    })
    .await;
    let reader = bearer(&token(issuer, &resource, "notes:read").await);
    let writer = bearer(&token(issuer, &resource, "notes:read notes:write").await);
    let response = call_as(&addr, &reader, "ev_test_simple_text").await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("scope=\"notes:write\""),
        "{}",
        challenge(&response)
    );
    let response = call_as(&addr, &writer, "ev_test_simple_text").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(body_json(response).await["result"]["content"].is_array());
    let response = call_as(&addr, &writer, "vault_whoami").await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&response).contains("admin"),
        "{}",
        challenge(&response)
    );
}
